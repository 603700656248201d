import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import { createPageCompressor } from '../../src/compression/compressors.js';
import { builtInZstd } from '../../src/compression/zstd-engine.js';
import { newTally } from '../../src/encoding/records.js';
import { MAX_STATISTICS_VALUE_BYTES } from '../../src/parquet/footer.js';
import { flatEncoder } from '../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../src/signals/logs/parquet-schema.js';
import { MetricColumnBuilders } from '../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../src/signals/metrics/parquet/encode.js';
import { ROW_GROUP_ROWS } from '../../src/signals/metrics/parquet/schema.js';
import { spanColumnBuilders } from '../../src/signals/traces/parquet.js';
import { SPANS } from '../../src/signals/traces/parquet-schema.js';
import { toRequest, toResourceMetrics } from '../support/parquet-batch-inputs.js';
import { batch } from '../support/parquet-batches.js';
import {
  duckdbTableRows,
  type FlatColumns,
  flatDuckdbRows,
  flatHyparquetRows,
  flatPolarsRows,
  hyparquetRows,
  polarsRows,
  pyarrowFiles,
  pyarrowFlatFiles,
  testPyarrow,
} from '../support/parquet-engines.js';
import { expectedRows, type Row } from '../support/parquet-expected.js';
import {
  expectedLogRows,
  expectedSpanRows,
  type FlatRow,
  logBatch,
  spanBatch,
  toLogRecords,
  toSpans,
} from '../support/parquet-signal-batches.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * The Parquet writer against four readers we did not write. Random batches (every instrument
 * kind through the SDK's objects and through decoded OTLP requests; empty and huge attribute
 * sets; NaN, ±Infinity and -0; integers beyond 2^53; non-BMP strings; tiny row groups and pages)
 * are appended to MetricColumnBuilders and encoded; DuckDB, Polars, hyparquet and pyarrow must each
 * return exactly the rows the test worked out from the batch it generated
 * (test/support/parquet-batches.ts). pyarrow also checks the row groups' min/max statistics.
 * Spans and log records likewise, through their column builders and the flat tables' writer:
 * random events and links, empty and huge attribute maps, non-BMP text, bodies of every type
 * (test/support/parquet-signal-batches.ts); DuckDB's timestamps compared at microseconds. Some of
 * their files have a TraceId bloom filter, as compaction's outputs do (parquet-bloom-filters.test.ts
 * checks the filters themselves).
 */

/** Cases per run; PARQUET_RUNS raises it for a longer search. */
const RUNS = Number(process.env.PARQUET_RUNS ?? 40);
/** Cases per run of spans and of log records. */
const FLAT_RUNS = Number(process.env.PARQUET_RUNS ?? 15);
const zstdEngine = builtInZstd() ? 'node:zlib' : 'zstd-napi';
const COMPRESSORS = {
  none: undefined,
  zstd: createPageCompressor({ compression: 'zstd', level: 3, engine: zstdEngine }).compressPage,
  gzip: createPageCompressor({ compression: 'gzip', level: 6 }).compressPage,
} as const;

const options = fc.record({
  compression: fc.constantFrom('none', 'zstd', 'gzip') as fc.Arbitrary<keyof typeof COMPRESSORS>,
  rowGroupRows: fc.oneof(fc.constant(ROW_GROUP_ROWS), fc.integer({ min: 1, max: 7 })),
  pageValues: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 40 })),
  /**
   * Bucket counts: a dictionary where each value is used this often (1: every chunk, 2: some),
   * else PLAIN; the default (64) makes these small batches' counts PLAIN.
   */
  dictionaryMinUses: fc.constantFrom(undefined, 1, 2),
  /** Spans and log records: a TraceId bloom filter, as compaction writes them (no reader may mind). */
  bloomFilters: fc.boolean(),
});

const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const sorted = (rows: object[]) => rows.map((r) => JSON.stringify(r)).sort();
/** hyparquet returns maps as objects, whose key order is JavaScript's: compare entries as sets. */
const unordered = (rows: Row[]) =>
  rows.map((r) => ({
    ...r,
    ResourceAttributes: [...r.ResourceAttributes].sort(([a], [b]) => utf8Order(a, b)),
    Attributes: [...r.Attributes].sort(([a], [b]) => utf8Order(a, b)),
  }));

describe('our Parquet writer, read back exactly by DuckDB, Polars, hyparquet and pyarrow', () => {
  let dir: string;
  const files: { path: string; expected: Row[] }[] = [];

  beforeAll(() => tempDir('otel-s3-parquet-writer-', (path) => (dir = path)));

  test(
    'random batches: every engine returns the rows appended, sorted by service and metric',
    async () => {
      await fc.assert(
        fc.asyncProperty(batch, options, async (exports, o) => {
          const builders = new MetricColumnBuilders();
          for (const e of exports) {
            if (e.sdk) builders.appendResourceMetrics(toResourceMetrics(e));
            else builders.appendRequest(toRequest(e) as never);
          }
          const expected = expectedRows(exports);
          expect(builders.rows).toBe(expected.length);
          const file = await encodeParquet(builders.seal(), {
            compression: o.compression,
            compressPage: COMPRESSORS[o.compression],
            rowGroupRows: o.rowGroupRows,
            ...(o.pageValues === undefined ? {} : { pageValues: o.pageValues }),
            ...(o.dictionaryMinUses === undefined
              ? {}
              : { dictionaryMinUses: o.dictionaryMinUses }),
          });
          const path = join(dir, `${files.length}.parquet`);
          await writeFile(path, file);
          files.push({ path, expected });

          const inFileOrder = await hyparquetRows(path);
          expect(sorted(unordered(inFileOrder)), 'hyparquet').toEqual(sorted(unordered(expected)));
          expect(sorted(await duckdbTableRows(path)), 'DuckDB').toEqual(sorted(expected));
          expect(sorted(polarsRows(path)), 'Polars').toEqual(sorted(expected));
          // Rows come sorted by ServiceName, then MetricName (their UTF-8 bytes).
          for (let i = 1; i < inFileOrder.length; i++) {
            const [a, b] = [inFileOrder[i - 1] as Row, inFileOrder[i] as Row];
            const order =
              utf8Order(a.ServiceName, b.ServiceName) || utf8Order(a.MetricName, b.MetricName);
            expect(order, 'row order').toBeLessThanOrEqual(0);
          }
        }),
        { numRuns: RUNS },
      );
    },
    60_000 + RUNS * 1_000,
  );

  testPyarrow(
    'pyarrow returns the same rows, and each row group has exact min/max statistics (strings up to 256 bytes)',
    async () => {
      expect(files.length).toBeGreaterThanOrEqual(RUNS);
      const read = await pyarrowFiles(files.map((f) => f.path));
      for (const { path, expected } of files) {
        const file = read.get(path);
        expect(sorted(file?.rows ?? []), `pyarrow: ${path}`).toEqual(sorted(expected));
        // Statistics: each row group's smallest and largest value, strings by their UTF-8 bytes.
        let at = 0;
        for (const group of file?.groups ?? []) {
          const rows = (file?.rows ?? []).slice(at, at + group.rows);
          at += group.rows;
          for (const column of ['TimeUnix', 'StartTimeUnix'] as const) {
            const values = rows
              .map((r) => BigInt(r[column]))
              .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
            expect(group.statistics[column], `${path} ${column}`).toEqual([
              String(values[0]),
              String(values.at(-1)),
            ]);
          }
          // Strings: none where the least or greatest is longer than the writer stores.
          for (const column of ['ServiceName', 'MetricName'] as const) {
            const values = rows.map((r) => r[column]).sort(utf8Order);
            const ends = [values[0], values.at(-1)];
            const kept = ends.every(
              (v) => Buffer.byteLength(String(v)) <= MAX_STATISTICS_VALUE_BYTES,
            );
            expect(group.statistics[column], `${path} ${column}`).toEqual(kept ? ends : null);
          }
        }
        expect(at).toBe(expected.length);
      }
    },
  );
});

/** Spans and log records: each a flat table, its column builders, its random batches. */
const SIGNALS = [
  {
    name: 'spans',
    what: 'events and links 0..40, empty and huge attribute maps, non-BMP text',
    table: SPANS,
    builders: spanColumnBuilders,
    cases: spanBatch.map((b) => ({ inputs: b.map(toSpans), expected: expectedSpanRows(b) })),
  },
  {
    name: 'log records',
    what: 'bodies of every type, no time, empty and huge attribute maps, non-BMP text',
    table: LOG_RECORDS,
    builders: logColumnBuilders,
    cases: logBatch.map((b) => ({ inputs: b.map(toLogRecords), expected: expectedLogRows(b) })),
  },
] as const;

const byUtf8 = ([a]: [string, unknown], [b]: [string, unknown]) => utf8Order(a, b);
/** Maps' entries sorted by key (hyparquet's maps are objects, in JavaScript's key order). */
const unorderedMaps = (table: FlatColumns) => (row: FlatRow) => {
  const out = { ...row };
  for (const { name, kind, list } of table.columns) {
    if (kind !== 'map') continue;
    const sort = (m: unknown) => (m as [string, unknown][]).toSorted(byUtf8);
    out[name] = list === undefined ? sort(row[name]) : (row[name] as unknown[]).map(sort);
  }
  return out;
};
/** DuckDB's rows: timestamps in microseconds (it reads NANOS as TIMESTAMP WITH TIME ZONE). */
const inMicros = (table: FlatColumns) => (row: FlatRow) => {
  const out = { ...row };
  const micros = (ns: unknown) => String(BigInt(ns as string) / 1000n);
  for (const { name, kind, list } of table.columns) {
    if (kind !== 'timestamp') continue;
    out[name] = list === undefined ? micros(row[name]) : (row[name] as unknown[]).map(micros);
  }
  return out;
};
/**
 * The tables' order: ServiceName, then (spans) StatusCode, then TraceId (their UTF-8 bytes), then
 * Timestamp. A log record has no StatusCode: equal there.
 */
const flatOrder = (a: FlatRow, b: FlatRow) =>
  utf8Order(a.ServiceName as string, b.ServiceName as string) ||
  utf8Order((a.StatusCode ?? '') as string, (b.StatusCode ?? '') as string) ||
  utf8Order(a.TraceId as string, b.TraceId as string) ||
  Number(BigInt(a.Timestamp as string) - BigInt(b.Timestamp as string));

for (const { name, what, table, builders: columnBuilders, cases } of SIGNALS) {
  describe(`${name}: our Parquet writer, read back exactly by DuckDB, Polars, hyparquet and pyarrow`, () => {
    let dir: string;
    const files: { path: string; expected: FlatRow[] }[] = [];

    beforeAll(() => tempDir('otel-s3-parquet-flat-', (path) => (dir = path)));

    test(
      `random ${name} (${what}): every engine returns the rows appended, sorted`,
      async () => {
        await fc.assert(
          fc.asyncProperty(cases, options, async ({ inputs, expected }, o) => {
            const builders = columnBuilders();
            for (const items of inputs) builders.append(items as never, newTally(false));
            expect(builders.rows).toBe(expected.length);
            const file = await flatEncoder(table)(builders.seal(), {
              compression: o.compression,
              compressPage: COMPRESSORS[o.compression],
              ...(o.rowGroupRows === ROW_GROUP_ROWS ? {} : { rowGroupRows: o.rowGroupRows }),
              ...(o.pageValues === undefined ? {} : { pageValues: o.pageValues }),
              ...(o.bloomFilters ? { bloomFilters: { columns: ['TraceId'] } } : {}),
            });
            const path = join(dir, `${files.length}.parquet`);
            await writeFile(path, file);
            files.push({ path, expected });

            // Every engine is asked, and the case fails naming each engine that disagreed.
            const red: string[] = [];
            const check = async (engine: string, rows: () => Promise<object[]> | object[]) => {
              const want = engine === 'DuckDB' ? expected.map(inMicros(table)) : expected;
              const unordered = engine === 'hyparquet' ? unorderedMaps(table) : (r: FlatRow) => r;
              try {
                const got = (await rows()) as FlatRow[];
                expect(sorted(got.map(unordered)), engine).toEqual(sorted(want.map(unordered)));
              } catch (error) {
                red.push(`${engine}: ${String(error).slice(0, 2_000)}`);
              }
            };
            let inFileOrder: FlatRow[] = [];
            await check(
              'hyparquet',
              async () => (inFileOrder = await flatHyparquetRows(path, table)),
            );
            await check('DuckDB', () => flatDuckdbRows(path, table));
            await check('Polars', () => flatPolarsRows(path, table));
            expect(red, red.map((r) => r.split(':')[0]).join(', ')).toEqual([]);
            for (let i = 1; i < inFileOrder.length; i++) {
              const order = flatOrder(inFileOrder[i - 1] as FlatRow, inFileOrder[i] as FlatRow);
              expect(order, 'row order').toBeLessThanOrEqual(0);
            }
          }),
          // A failing case of huge attribute maps shrinks for long: the report comes in time.
          { numRuns: FLAT_RUNS, interruptAfterTimeLimit: 50_000, markInterruptAsFailure: true },
        );
      },
      60_000 + FLAT_RUNS * 2_000,
    );

    testPyarrow(`pyarrow returns the same ${name}, every value exact`, async () => {
      expect(files.length).toBeGreaterThanOrEqual(FLAT_RUNS);
      const read = await pyarrowFlatFiles(
        files.map((f) => f.path),
        table,
      );
      for (const { path, expected } of files) {
        expect(sorted(read.get(path) ?? []), `pyarrow: ${path}`).toEqual(sorted(expected));
      }
    });
  });
}
