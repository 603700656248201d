import { join } from 'node:path';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { beforeAll, describe, expect, test } from 'vitest';
import type { PointRecord } from '../../../src/cli/point-record.js';
import { type CliInProcessOptions, lines, runCliInProcess } from '../../support/cli-child.js';
import {
  instrumentValues,
  rawRowOf,
  recordedValues,
  writeAtKey,
} from '../../support/reader-fixtures.js';
import {
  asParquetKeepsIt,
  catLine,
  flatPoints,
  recordedRequest,
} from '../../support/recorded-request.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { recordEveryInstrument, recordingProvider } from '../../support/service.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';

const COMPRESSIONS = ['zstd', 'gzip', 'none'] as const;
const serviceOf = (compression: string) => `lake-${compression}`;

let root: string;
/** What each service's SDK handed to its exporter, by service name. */
const recorded = new Map<string, ResourceMetrics>();

const run = (args: string[], options: CliInProcessOptions = {}) =>
  runCliInProcess([...args, '--dir', 'mirror', '--prefix', 'lake', '--object-format', 'parquet'], {
    cwd: root,
    ...options,
  });

beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-parquet-');
  for (const compression of COMPRESSIONS) {
    const s3 = new ScriptedS3();
    const exporter = scriptedExporter(s3, {
      prefix: 'lake',
      format: 'parquet',
      compression,
    });
    const { provider, exported } = recordingProvider(exporter, serviceOf(compression));
    recordEveryInstrument(provider);
    await new Promise((resolve) => setTimeout(resolve, 5)); // start and end times differ
    await provider.shutdown();
    const [rm] = exported;
    if (rm === undefined || s3.stored.size !== 1) throw new Error('expected one object stored');
    recorded.set(serviceOf(compression), rm);
    for (const [key, body] of s3.stored) await writeAtKey(join(root, 'mirror'), key, body);
  }
  return () => removeDir(root);
});

describe('otel-s3 reading Parquet objects the exporter stored', () => {
  test('cat: each file as OTLP/JSON that a strict decoder reads as the recorded points, up to the documented losses', async () => {
    const { code, stdout, stderr } = await run(['cat']);
    expect([code, stderr]).toEqual([0, '']);
    const printed = lines(stdout).map(catLine);
    expect(printed).toHaveLength(COMPRESSIONS.length);
    const service = (request: ReturnType<typeof catLine>) =>
      JSON.stringify(request).match(/"service\.name","value":\{"stringValue":"([^"]+)"/)?.[1];
    for (const request of printed) {
      const rm = recorded.get(service(request) ?? '');
      if (rm === undefined) throw new Error(`no service recorded for ${JSON.stringify(request)}`);
      expect(flatPoints(request)).toEqual(asParquetKeepsIt(recordedRequest(rm)));
    }
  });

  test('points: every value and time as recorded, times to the microsecond', async () => {
    const { code, stdout, stderr } = await run(['points', '--format', 'jsonl']);
    expect([code, stderr]).toEqual([0, '']);
    const rows = lines(stdout).map((l) => rawRowOf(JSON.parse(l) as PointRecord));
    expect(rows).toHaveLength(6 * COMPRESSIONS.length);
    for (const [service, rm] of recorded) {
      const values = instrumentValues(rows.filter((r) => r.resource['service.name'] === service));
      expect(values, service).toEqual(recordedValues(service, rm, 'micros'));
    }
  });

  test('ls and stats agree on the compression of a Parquet file', async () => {
    // Each file was written with its service's compression: stats reads the codec from the
    // footer; ls downloads nothing, so it must not claim one it cannot see in the name.
    const stats = await run(['stats', '--format', 'json']);
    expect(stats.code).toBe(0);
    const { encodings } = JSON.parse(stats.stdout) as { encodings: Record<string, number> };
    expect(encodings).toEqual({ 'parquet+zstd': 1, 'parquet+gzip': 1, 'parquet+none': 1 });
    const ls = await run(['ls', '--format', 'jsonl']);
    expect(ls.code).toBe(0);
    const listed = lines(ls.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(listed).toHaveLength(COMPRESSIONS.length);
    for (const object of listed) {
      expect(object).toMatchObject({ format: 'parquet', compression: null });
    }
  });
});
