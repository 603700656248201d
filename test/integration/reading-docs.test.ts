/**
 * The DuckDB query of docs/reading.md over `otel-s3 points --format jsonl`, run verbatim, and
 * checked against the amounts this test added to the counter through the SDK: two services with
 * the same routes, one of them restarted (a second run of its counters, from 0, with a new start).
 * And its `otel-s3 cat | jq` command, run verbatim with jq, on the same prefix, which holds
 * spans and log records too, as a prefix of S3Exporters does.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { S3LogRecordExporter, S3MetricExporter, S3SpanExporter } from '../../src/index.js';
import { lines, runCliChild } from '../support/cli-child.js';
import {
  connection,
  describeS3,
  freshBucket,
  s3Environment,
  s3Server,
  testClient,
} from '../support/s3.js';
import { collectingProvider } from '../support/service.js';
import { syntheticLogRecords, syntheticSpans } from '../support/signal-driver.js';

const DOCS = new URL('../../docs/reading.md', import.meta.url);

/** The SQL of the documented `duckdb -c "..."` command, with the shell's `\"` undone. */
async function documentedSql(): Promise<string> {
  const text = await readFile(DOCS, 'utf8');
  const match = /^duckdb -c "\n([\s\S]*?)"$/m.exec(text);
  if (match === null) throw new Error('docs/reading.md has no duckdb -c "..." command');
  return (match[1] as string).replaceAll('\\"', '"');
}

/** The documented `npx otel-s3 cat ... | jq ... '<filter>'` line: the CLI's and jq's arguments. */
async function documentedCatJq(): Promise<{ cli: string[]; jq: string[] }> {
  const text = await readFile(DOCS, 'utf8');
  const match = /^npx otel-s3 (cat[^|\n]*) \| jq ((?:-\w+ )*)'([^'\n]*)'$/m.exec(text);
  if (match === null) throw new Error("docs/reading.md has no npx otel-s3 cat ... | jq '...' line");
  const words = (text: string) => text.split(' ').filter((w) => w !== '');
  return { cli: words(match[1] as string), jq: [...words(match[2] as string), match[3] as string] };
}

/** What each service instance adds to checkout.requests, per route, before its one export. */
const RUNS = [
  { service: 'api', requests: { '/a': 30, '/b': 60 } },
  { service: 'api', requests: { '/a': 39, '/b': 78 } }, // restarted: counts from 0 again
  { service: 'web', requests: { '/a': 690, '/b': 1380 } },
];

describeS3('the DuckDB and jq commands of docs/reading.md', () => {
  let client: S3Client;
  let dir: string;
  let bucket: string;
  const otelS3 = (args: string[]) =>
    runCliChild([...args, '--bucket', bucket, '--prefix', 'prod'], {
      cwd: dir,
      env: { ...s3Environment(), OTEL_EXPORTER_S3_REGION: s3Server?.region ?? 'us-east-1' },
    });

  beforeAll(async () => {
    client = testClient();
    bucket = await freshBucket(client, 'reading-docs');
    dir = await mkdtemp(join(tmpdir(), 'otel-s3-reading-docs-'));
    const exporter = new S3MetricExporter({ bucket, prefix: 'prod', ...connection() });
    for (const run of RUNS) {
      const { provider, collect } = collectingProvider(run.service);
      const counter = provider.getMeter('checkout').createCounter('checkout.requests');
      // Two collections per run: the query must take the last point, not add both.
      const entries = Object.entries(run.requests);
      for (const [route, n] of entries) counter.add(n - 1, { 'http.route': route });
      const first = await collect();
      await new Promise((resolve) => exporter.export(first, resolve));
      // The SDK stamps points in whole milliseconds here: collections in the same one would tie
      // for "the last point" (real export intervals are seconds apart).
      await new Promise((resolve) => setTimeout(resolve, 5));
      for (const [route] of entries) counter.add(1, { 'http.route': route });
      const rm = await collect();
      await new Promise((resolve) => exporter.export(rm, resolve));
      await provider.shutdown();
      // A restart is a new start time; make sure the clock moved on.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await exporter.shutdown();
    // Spans and log records under the same prefix, as S3Exporters stores them.
    const spans = new S3SpanExporter({ bucket, prefix: 'prod', ...connection() });
    const logs = new S3LogRecordExporter({ bucket, prefix: 'prod', ...connection() });
    await new Promise((resolve) => spans.export(syntheticSpans(2, 1), resolve));
    await new Promise((resolve) => logs.export(syntheticLogRecords(2, 1), resolve));
    await Promise.all([spans.shutdown(), logs.shutdown()]);
    const points = await otelS3(['points', '--since', '1h', '--format', 'jsonl']);
    expect([points.code, points.stderr]).toEqual([0, '']);
    await writeFile(join(dir, 'points.jsonl'), points.stdout);
  });
  afterAll(async () => {
    client?.destroy();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  test('requests per route: the sum over services and restarts of what was added', async () => {
    const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
    const connection = await db.connect();
    try {
      await connection.run(`SET file_search_path = '${dir}'`);
      const result = await connection.runAndReadAll(await documentedSql());
      const rows = result.getRowObjectsJson() as Record<string, unknown>[];
      const recorded = (route: '/a' | '/b') =>
        RUNS.reduce((total, run) => total + run.requests[route], 0);
      expect([recorded('/b'), recorded('/a')]).toEqual([1518, 759]);
      expect(rows.map((r) => [r.route, Number(r.requests)])).toEqual([
        ['/b', recorded('/b')],
        ['/a', recorded('/a')],
      ]);
    } finally {
      connection.closeSync();
      db.closeSync();
    }
  });

  test('cat | jq: the resource of each metrics request, on a prefix of all signals', async () => {
    // Else the prefix would not be one that a bare `.resourceMetrics[]` trips on.
    const all = await otelS3(['cat', '--since', '1h']);
    const kinds = new Set(lines(all.stdout).map((l) => Object.keys(JSON.parse(l)).join()));
    expect(kinds).toEqual(new Set(['resourceMetrics', 'resourceSpans', 'resourceLogs']));

    const { cli, jq } = await documentedCatJq();
    const cat = await otelS3(cli);
    expect([cat.code, cat.stderr]).toEqual([0, '']);
    const filtered = spawnSync('jq', jq, { input: cat.stdout, encoding: 'utf8' });
    expect([filtered.status, filtered.stderr]).toEqual([0, '']);
    type Resource = { attributes: { key: string; value: { stringValue?: string } }[] };
    const services = lines(filtered.stdout).map((line) => {
      const resource = JSON.parse(line) as Resource;
      return resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
    });
    expect(new Set(services)).toEqual(new Set(RUNS.map((run) => run.service)));
  });
});
