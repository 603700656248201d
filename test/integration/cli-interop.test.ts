import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { beforeAll, expect, test } from 'vitest';
import { type MetricObject, readMetrics } from '../../src/reader.js';
import { runCliChild } from '../support/cli-child.js';
import { duckdbRows } from '../support/duckdb.js';
import { type Exported, exportEveryCombination } from '../support/exported-objects.js';
import { type Canonical, decodeJsonExact, decodeProtobuf } from '../support/otlp-reference.js';
import { recordedRequest } from '../support/recorded-request.js';
import {
  connection,
  describeS3,
  s3Environment,
  s3Server,
  skipReason,
  withS3,
} from '../support/s3.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

if (!s3Server) console.warn(`interoperability tests skipped: ${skipReason}`);

/** Runs a standard tool over `input`; its stdout. */
function tool(command: string, args: string[], input: Uint8Array): Buffer {
  const result = spawnSync(command, args, { input, maxBuffer: 64 * 1024 * 1024 });
  if (result.error !== undefined) throw result.error;
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr.toString()}`);
  return result.stdout;
}

describeS3('stored objects and CLI output work with standard tools', () => {
  let client: S3Client;
  let bucket: string;
  let dir: string;
  let objects: MetricObject[];
  let exported: Exported[];

  withS3('interop', (s) => ({ client, bucket } = s));
  beforeAll(async () => {
    dir = await makeTempDir('otel-s3-interop-');
    exported = await exportEveryCombination(bucket, 'interop', [
      ['otlp-json', 'zstd'],
      ['otlp-json', 'gzip'],
      ['otlp-json', 'none'],
      ['otlp-proto', 'zstd'],
      ['otlp-proto', 'gzip'],
    ]);
    objects = [];
    for await (const o of readMetrics({ bucket, prefix: 'interop', ...connection() })) {
      objects.push(o);
    }
    return () => removeDir(dir);
  });

  const stored = (suffix: string) => {
    const object = objects.find((o) => o.key.endsWith(suffix));
    if (object === undefined) throw new Error(`no ${suffix} object`);
    return object;
  };
  /** The request the SDK handed to the exporter that wrote the `suffix` object, as the official serializer writes it. */
  const recorded = (suffix: string): Canonical => {
    const format = suffix.startsWith('.json') ? 'otlp-json' : 'otlp-proto';
    const compression = suffix.endsWith('.zst') ? 'zstd' : suffix.endsWith('.gz') ? 'gzip' : 'none';
    const e = exported.find((x) => x.format === format && x.compression === compression);
    if (e === undefined) throw new Error(`nothing exported as ${suffix}`);
    return recordedRequest(e.recorded);
  };

  // What the tools give back is read by the reference decoders, not by src/, and compared with
  // what the SDK recorded.
  test('the zstd tool decompresses .zst objects (JSON and protobuf) to the recorded request', () => {
    const json = tool('zstd', ['-d', '-c'], stored('.json.zst').bytes).toString('utf8');
    expect(decodeJsonExact(json)).toEqual(recorded('.json.zst'));
    const proto = tool('zstd', ['-d', '-c'], stored('.binpb.zst').bytes);
    expect(decodeProtobuf(proto)).toEqual(recorded('.binpb.zst'));
  });

  test('gzip -d decompresses .gz objects (JSON and protobuf) to the recorded request', () => {
    const json = tool('gzip', ['-d', '-c'], stored('.json.gz').bytes).toString('utf8');
    expect(decodeJsonExact(json)).toEqual(recorded('.json.gz'));
    const proto = tool('gzip', ['-d', '-c'], stored('.binpb.gz').bytes);
    expect(decodeProtobuf(proto)).toEqual(recorded('.binpb.gz'));
  });

  test('a JSON object is a valid JSON-lines file: one request per line, newline-terminated', () => {
    for (const suffix of ['.json', '.json.zst', '.json.gz']) {
      const object = stored(suffix);
      const raw =
        suffix === '.json'
          ? Buffer.from(object.bytes)
          : tool(suffix.endsWith('.zst') ? 'zstd' : 'gzip', ['-d', '-c'], object.bytes);
      const text = raw.toString('utf8');
      expect(text.endsWith('\n'), suffix).toBe(true);
      const lines = text.slice(0, -1).split('\n');
      expect(lines, suffix).toHaveLength(1);
      const request = JSON.parse(lines[0] as string);
      expect(Object.keys(request)).toEqual(['resourceMetrics']);
      expect(decodeJsonExact(lines[0] as string)).toEqual(recorded(suffix));
    }
  });

  test('DuckDB queries `otel-s3 points` as CSV and as JSON lines: the sum of a counter per attribute', async () => {
    const env = {
      ...s3Environment(),
      OTEL_EXPORTER_S3_REGION: (s3Server as NonNullable<typeof s3Server>).region,
    };
    const args = ['points', '--bucket', bucket, '--prefix', 'interop', '--since', '1h'];
    const [csv, jsonl] = await Promise.all([
      runCliChild([...args, '--format', 'csv'], { cwd: dir, env }),
      runCliChild([...args, '--format', 'jsonl'], { cwd: dir, env }),
    ]);
    expect([csv.code, jsonl.code]).toEqual([0, 0]);
    await writeFile(join(dir, 'points.csv'), csv.stdout);
    await writeFile(join(dir, 'points.jsonl'), jsonl.stdout);

    // Five objects, each with http.requests 12 on /a and 1 on /b.
    const expected = [
      { route: '/a', total: 5 * 12, points: 5 },
      { route: '/b', total: 5 * 1, points: 5 },
    ];
    const fromCsv = await duckdbRows(`
      SELECT json_extract_string(attributes, '$.route') AS route, sum(value) AS total, count(*)::INTEGER AS points
      FROM read_csv('${join(dir, 'points.csv')}')
      WHERE metric = 'http.requests' AND type = 'counter'
      GROUP BY route ORDER BY route`);
    expect(fromCsv).toEqual(expected);
    const fromJson = await duckdbRows(`
      SELECT attributes.route AS route, sum(value) AS total, count(*)::INTEGER AS points
      FROM read_json('${join(dir, 'points.jsonl')}')
      WHERE metric = 'http.requests' AND type = 'counter'
      GROUP BY route ORDER BY route`);
    expect(fromJson).toEqual(expected);

    // The histogram columns come through too: count and sum of http.latency per service.
    const latency = await duckdbRows(`
      SELECT resource."service.name" AS service, sum(count)::INTEGER AS count, sum("sum")::DOUBLE AS total
      FROM read_json('${join(dir, 'points.jsonl')}')
      WHERE metric = 'http.latency' GROUP BY service ORDER BY service`);
    expect(latency).toHaveLength(5);
    expect(latency.every((r) => r.count === 3 && r.total === 333)).toBe(true);
  });
});
