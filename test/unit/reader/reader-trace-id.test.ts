/**
 * The reader's `traceId` option: every object's request holds that trace's items only, and a
 * Parquet object decodes only the row groups whose `TraceId` statistics or bloom filter may
 * hold it. `otel-s3 trace` over six hours of a 20-service shop (720 Parquet files) took 27 s and
 * 410 MB decoding every span; a compacted copy, 60 s and 1.76 GB.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { beforeAll, describe, expect, test } from 'vitest';
import { appendFlatColumns } from '../../../src/compact/flat-append-columns.js';
import { TableFileWriter } from '../../../src/parquet/file-writer.js';
import { mayHold } from '../../../src/parquet/row-group-filter.js';
import { dirSource } from '../../../src/reader/dir-source.js';
import { bytesAsRanges, openParquetParts } from '../../../src/reader/parquet-parts.js';
import { resolveReadLimits } from '../../../src/reader/read-limits.js';
import { readParts } from '../../../src/reader/read-parts.js';
import {
  InvalidOptionError,
  logRecordRows,
  type ReadObjectsOptions,
  readLogRecords,
  readSpans,
  type StoredObject,
  spanRows,
} from '../../../src/reader.js';
import { FlatStore } from '../../../src/signals/flat-parquet/store.js';
import {
  type FlatSpec,
  flatTable,
  TRACE_ID_BLOOM_FILTERS,
} from '../../../src/signals/flat-parquet/table.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { exportLogsToDir, exportSpansToDir } from '../../support/compaction-dir.js';
import type { FlatBatch } from '../../support/flat-batches.js';
import { tempDirs } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';

const newDir = tempDirs();

const BATCHES: FlatBatch[] = [
  { service: 'svc-a', minute: 10, items: 60, seed: 1 },
  { service: 'svc-b', minute: 20, items: 60, seed: 2 },
  { service: 'svc-c', minute: 30, items: 60, seed: 3 },
];

/** Every .parquet file under `dir`. */
async function parquetFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((e) => e.endsWith('.parquet')).map((e) => join(dir, e));
}

/**
 * Each Parquet file of `spec` under `dir` written again in row groups of `rows` rows, with the
 * `TraceId` bloom filter of the exporter's files, uncompressed.
 */
async function inSmallRowGroups(dir: string, spec: FlatSpec, rows: number): Promise<void> {
  const signal = spec === SPANS ? 'traces' : 'logs';
  for (const path of await parquetFiles(dir)) {
    const parts = await openParquetParts(
      bytesAsRanges(await readFile(path)),
      resolveReadLimits({}),
      signal,
    );
    const store = new FlatStore(spec);
    for (let i = 0; i < parts.count; i++)
      appendFlatColumns(store, spec, await parts.readColumns(i));
    const writer = new TableFileWriter(flatTable(spec), {
      compression: 'none',
      rowGroupRows: rows,
      bloomFilters: TRACE_ID_BLOOM_FILTERS,
    });
    await writer.writeRun(store.seal());
    await writeFile(path, writer.finish([]).slice());
  }
}

/** Every object read, and what went to onError. */
async function readAll(
  read: (o: ReadObjectsOptions) => AsyncIterable<StoredObject>,
  options: ReadObjectsOptions,
): Promise<{ objects: StoredObject[]; errors: unknown[] }> {
  const errors: unknown[] = [];
  const objects: StoredObject[] = [];
  for await (const o of read({ ...options, onError: (p) => errors.push(p.error) })) objects.push(o);
  return { objects, errors };
}

const signals = [
  {
    name: 'spans',
    spec: SPANS,
    exportTo: exportSpansToDir,
    read: readSpans,
    rows: (o: StoredObject) => spanRows(o.request),
  },
  {
    name: 'log records',
    spec: LOG_RECORDS,
    exportTo: exportLogsToDir,
    read: readLogRecords,
    rows: (o: StoredObject) => logRecordRows(o.request),
  },
] as const;

for (const s of signals) {
  describe(`readSpans/readLogRecords with traceId: ${s.name}`, () => {
    let dir: string;
    let all: { traceId: string; text: string }[];
    beforeAll(async () => {
      dir = await newDir('otel-s3-trace-id-');
      await s.exportTo(dir, HOUR, BATCHES);
      await inSmallRowGroups(dir, s.spec, 7);
      const { objects, errors } = await readAll(s.read, { dir, prefix: 'p' });
      expect(errors).toEqual([]);
      all = objects.flatMap((o) =>
        s.rows(o).map((row) => ({ traceId: row.traceId, text: JSON.stringify(row) })),
      );
      expect(all.length).toBe(180);
    });

    test('each trace: exactly its items of a full read, in either case of the id', async () => {
      const ids = [...new Set(all.map((r) => r.traceId).filter((id) => id !== ''))];
      expect(ids.length).toBeGreaterThan(20);
      for (const [i, id] of ids.entries()) {
        const traceId = i % 2 === 0 ? id : id.toUpperCase();
        const { objects, errors } = await readAll(s.read, { dir, prefix: 'p', traceId });
        expect(errors).toEqual([]);
        const got = objects.flatMap((o) => s.rows(o).map((row) => JSON.stringify(row)));
        const expected = all.filter((r) => r.traceId === id).map((r) => r.text);
        expect(got.sort(), id).toEqual(expected.sort());
      }
    });

    test("a row group's statistics and bloom filter rule out the traces it does not hold, never one it holds", async () => {
      let absent = 0;
      let ruledOut = 0;
      for (const path of await parquetFiles(dir)) {
        const bytes = new Uint8Array(await readFile(path));
        const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset) as ArrayBuffer);
        expect(metadata.row_groups.length).toBeGreaterThan(1);
        const parts = await openParquetParts(
          bytesAsRanges(bytes),
          resolveReadLimits({}),
          s.spec === SPANS ? 'traces' : 'logs',
        );
        const read = async (start: number, end: number) => bytes.subarray(start, end);
        for (let g = 0; g < metadata.row_groups.length; g++) {
          // What the group holds, as a full read of it says.
          const held = new Set(
            (
              s.rows({ request: (await parts.read(g)).request } as StoredObject) as {
                traceId: string;
              }[]
            ).map((r) => r.traceId),
          );
          for (const { traceId } of all) {
            if (traceId === '') continue;
            const may = await mayHold(metadata, g, 'TraceId', traceId, read);
            if (held.has(traceId)) expect(may, `${path} group ${g} holds ${traceId}`).toBe(true);
            else {
              absent++;
              if (!may) ruledOut++;
            }
          }
        }
      }
      // Bloom filters at a 1 % false-positive rate, and the statistics: nearly every pair.
      expect(ruledOut / absent).toBeGreaterThan(0.9);
    });

    test('a row group that cannot hold the trace is not decoded: damaged, it goes unnoticed', async () => {
      const copy = await newDir('otel-s3-trace-id-damaged-');
      await s.exportTo(copy, HOUR, BATCHES.slice(0, 1));
      await inSmallRowGroups(copy, s.spec, 7);
      const [path] = await parquetFiles(copy);
      const bytes = new Uint8Array(await readFile(path as string));
      const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset) as ArrayBuffer);
      const { objects } = await readAll(s.read, { dir: copy, prefix: 'p' });
      const rows = objects.flatMap((o) => s.rows(o) as { traceId: string }[]);
      // The first group's first trace, and the last group, whose statistics leave it out (rows
      // sorted by service, then trace id: the last group's smallest id is past the first's).
      const traceId = rows
        .map((r) => r.traceId)
        .filter((id) => id !== '')
        .sort()[0] as string;
      const last = metadata.row_groups.length - 1;
      const chunk = metadata.row_groups[last]?.columns.find(
        (c) => c.meta_data?.path_in_schema[0] === 'TraceId',
      )?.meta_data;
      expect(String(chunk?.statistics?.min_value) > traceId).toBe(true);
      // Every page of the last group overwritten: no reader can decode it.
      for (const c of metadata.row_groups[last]?.columns ?? []) {
        const meta = c.meta_data;
        if (meta === undefined) continue;
        const start = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
        bytes.fill(0xff, start, start + Math.min(16, Number(meta.total_compressed_size)));
      }
      await writeFile(path as string, bytes);
      const whole = await readAll(s.read, { dir: copy, prefix: 'p' });
      expect(whole.errors).toHaveLength(1);
      const one = await readAll(s.read, { dir: copy, prefix: 'p', traceId });
      expect(one.errors).toEqual([]);
      const got = one.objects.flatMap((o) => s.rows(o) as { traceId: string }[]);
      expect(got.length).toBeGreaterThan(0);
      expect(got.every((r) => r.traceId === traceId)).toBe(true);
      // Read in parts (as a file over 16 MiB is): the damaged group is an empty part, unread.
      const key = relative(copy, path as string)
        .split(sep)
        .join('/');
      const parts: StoredObject[] = [];
      for await (const part of readParts(
        dirSource(copy),
        { key, size: bytes.length, signal: s.spec === SPANS ? 'traces' : 'logs' },
        resolveReadLimits({}),
        new AbortController().signal,
        traceId,
      )) {
        parts.push({ request: part.request } as StoredObject);
      }
      expect(parts).toHaveLength(metadata.row_groups.length);
      expect(s.rows(parts[last] as StoredObject)).toEqual([]);
      const inParts = parts.flatMap((o) => s.rows(o).map((row) => JSON.stringify(row)));
      expect(inParts.sort()).toEqual(got.map((row) => JSON.stringify(row)).sort());
    });
  });
}

test('traceId must be 32 hex digits, not all zero: InvalidOptionError names the option', () => {
  for (const traceId of ['abc', '0'.repeat(32), 42]) {
    expect(() => readSpans({ dir: '/nowhere', traceId } as never)).toThrow(InvalidOptionError);
  }
  expect(() => readSpans({ dir: '/nowhere', traceId: 'xyz' })).toThrow(/traceId/);
});
