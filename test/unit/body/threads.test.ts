/**
 * No thread that has nothing to do: where node:zlib has zstd (Node ≥ 22.15) the OTLP formats
 * compress on libuv's pool and Parquet's metrics files are written on the exporter's thread in
 * slices, starting no thread of their own; a worker starts only for zstd-napi and spans' and log
 * records' Parquet, at its first batch, and exits once idle. Threads are counted in
 * /proc/self/task, after libuv's pool is up (it starts all its threads at its first job). What a
 * fresh process starts at construction: test/integration/threads-fresh-process.test.ts.
 */
import { readdirSync } from 'node:fs';
import { gzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createBodyMaker } from '../../../src/body/index.js';
import { builtInZstd } from '../../../src/compression/zstd-engine.js';
import type { Format, S3MetricExporter } from '../../../src/index.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';
import { threadNames } from '../../support/threads.js';
import { waitFor } from '../../support/wait.js';

const threads = () => readdirSync('/proc/self/task').length;
const exporters: S3MetricExporter[] = [];
afterAll(async () => {
  for (const e of exporters) await e.shutdown();
});
beforeAll(async () => {
  // libuv's pool: started by its first job, then there for the life of the process.
  await new Promise((resolve) => gzip('warm up the pool', resolve));
});

function exporter(format: Format, compression: 'zstd' | 'gzip' | 'none' = 'zstd') {
  const made = scriptedExporter(new ScriptedS3(), {
    bucket: 'threads',
    format,
    compression,
  });
  exporters.push(made);
  return made;
}

/** The sealed columns of one gauge point. */
function oneGauge() {
  const builders = new MetricColumnBuilders();
  builders.appendRequest({
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [{ name: 'g', gauge: { dataPoints: [{ timeUnixNano: '1000', asInt: '1' }] } }],
          },
        ],
      },
    ],
  });
  return builders.seal();
}

describe.runIf(process.platform === 'linux')('threads of the exporter', () => {
  test.runIf(builtInZstd())(
    'Node ≥ 22.15: an OTLP exporter adds no thread, constructed or compressing and uploading batches',
    async () => {
      const before = threads();
      for (const [format, compression] of [
        ['otlp-json', 'zstd'],
        ['otlp-proto', 'zstd'],
        ['otlp-json', 'gzip'],
        ['otlp-proto', 'none'],
      ] as const) {
        const e = exporter(format, compression);
        expect(threads()).toBe(before);
        await exportSynthetic(e, 50, 1);
        await e.forceFlush();
        expect(e.stats().batchesUploaded).toBe(1);
        expect(threads()).toBe(before);
      }
    },
  );

  test.runIf(builtInZstd())(
    'Node ≥ 22.15: a Parquet (metrics) exporter adds no thread, constructed or making and uploading files',
    async () => {
      const before = threads();
      for (const compression of ['zstd', 'gzip', 'none'] as const) {
        const e = exporter('parquet', compression);
        expect(threads()).toBe(before);
        await exportSynthetic(e, 50, 1);
        await e.forceFlush();
        expect(e.stats().batchesUploaded).toBe(1);
        expect(threads()).toBe(before);
      }
    },
  );

  test('a Parquet body maker held to the worker starts no thread at construction; its first batch starts it', async () => {
    const before = threads();
    const maker = workerParquetMaker();
    expect(threads()).toBe(before);
    await maker.make({ columns: oneGauge(), framing: null, sha256: false, crc32: false });
    expect(threads()).toBe(before + 1);
    await maker.close();
  });

  test('the worker exits after it was idle for a while, and the next batch starts it again', async () => {
    const maker = workerParquetMaker(300);
    const columns = oneGauge;
    const before = threads();
    await maker.make({ columns: columns(), framing: null, sha256: false, crc32: false });
    expect(threads()).toBe(before + 1);
    await waitFor(
      () => threads() === before,
      5_000,
      () => `the idle worker to exit; threads: ${threadNames().join(', ')}`,
    );
    await maker.make({ columns: columns(), framing: null, sha256: false, crc32: false });
    expect(threads()).toBe(before + 1);
    await maker.close();
    // The worker's thread is joined before terminate() resolves; another thread of the process
    // (a test runner's, under load) may come and go, so this waits and names them if it fails.
    await waitFor(
      () => threads() === before,
      5_000,
      () => `one thread fewer than ${threadNames().join(', ')}`,
    );
  });
});

/** A body maker of metrics' Parquet files (zstd) held to the worker. */
function workerParquetMaker(workerIdleExitMillis?: number) {
  return createBodyMaker({
    body: 'parquet',
    signal: 'metrics',
    compression: 'zstd',
    level: 3,
    parquetThread: 'worker',
    ...(workerIdleExitMillis === undefined ? {} : { workerIdleExitMillis }),
  });
}
