/**
 * Parquet (metrics) made on the exporter's own thread, in slices (src/body/parquet-body.js
 * slicedParquetMaker): the event loop runs between the writer's steps, so a batch is many short
 * turns and not one long one; the file is the same bytes as the body worker's; a maker closed
 * while it writes abandons the file and gives the columns back.
 */
import * as zlib from 'node:zlib';
import { afterAll, describe, expect, test } from 'vitest';
import { type BodyMaker, BodyMakerError, createBodyMaker } from '../../../src/body/index.js';
import { slicedParquetMaker } from '../../../src/body/parquet-body.js';
import { STEP_ROWS } from '../../../src/parquet/steps.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { turnsWhile } from '../../support/loop-turns.js';
import { prng } from '../../support/prng.js';

/**
 * Where node:zlib has zstd (Node >= 22.15) zstd files are made in slices; on Node 20 zstd goes
 * through zstd-napi in the body worker, and gzip is the codec made in slices there.
 */
const ZLIB_ZSTD = typeof (zlib as { zstdCompress?: unknown }).zstdCompress === 'function';
const SLICED_CODEC = ZLIB_ZSTD ? 'zstd' : 'gzip';

const makers: BodyMaker[] = [];
afterAll(async () => {
  for (const m of makers) await m.close();
});

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

/**
 * `series` series of a counter, an explicit-bucket histogram and an exponential histogram (so
 * the list columns have many entries a row), `points` points each, shuffled attribute values.
 */
function batchOf(series: number, points: number, seed = 3) {
  const random = prng(seed);
  const dataPoints = (kind: 'sum' | 'histogram' | 'exp') => {
    const out: Record<string, unknown>[] = [];
    for (let s = 0; s < series; s++) {
      for (let p = 0; p < points; p++) {
        const common = {
          startTimeUnixNano: '1000',
          timeUnixNano: String(2_000 + p * 1_000 + (p % 3 === 1 ? -1_500 : 0)),
          attributes: [str('route', `/r/${s % 97}`), str('pod', `pod-${s}`)],
        };
        if (kind === 'sum') out.push({ ...common, asInt: String(Math.floor(random() * 1e6)) });
        else if (kind === 'histogram') {
          out.push({
            ...common,
            count: '10',
            sum: random() * 100,
            explicitBounds: [1, 5, 10, 50, 100, 500, 1000],
            bucketCounts: Array.from({ length: 8 }, () => String(Math.floor(random() * 9))),
          });
        } else {
          out.push({
            ...common,
            count: '40',
            scale: 3,
            zeroCount: '1',
            positive: {
              offset: Math.floor(random() * 4),
              bucketCounts: Array.from({ length: 24 }, () => String(Math.floor(random() * 5))),
            },
          });
        }
      }
    }
    return out;
  };
  const builders = new MetricColumnBuilders();
  const request = {
    resourceMetrics: [
      {
        resource: { attributes: [str('service.name', 'sliced'), str('host.name', 'h1')] },
        scopeMetrics: [
          {
            scope: { name: 'test' },
            metrics: [
              {
                name: 'requests',
                sum: {
                  dataPoints: dataPoints('sum'),
                  aggregationTemporality: 2,
                  isMonotonic: true,
                },
              },
              {
                name: 'latency',
                histogram: { dataPoints: dataPoints('histogram'), aggregationTemporality: 2 },
              },
              {
                name: 'size',
                exponentialHistogram: {
                  dataPoints: dataPoints('exp'),
                  aggregationTemporality: 2,
                },
              },
            ],
          },
        ],
      },
    ],
  };
  builders.appendRequest(
    request as unknown as Parameters<MetricColumnBuilders['appendRequest']>[0],
  );
  return builders.seal();
}

const options = { body: 'parquet', signal: 'metrics', level: 3 } as const;

describe('Parquet of metrics on the event loop, in slices', () => {
  test('the event loop runs between steps of a few thousand rows: a 12,000-row batch pauses at each step', async () => {
    const columns = batchOf(1_000, 4);
    const rows = (columns as unknown as { rows: number }).rows;
    expect(rows).toBe(12_000);
    // Slices of 0 ms: a pause after every step.
    const maker = slicedParquetMaker(
      { ...options, compression: 'gzip', zstdEngine: undefined },
      () => false,
      0,
    );
    if (maker === undefined) throw new Error('no sliced maker for metrics with gzip');
    const { value: file, turns } = await turnsWhile(() => maker.make({ columns }));
    expect(Buffer.from(file.subarray(0, 4)).toString()).toBe('PAR1');
    // At least: a pause before each of the 33 leaf columns, a pause per STEP_ROWS rows in each
    // of the plan's passes over every row (which rows are used, each row's type, its non-null
    // columns, the time order), and a pause per STEP_ROWS rows in each of the 32 leaf columns:
    // every column, not only the lists and maps, writes a large row group in steps. With steps
    // in the lists and maps only, 195. Each pause is a turn of the loop (the ticker counts more:
    // it also turns while pages are compressed on the pool).
    const perPass = Math.ceil(rows / STEP_ROWS);
    const pauses = maker.lastPauses();
    expect(pauses).toBeGreaterThanOrEqual(33 + (4 + 32) * perPass);
    expect(turns).toBeGreaterThanOrEqual(pauses);
  });

  test('with the default slice, no turn of a 30,000-row batch is long: the longest is a fraction of the file', async () => {
    const columns = batchOf(2_500, 4);
    const maker = createBodyMaker({ ...options, compression: SLICED_CODEC });
    makers.push(maker);
    expect(maker.runsIn).toBe('thread-pool');
    await maker.make({ columns: batchOf(10, 1), framing: null, sha256: false, crc32: false });
    let longest = 0;
    let last = performance.now();
    let running = true;
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const started = performance.now();
    await maker.make({ columns, framing: null, sha256: true, crc32: true });
    const total = performance.now() - started;
    running = false;
    // Slices of about 0.5 ms. Wall clock: a collection, or the other test worker and the S3
    // server taking the cores, can hold one turn for tens of milliseconds (65 ms of 205 once in
    // CI), so the bound is half the file: a file made in one or two long turns still fails it.
    expect(longest).toBeLessThan(Math.max(50, total / 2));
    expect(total).toBeGreaterThan(longest * 2);
  });

  for (const compression of ['zstd', 'gzip', 'none'] as const) {
    // Without zstd in node:zlib both makers would be the worker: nothing to compare.
    test.skipIf(compression === 'zstd' && !ZLIB_ZSTD)(
      `${compression}: the file and its checksums are the body worker's, byte for byte`,
      async () => {
        const sliced = createBodyMaker({ ...options, compression });
        const worker = createBodyMaker({ ...options, compression, parquetThread: 'worker' });
        makers.push(sliced, worker);
        expect([sliced.runsIn, worker.runsIn]).toEqual(['thread-pool', 'worker']);
        const request = { framing: null, sha256: true, crc32: true } as const;
        const a = await sliced.make({ columns: batchOf(700, 3, 9), ...request });
        const b = await worker.make({ columns: batchOf(700, 3, 9), ...request });
        expect(a.body.length).toBeGreaterThan(10_000);
        expect(a.body.equals(b.body)).toBe(true);
        expect([a.sha256, a.crc32]).toEqual([b.sha256, b.crc32]);
      },
    );
  }

  test('closed while it writes a file: make() rejects at the next slice and gives the columns back', async () => {
    const maker = createBodyMaker({ ...options, compression: SLICED_CODEC });
    const columns = batchOf(1_500, 4);
    const made = maker.make({ columns, framing: null, sha256: false, crc32: false });
    await new Promise((resolve) => setImmediate(resolve));
    const started = performance.now();
    await maker.close();
    const error = await made.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BodyMakerError);
    expect((error as BodyMakerError).message).toMatch(/shut down/);
    expect((error as BodyMakerError).contents?.columns).toBe(columns);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
