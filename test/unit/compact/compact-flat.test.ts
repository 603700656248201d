import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parquetHeader } from 'hyparquet/src/column.js';
import { uuidv7 } from 'uuidv7';
import { beforeEach, describe, expect, test } from 'vitest';
import { leaseDirectory, tmpDirectory } from '../../../src/compact/bookkeeping.js';
import { dirStore } from '../../../src/compact/dir-store.js';
import { appendFlatColumns } from '../../../src/compact/flat-append-columns.js';
import { LOG_RECORD_ROWS, SPAN_ROWS } from '../../../src/compact/flat-rows.js';
import { compactLogRecords, compactMetrics, compactSpans } from '../../../src/compact/index.js';
import { acquireLease } from '../../../src/compact/lease.js';
import { listHours } from '../../../src/compact/listing.js';
import type { FinishedFile } from '../../../src/compact/merge.js';
import { resolveCompaction } from '../../../src/compact/options.js';
import type { AnyCompactionRows } from '../../../src/compact/signal-rows.js';
import type { SignalName } from '../../../src/layout/formats.js';
import { TableFileWriter } from '../../../src/parquet/file-writer.js';
import { dirSource } from '../../../src/reader/dir-source.js';
import { resolveKeyLayout } from '../../../src/reader/key-layout.js';
import { bytesAsRanges, openParquetParts } from '../../../src/reader/parquet-parts.js';
import { resolveReadLimits } from '../../../src/reader/read-limits.js';
import { readParts } from '../../../src/reader/read-parts.js';
import type { ObjectSource } from '../../../src/reader/source.js';
import {
  logRecordRows,
  type ReadObjectsOptions,
  readLogRecords,
  readSpans,
  type StoredObject,
  spanRows,
} from '../../../src/reader.js';
import { FlatStore } from '../../../src/signals/flat-parquet/store.js';
import { flatTable } from '../../../src/signals/flat-parquet/table.js';
import { LOG, LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { SPAN, SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { batchAt } from '../../support/compaction-data.js';
import {
  compactedFirstHour,
  exportLogsToDir,
  exportSpansToDir,
  exportToDir,
  hourFolderIn,
  keysIn,
  mergeAllIn,
} from '../../support/compaction-dir.js';
import { duckdbRows } from '../../support/duckdb.js';
import {
  duckdbLogRows,
  duckdbSpanRows,
  type FlatBatch,
  TWO_SMALL_BATCHES,
} from '../../support/flat-batches.js';
import { collect } from '../../support/reader-fixtures.js';
import { tempDir, tempDirs } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';

const signal = new AbortController().signal;
const sorted = (rows: readonly string[]) => [...rows].sort();

/**
 * Batches whose services and times run backwards, so that every run spilled holds rows that
 * sort after rows of later runs.
 */
const backwards = (n: number, items: number): FlatBatch[] =>
  Array.from({ length: n }, (_, i) => ({
    service: `svc-${2 - (i % 3)}`,
    minute: 55 - 6 * i,
    items,
    seed: 100 + i,
  }));

/** Merges every input of `signalName` under `dir`/p into files, with runs of `runBytes`. */
const merged = (
  dir: string,
  signalName: SignalName,
  rows: AnyCompactionRows,
  runBytes: number,
): Promise<FinishedFile[]> =>
  mergeAllIn(dir, resolveKeyLayout('p', { format: 'parquet' }, [signalName]), rows, runBytes);

/**
 * A Parquet file of spans written again, uncompressed, with the writer's `options`: read a row
 * group at a time as the compactor reads them, appended, sealed.
 */
async function spansRewritten(
  bytes: Uint8Array,
  options: { pageValues?: number; rowGroupRows?: number },
): Promise<Uint8Array> {
  const parts = await openParquetParts(bytesAsRanges(bytes), resolveReadLimits({}), 'traces');
  const store = new FlatStore(SPANS);
  for (let i = 0; i < parts.count; i++) {
    appendFlatColumns(store, SPANS, await parts.readColumns(i));
  }
  const writer = new TableFileWriter(flatTable(SPANS), { compression: 'none', ...options });
  await writer.writeRun(store.seal());
  return writer.finish([]).slice();
}

/** Is `keys` in order (each an array of texts and bigints, compared in turn)? */
function inOrder(keys: (string | bigint)[][]): boolean {
  for (let i = 1; i < keys.length; i++) {
    const a = keys[i - 1] as (string | bigint)[];
    const b = keys[i] as (string | bigint)[];
    for (let k = 0; k < a.length; k++) {
      if ((a[k] as string | bigint) < (b[k] as string | bigint)) break;
      if ((a[k] as string | bigint) > (b[k] as string | bigint)) return false;
    }
  }
  return true;
}

describe('compaction of spans and log records on a directory', () => {
  let dir: string;
  beforeEach(() => tempDir('otel-s3-compact-flat-', (path) => (dir = path)));

  /** Each signal's rows merged from spilled runs; its time is the text at `timeAt` of a row. */
  const spilled = [
    {
      title:
        'spans spilled in many runs come out as one run sorted by ServiceName, StatusCode, TraceId and Timestamp, every span once',
      exportTo: exportSpansToDir,
      signalName: 'traces' as const,
      rows: SPAN_ROWS as AnyCompactionRows,
      items: 100,
      readBack: duckdbSpanRows,
      // ServiceName, StatusCode, TraceId (duckdbSpanRows's places).
      keysAt: [0, 8, 1],
      timeAt: 4,
    },
    {
      title: 'log records spilled in many runs come out as one sorted run, every record once',
      exportTo: exportLogsToDir,
      signalName: 'logs' as const,
      rows: LOG_RECORD_ROWS as AnyCompactionRows,
      items: 120,
      readBack: duckdbLogRows,
      keysAt: [0, 1],
      timeAt: 3,
    },
  ];
  const c0 = spilled[0] as (typeof spilled)[number];
  const newDir = tempDirs();
  let backwardsSpans: Promise<{ inputs: string; recorded: string[] }> | undefined;
  /**
   * Spans of backwards(8, c0.items) exported once into a directory of their own, for the tests
   * that only read them; they write their outputs into their own `dir`.
   */
  const sharedBackwardsSpans = () =>
    (backwardsSpans ??= (async () => {
      const inputs = await newDir('otel-s3-compact-flat-spans-');
      return { inputs, recorded: await c0.exportTo(inputs, HOUR, backwards(8, c0.items)) };
    })());
  for (const c of spilled) {
    test(c.title, async () => {
      const { inputs, recorded } =
        c === c0
          ? await sharedBackwardsSpans()
          : { inputs: dir, recorded: await c.exportTo(dir, HOUR, backwards(8, c.items)) };
      // Runs of one or two inputs (the builders hold some 40 KB empty), chunks of 64 rows.
      const files = await merged(inputs, c.signalName, c.rows, 160 * 1024);
      expect(files).toHaveLength(1);
      const file = files[0] as FinishedFile;
      expect(file.rows).toBe(recorded.length);
      await writeFile(join(dir, 'out.parquet'), file.bytes);
      const rows = await c.readBack(join(dir, 'out.parquet'));
      expect(sorted(rows)).toEqual(sorted(recorded));
      // The sort key: its texts (spans' ServiceName, StatusCode, TraceId; log records'
      // ServiceName, TraceId), then the time.
      const keys = rows.map((r) => {
        const row = JSON.parse(r) as string[];
        return [...c.keysAt.map((k) => row[k] as string), BigInt(row[c.timeAt] as string)];
      });
      expect(inOrder(keys)).toBe(true);
    });
  }

  for (const c of spilled) {
    test(`${c.signalName}: two runs whose rows fit one merged batch are written from memory as one sorted run, no spill`, async () => {
      // The later object's service sorts first; both objects' spans share strings and
      // attribute sets (the resource's, the scope, keys), so the second run repeats them.
      // Log records are smaller: fewer fill a smaller run.
      const [items, runBytes] = c.signalName === 'traces' ? [300, 100 * 1024] : [200, 64 * 1024];
      const recorded = [
        ...(await c.exportTo(dir, HOUR, [{ service: 'svc-1', minute: 10, items, seed: 1 }])),
        ...(await c.exportTo(dir, HOUR, [{ service: 'svc-0', minute: 50, items: 12, seed: 2 }])),
      ];
      // The two runs are joined (CompactionRows.joined), once.
      let joins = 0;
      const rows = {
        ...c.rows,
        joined: (a: unknown, b: unknown) => {
          joins++;
          return c.rows.joined?.(a, b);
        },
      } as AnyCompactionRows;
      // A spill would fail: the temporary directory is a file.
      const notADirectory = join(dir, 'not-a-directory');
      await writeFile(notADirectory, '');
      const tmpdir = process.env.TMPDIR;
      process.env.TMPDIR = notADirectory;
      try {
        // The first object's builders pass `runBytes` (a run); its rows and 12 copied do not.
        const files = await merged(dir, c.signalName, rows, runBytes);
        expect(files).toHaveLength(1);
        expect(joins).toBe(1);
        await writeFile(join(dir, 'out.parquet'), (files[0] as FinishedFile).bytes);
        const read = await c.readBack(join(dir, 'out.parquet'));
        expect(sorted(read)).toEqual(sorted(recorded));
        const services = read.map((r) => (JSON.parse(r) as string[])[0]);
        expect(services.lastIndexOf('svc-0')).toBe(11);
        // Smaller runs: the same objects need the spill.
        await expect(merged(dir, c.signalName, c.rows, 32 * 1024)).rejects.toThrow(
          /not-a-directory/,
        );
      } finally {
        if (tmpdir === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = tmpdir;
      }
    });
  }

  /** Each signal compacted from OTLP objects: its exporter, compaction, reader and rows. */
  const fromOtlp = [
    {
      name: 'spans',
      exportTo: exportSpansToDir,
      compact: compactSpans,
      read: (options: ReadObjectsOptions) => readSpans(options),
      count: (o: StoredObject) => spanRows(o.request).length,
      readBack: duckdbSpanRows,
    },
    {
      name: 'log records',
      exportTo: exportLogsToDir,
      compact: compactLogRecords,
      read: (options: ReadObjectsOptions) => readLogRecords(options),
      count: (o: StoredObject) => logRecordRows(o.request).length,
      readBack: duckdbLogRows,
    },
  ];
  for (const c of fromOtlp) {
    test(`${c.name} exported as OTLP/JSON, OTLP protobuf and Parquet in one hour are compacted into Parquet rows equal to what the SDK recorded; the reader counts each once`, async () => {
      const recorded = [
        ...(await c.exportTo(
          dir,
          HOUR,
          [{ service: 'api', minute: 5, items: 9, seed: 4 }],
          'otlp-json',
        )),
        ...(await c.exportTo(
          dir,
          HOUR,
          [{ service: 'web', minute: 15, items: 9, seed: 5 }],
          'otlp-proto',
        )),
        ...(await c.exportTo(dir, HOUR, TWO_SMALL_BATCHES)),
      ];
      const inputs = await keysIn(dir);
      expect(inputs.filter((k) => k.endsWith('.json.zst'))).toHaveLength(1);
      expect(inputs.filter((k) => k.endsWith('.binpb.zst'))).toHaveLength(1);
      const readBefore = await collect(c.read({ dir, prefix: 'p' }));
      expect(readBefore.reduce((n, o) => n + c.count(o), 0)).toBe(recorded.length);

      const report = await c.compact({ dir, prefix: 'p', settleMillis: 0, from: new Date(HOUR) });
      expect(report.partitions.map((p) => [p.status, p.read.points])).toEqual([
        ['compacted', recorded.length],
      ]);
      const outputs = (await keysIn(dir)).filter((k) => k.endsWith('.compacted.parquet'));
      expect(outputs).toHaveLength(1);
      const rows = await c.readBack(join(dir, outputs[0] as string));
      expect(sorted(rows)).toEqual(sorted(recorded));
      // The inputs are kept (no deleteInputs): the reader reads the output in their place.
      const readAfter = await collect(c.read({ dir, prefix: 'p' }));
      expect(readAfter.map((o) => o.key)).toEqual(outputs);
      expect(readAfter.reduce((n, o) => n + c.count(o), 0)).toBe(recorded.length);
      // Read in an OTLP format's layout and a range (a service's own settings): the output, in
      // the signal's Parquet hour layout, is listed too. Before: nothing was found. The range
      // runs to now, where the inputs (filed under their data's hour) were sealed: an output is
      // read when the range holds an object it replaces, as that object would have been.
      for (const format of ['otlp-json', 'otlp-proto'] as const) {
        const ranged = await collect(
          c.read({
            dir,
            prefix: 'p',
            format,
            from: new Date(HOUR + 600_000),
            to: new Date(Date.now() + 60_000),
          }),
        );
        expect(ranged.map((o) => o.key)).toEqual(outputs);
        expect(ranged.reduce((n, o) => n + c.count(o), 0)).toBe(recorded.length);
      }
    });
  }

  test('spans in row groups smaller than a batch: each row group holds its own values in its dictionaries, in order, every span once', async () => {
    const { inputs, recorded } = await sharedBackwardsSpans();
    const rows = {
      ...SPAN_ROWS,
      writerOptions: { ...SPAN_ROWS.writerOptions, rowGroupRows: 150 },
    } as AnyCompactionRows;
    // Spilled runs merged in batches of many row groups; and one run held in memory.
    for (const runBytes of [160 * 1024, 64 * 1024 * 1024]) {
      const files = await merged(inputs, 'traces', rows, runBytes);
      expect(files).toHaveLength(1);
      const path = join(dir, `out-${runBytes}.parquet`);
      await writeFile(path, (files[0] as FinishedFile).bytes);
      const read = await duckdbSpanRows(path);
      expect(sorted(read)).toEqual(sorted(recorded));
      const keys = read.map((r) => {
        const row = JSON.parse(r) as string[];
        return [row[0] as string, row[8] as string, row[1] as string, BigInt(row[4] as string)];
      });
      expect(inOrder(keys)).toBe(true);
      // Row groups of at most 150 rows, as DuckDB reads the footer.
      const groups = await duckdbRows(
        `SELECT row_group_id::INTEGER AS g, row_group_num_rows::INTEGER AS n, path_in_schema AS c,
           dictionary_page_offset::BIGINT AS d
         FROM parquet_metadata('${path}') WHERE path_in_schema IN ('ServiceName', 'SpanName')
         ORDER BY g, c`,
      );
      const sizes = groups.filter((g) => g.c === 'ServiceName').map((g) => g.n as number);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(150);
      expect(sizes.length).toBeGreaterThanOrEqual(Math.ceil(recorded.length / 150));
      // Each chunk's dictionary page (its header as hyparquet reads it) holds as many values as
      // the row group has distinct values of the column (DuckDB's count), no more.
      const distinct = await duckdbRows(
        `SELECT file_row_number::INTEGER AS r, ServiceName, SpanName
         FROM read_parquet('${path}', file_row_number = true) ORDER BY r`,
      );
      const bytes = await readFile(path);
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      let first = 0;
      for (const g of groups) {
        const n = g.n as number;
        const column = g.c as 'ServiceName' | 'SpanName';
        const values = new Set(distinct.slice(first, first + n).map((r) => r[column]));
        const header = parquetHeader({ view, offset: Number(g.d) });
        expect([column, header.dictionary_page_header?.num_values]).toEqual([column, values.size]);
        if (column === 'SpanName') first += n;
      }
    }
  });

  test("metrics' hours settle by the batch age of the format named, or without one by Parquet's (every format's objects are inputs)", () => {
    // docs/parquet.md, "Settled hours": batch age + the flush deadline (10 s) + 5 minutes.
    const settle = (format?: 'otlp-json' | 'parquet') =>
      resolveCompaction({ dir, prefix: 'p', format }, 'metrics').settleMillis;
    expect(settle('otlp-json')).toBe(60_000 + 10_000 + 5 * 60_000);
    expect(settle('parquet')).toBe(10 * 60_000 + 10_000 + 5 * 60_000);
    // Before: an OTLP format's minute, so a Parquet batch of the hour could land after it.
    expect(settle()).toBe(10 * 60_000 + 10_000 + 5 * 60_000);
  });

  test("an hour of spans settles by Parquet's batch age, whatever format the options name (the reader's --format)", async () => {
    const now = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    await exportSpansToDir(dir, now, [{ service: 'svc', minute: 0, items: 3, seed: 7 }]);
    // docs/parquet.md, "Settled hours": the batch age of Parquet (10 minutes), the flush
    // deadline (10 s) and 5 minutes. Before: an OTLP format's minute (6 min 10 s).
    const expected = new Date(now + 3_600_000 + 10 * 60_000 + 10_000 + 5 * 60_000);
    for (const format of [undefined, 'otlp-json', 'otlp-proto'] as const) {
      const report = await compactSpans({ dir, prefix: 'p', from: new Date(now), format });
      expect(report.unsettled.map((u) => u.settlesAt)).toEqual([expected]);
    }
  });

  test("a metrics compaction's lease on an hour does not keep that hour's spans waiting", async () => {
    await exportSpansToDir(dir, HOUR, TWO_SMALL_BATCHES);
    const store = dirStore(dir, tmpDirectory('p'));
    const held = await acquireLease(
      {
        store,
        directory: leaseDirectory('p', new Date(HOUR)),
        holder: 'a metrics compactor',
        durationMillis: 600_000,
        clockSkewMillis: 0,
      },
      signal,
    );
    expect('lease' in held).toBe(true);
    const report = await compactSpans({ dir, prefix: 'p', settleMillis: 0, from: new Date(HOUR) });
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted']);
    const keys = await keysIn(dir);
    // The spans' leases are theirs; the metrics' lease is as it was taken.
    const leases = keys.filter((k) => k.includes('/leases/'));
    expect(leases.filter((k) => !k.includes('/leases/traces/year='))).toEqual([
      expect.stringMatching(/^p\/_otel_s3_compaction\/leases\/year=.*\/000000000000\.lease$/),
    ]);
    expect(keys.filter((k) => k.startsWith('p/traces/'))).toEqual([
      expect.stringMatching(/\.compacted\.parquet$/),
    ]);
  });

  // Twelve exports through the writers: seconds, more on a loaded machine (not a bound).
  test("an hour's listing of spans lists that hour, not the prefix to its end, and holds both layouts' objects (OTLP under year=…, Parquet under traces/year=…)", {
    timeout: 60_000,
  }, async () => {
    const HOURS = 6;
    for (let h = 0; h < HOURS; h++) {
      const at = HOUR + h * 3_600_000;
      await exportSpansToDir(dir, at, [{ service: 'api', minute: 5, items: 3, seed: h }]);
      await exportSpansToDir(
        dir,
        at,
        [{ service: 'web', minute: 9, items: 3, seed: h }],
        'otlp-json',
      );
    }
    const stored = await keysIn(dir);
    const source = dirSource(dir);
    const listed: string[] = [];
    const counting: ObjectSource = {
      ...source,
      async *list(prefix, startAfter, signal) {
        for await (const key of source.list(prefix, startAfter, signal)) {
          listed.push(key.key);
          yield key;
        }
      },
    };
    // The compactor's settings at the CLI's defaults: every format's layout of spans.
    const settings = resolveCompaction({ dir, prefix: 'p', settleMillis: 0 }, 'traces', 'parquet');
    const hour = HOUR + 2 * 3_600_000;
    const hours = [];
    for await (const objects of listHours(
      settings,
      counting,
      { from: hour, to: hour + 3_600_000 },
      () => true,
      { keysIgnored: 0 },
      signal,
    )) {
      hours.push(objects);
    }
    /** A key's partition hour, as its path says it (UTC). */
    const hourOf = (key: string) => {
      const [, y, mo, d, h] = /year=(\d+)\/month=(\d+)\/day=(\d+)\/hour=(\d+)\//.exec(key) ?? [];
      return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h));
    };
    expect(hours.map((h) => h.hour.getTime())).toEqual([hour]);
    expect(hours[0]?.inputs.map((o) => o.key).sort()).toEqual(
      stored.filter((k) => !k.includes('_otel_s3') && hourOf(k) === hour).sort(),
    );
    expect(hours[0]?.inputs.some((o) => o.key.startsWith('p/traces/'))).toBe(true);
    expect(hours[0]?.inputs.some((o) => o.key.startsWith('p/year='))).toBe(true);
    // Each listing (one a layout here) stops at the first key past the hour: none of the later
    // hours' keys is listed (the OTLP listing was one to the end of the prefix).
    const later = listed.filter((k) => hourOf(k) > hour);
    expect(later.filter((k) => hourOf(k) > hour + 3_600_000)).toEqual([]);
    expect(later.length).toBeLessThanOrEqual(2);
  });

  test("without --from (the CLI's default), each hour of spans in both layouts is one partition of the run", async () => {
    for (const h of [0, 1]) {
      const at = HOUR + h * 3_600_000;
      await exportSpansToDir(dir, at, [{ service: 'api', minute: 5, items: 3, seed: 1 + h }]);
      await exportSpansToDir(
        dir,
        at,
        [{ service: 'web', minute: 9, items: 3, seed: 3 + h }],
        'otlp-json',
      );
    }
    const report = await compactSpans({ dir, prefix: 'p', settleMillis: 0 });
    // One listing of both layouts gave each hour twice: once compacted, once with nothing to do.
    expect(report.partitionsSelected).toBe(2);
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted', 'compacted']);
    expect(new Set(report.partitions.map((p) => p.partition)).size).toBe(2);
  });

  for (const c of fromOtlp) {
    test(`${c.name} as OTLP in two hours, both compacted, inputs kept: the reader counts each once`, async () => {
      const recorded = [
        ...(await c.exportTo(
          dir,
          HOUR - 3_600_000,
          [{ service: 'api', minute: 5, items: 4, seed: 1 }],
          'otlp-json',
        )),
        ...(await c.exportTo(
          dir,
          HOUR,
          [{ service: 'api', minute: 5, items: 5, seed: 2 }],
          'otlp-json',
        )),
      ];
      const report = await c.compact({
        dir,
        prefix: 'p',
        settleMillis: 0,
        from: new Date(HOUR - 3_600_000),
      });
      expect(report.partitions.map((p) => p.status)).toEqual(['compacted', 'compacted']);
      // The outputs (traces/… or logs/…, listed before every hour's OTLP objects) replace the
      // objects of their hours. Before: only the last hour's were skipped, the other counted twice.
      const read = await collect(c.read({ dir, prefix: 'p' }));
      expect(read.reduce((n, o) => n + c.count(o), 0)).toBe(recorded.length);
      expect(read.map((o) => o.key).every((k) => k.endsWith('.compacted.parquet'))).toBe(true);
    });
  }

  test('unreadable span files (not Parquet, a file of another table) are skipped, named, kept and recorded; the rest is compacted', async () => {
    const recorded = await exportSpansToDir(dir, HOUR, TWO_SMALL_BATCHES);
    const hourDir = await hourFolderIn(dir);
    const notParquet = `${hourDir}/traces_${uuidv7()}.parquet`;
    await writeFile(join(dir, notParquet), 'PAR1 not really PAR1');
    // A metrics file under the spans' name: a Parquet file of this package, of the wrong table.
    const other = join(dir, 'm');
    await exportToDir(other, { prefix: 'p', format: 'parquet' }, [batchAt('x', HOUR + 60_000, 2)]);
    const metricsFile = (await keysIn(other))[0] as string;
    const wrongTable = `${hourDir}/traces_${uuidv7()}.parquet`;
    await copyFile(join(other, metricsFile), join(dir, wrongTable));

    const options = { dir, prefix: 'p', settleMillis: 0, from: new Date(HOUR) };
    const report = await compactSpans(options);
    const [partition] = report.partitions;
    expect(partition?.status).toBe('compacted');
    expect(partition?.read.points).toBe(recorded.length);
    expect(partition?.skipped.map((k) => k.key).sort()).toEqual([notParquet, wrongTable].sort());
    const keys = await keysIn(dir);
    expect(keys).toContain(notParquet);
    expect(keys).toContain(wrongTable);
    expect(keys.filter((k) => k.includes('/skipped/'))).toEqual([
      expect.stringMatching(/^p\/_otel_s3_compaction\/skipped\/traces\/year=.*\.skips$/),
    ]);
    const output = keys.find((k) => k.endsWith('.compacted.parquet')) as string;
    expect(sorted(await duckdbSpanRows(join(dir, output)))).toEqual(sorted(recorded));
    const again = await compactSpans(options);
    expect(again.partitions.map((p) => [p.status, p.skippedEarlier])).toEqual([
      ['nothing-to-do', 2],
    ]);
  });

  test("an OTLP/JSON object of another signal under a spans' name is skipped and kept, never deleted as empty", async () => {
    const recorded = await exportSpansToDir(dir, HOUR, TWO_SMALL_BATCHES, 'otlp-json');
    // Metrics as OTLP/JSON, stored under a spans' name (a key template that named them wrongly).
    const other = join(dir, 'm');
    await exportToDir(other, { prefix: 'p', format: 'otlp-json', compression: 'none' }, [
      batchAt('x', HOUR + 60_000, 2),
    ]);
    const metricsKey = (await keysIn(other))[0] as string;
    const misnamed = metricsKey.replace('metrics_', 'traces_');
    await mkdir(join(dir, misnamed, '..'), { recursive: true });
    await copyFile(join(other, metricsKey), join(dir, misnamed));
    const partition = await compactedFirstHour(compactSpans, dir, new Date(HOUR));
    // Before: read as no spans, compacted, and deleted with the inputs.
    expect(partition?.read.points).toBe(recorded.length);
    expect(partition?.skipped.map((k) => [k.key, k.reason])).toEqual([
      [misnamed, expect.stringMatching(/a request of metrics, not of traces/)],
    ]);
    expect(await keysIn(dir)).toContain(misnamed);
  });

  test('an OTLP object with a time past what a Parquet timestamp holds (2^63 ns) is skipped and kept, never wrapped', async () => {
    const recorded = await exportSpansToDir(dir, HOUR, TWO_SMALL_BATCHES, 'otlp-json');
    const hourDir = await hourFolderIn(dir);
    // 2^63 ns (year 2262): a uint64 OTLP holds, one more than the INT64 of the Timestamp column.
    const late = `${hourDir}/traces_${uuidv7()}.json`;
    const span = (start: string, end: string) => ({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      name: 'late',
      startTimeUnixNano: start,
      endTimeUnixNano: end,
    });
    const request = {
      resourceSpans: [
        { scopeSpans: [{ spans: [span(`${BigInt(HOUR) * 1_000_000n}`, '9223372036854775808')] }] },
      ],
    };
    await writeFile(join(dir, late), `${JSON.stringify(request)}\n`);
    const partition = await compactedFirstHour(compactSpans, dir, new Date(HOUR));
    expect(partition?.read.points).toBe(recorded.length);
    expect(partition?.skipped.map((k) => [k.key, k.stage, k.reason])).toEqual([
      [
        late,
        'decode',
        'endTimeUnixNano 9223372036854775808 is past the latest time a Parquet timestamp holds (9223372036854775807 ns, 2262-04-11T23:47:16.854775807Z)',
      ],
    ]);
    expect(await keysIn(dir)).toContain(late);
  });

  test('strings that begin with U+FEFF keep it through spilled runs and their merge (names, map keys and values)', async () => {
    await exportSpansToDir(dir, HOUR, TWO_SMALL_BATCHES);
    const hourDir = await hourFolderIn(dir);
    const BOM = '\uFEFF';
    // Three files, each its own run (runs of 1 byte): every row is copied into a spill and merged.
    for (let f = 0; f < 3; f++) {
      const store = new FlatStore(SPANS);
      const r = store.addRow();
      store.int64Big(SPAN.TIMESTAMP, r, BigInt(HOUR + 60_000 * (f + 1)) * 1_000_000n);
      store.string(SPAN.SERVICE_NAME, r, `${BOM}bom-${f}`);
      store.text(SPAN.TRACE_ID, r, `${f}`.padStart(32, 'c'));
      store.text(SPAN.SPAN_ID, r, `${f}`.padStart(16, 'd'));
      store.string(SPAN.SPAN_NAME, r, `${BOM}read csv`);
      store.set(SPAN.SPAN_ATTRIBUTES, r, store.newSet([`${BOM}key`], [`${BOM}id,name`]));
      const writer = new TableFileWriter(flatTable(SPANS), { compression: 'none' });
      await writer.writeRun(store.seal());
      await writeFile(join(dir, `${hourDir}/traces_${uuidv7()}.parquet`), writer.finish([]));
    }
    const files = await merged(dir, 'traces', SPAN_ROWS as AnyCompactionRows, 1);
    await writeFile(join(dir, 'out.parquet'), (files[0] as FinishedFile).bytes);
    const read = await duckdbRows(
      `SELECT hex(ServiceName) AS s, hex(SpanName) AS n,
              hex(map_keys(SpanAttributes)[1]) AS k, hex(map_values(SpanAttributes)[1]) AS v
       FROM read_parquet('${join(dir, 'out.parquet')}') WHERE ServiceName LIKE '%bom-%' ORDER BY s`,
    );
    const hex = (t: string) => Buffer.from(t).toString('hex').toUpperCase();
    // Before: a default TextDecoder dropped each leading U+FEFF (EF BB BF) in the spill's copy.
    expect(read).toEqual(
      [0, 1, 2].map((f) => ({
        s: hex(`${BOM}bom-${f}`),
        n: hex(`${BOM}read csv`),
        k: hex(`${BOM}key`),
        v: hex(`${BOM}id,name`),
      })),
    );
  });

  test('log bodies are compacted as a reader reads them: text of any script byte for byte, a byte that is not UTF-8 as U+FFFD', async () => {
    await exportLogsToDir(dir, HOUR, TWO_SMALL_BATCHES);
    const hourDir = await hourFolderIn(dir);
    const bodies: [string, number[]][] = [
      ['plain', [...Buffer.from('plain ASCII')]],
      ['scripts', [...Buffer.from('héllo 😀 wörld, 日本語')]],
      ['not UTF-8', [0x61, 0xff, 0x62, 0xc3]],
    ];
    // One file per page layout: each value its own page (ids and bodies in several pages read
    // as one), and all in one page.
    for (const pageValues of [1, 100]) {
      const store = new FlatStore(LOG_RECORDS);
      bodies.forEach(([name, bytes], i) => {
        const r = store.addRow();
        store.int64Big(LOG.TIMESTAMP, r, BigInt(HOUR + 60_000 * (i + 1)) * 1_000_000n);
        store.string(LOG.SERVICE_NAME, r, `bytes-${pageValues}`);
        store.text(LOG.TRACE_ID, r, `${pageValues}${i}`.padStart(32, 'a'));
        store.text(LOG.SPAN_ID, r, `${i}`.padStart(16, 'b'));
        store.string(LOG.SEVERITY_TEXT, r, name);
        store.textBytes(LOG.BODY, r, Uint8Array.from(bytes), 0, bytes.length);
      });
      const writer = new TableFileWriter(flatTable(LOG_RECORDS), {
        compression: 'none',
        pageValues,
      });
      await writer.writeRun(store.seal());
      await writeFile(join(dir, `${hourDir}/logs_${uuidv7()}.parquet`), writer.finish([]));
    }
    const report = await compactLogRecords({
      dir,
      prefix: 'p',
      settleMillis: 0,
      from: new Date(HOUR),
    });
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted']);
    const output = (await keysIn(dir)).find((k) => k.endsWith('.compacted.parquet')) as string;
    // DuckDB checks a string's UTF-8 as it reads it.
    const read = await duckdbRows(
      `SELECT ServiceName AS s, TraceId AS t, SpanId AS span, SeverityText AS name, Body AS body
       FROM read_parquet('${join(dir, output)}') WHERE ServiceName LIKE 'bytes-%' ORDER BY s, Timestamp`,
    );
    const expected = ['plain ASCII', 'héllo 😀 wörld, 日本語', 'a\uFFFDb\uFFFD'];
    expect(read).toEqual(
      [1, 100].flatMap((n) =>
        bodies.map(([name], i) => ({
          s: `bytes-${n}`,
          t: `${n}${i}`.padStart(32, 'a'),
          span: `${i}`.padStart(16, 'b'),
          name,
          body: expected[i],
        })),
      ),
    );
  });

  test("spans whose events' and links' columns are in pages of one value each are compacted to what the SDK recorded", async () => {
    const recorded = await exportSpansToDir(dir, HOUR, [
      { service: 'api', minute: 10, items: 30, seed: 3 },
      { service: 'web', minute: 20, items: 30, seed: 4 },
    ]);
    const source = dirSource(dir);
    for (const key of await keysIn(dir)) {
      if (!key.endsWith('.parquet')) continue;
      // The file again, each list's page ending after one level entry.
      const bytes = await source.get(key, signal, Number.MAX_SAFE_INTEGER);
      await writeFile(join(dir, key), await spansRewritten(bytes, { pageValues: 1 }));
    }
    const report = await compactSpans({ dir, prefix: 'p', settleMillis: 0, from: new Date(HOUR) });
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted']);
    const output = (await keysIn(dir)).find((k) => k.endsWith('.compacted.parquet')) as string;
    expect(sorted(await duckdbSpanRows(join(dir, output)))).toEqual(sorted(recorded));
  });

  test('a Parquet file of spans in many row groups (a large output) is read by the reader one row group at a time, every span once', async () => {
    const recorded = await exportSpansToDir(dir, HOUR, [
      { service: 'api', minute: 10, items: 30, seed: 3 },
    ]);
    const [key] = await keysIn(dir);
    // The same rows again, in row groups of 7 (the reader reads files over 16 MiB so).
    const source = dirSource(dir);
    const bytes = await source.get(key as string, signal, Number.MAX_SAFE_INTEGER);
    const file = await spansRewritten(bytes, { rowGroupRows: 7 });
    await writeFile(join(dir, 'many.parquet'), file);
    const ids: string[] = [];
    const counts: number[] = [];
    for await (const part of readParts(
      source,
      { key: 'many.parquet', size: file.length, signal: 'traces' },
      resolveReadLimits({}),
      signal,
    )) {
      counts.push(part.count);
      ids.push(...spanRows(part.request).map((r) => r.spanId));
    }
    expect(counts).toEqual(
      Array(Math.ceil(recorded.length / 7)).fill(Math.ceil(recorded.length / 7)),
    );
    expect(sorted(ids)).toEqual(sorted(recorded.map((r) => JSON.parse(r)[2] as string)));
  });

  test("a key template shared with metrics (the CLI's one --key-template for every signal): the spans' run takes no metrics file", async () => {
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, [batchAt('x', HOUR + 60_000, 2)]);
    const before = await keysIn(dir);
    const report = await compactSpans({
      dir,
      prefix: 'p',
      keyTemplate: 'year=%Y/month=%m/day=%d/hour=%H/{filePrefix}metrics_{uuid}',
      format: 'parquet',
      settleMillis: 0,
      from: new Date(HOUR),
    });
    expect(report.partitions).toEqual([]);
    expect(await keysIn(dir)).toEqual(before);
  });

  test("a custom key template with no signal word: its objects are the metrics' run's, the spans' run takes none and records nothing", async () => {
    const keyTemplate = 'custom/%Y/%m/%d/%H/{uuid}';
    const options = { dir, prefix: 'p', keyTemplate, format: 'parquet' as const, settleMillis: 0 };
    await exportToDir(dir, { prefix: 'p', format: 'parquet', keyTemplate }, [
      batchAt('x', HOUR + 60_000, 2),
      batchAt('y', HOUR + 120_000, 2),
    ]);
    const before = await keysIn(dir);
    expect(before.filter((k) => k.includes('p/custom/'))).toHaveLength(2);
    const spans = await compactSpans({ ...options, from: new Date(HOUR) });
    expect(spans.partitions).toEqual([]);
    // No skip record, no lease left behind: the metrics' files are not the spans' business.
    expect(await keysIn(dir)).toEqual(before);
    const metrics = await compactMetrics({ ...options, from: new Date(HOUR) });
    expect(metrics.partitions.map((p) => p.deleted)).toEqual([2]);
  });
});
