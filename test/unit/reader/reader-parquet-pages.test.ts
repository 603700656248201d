import { join } from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import {
  readLogRecords,
  readMetrics,
  readSpans,
  type UnreadableObject,
} from '../../../src/reader.js';
import { flatEncoder, SCHEMA_VERSION_KEY } from '../../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { parquetHeader } from '../../support/hyparquet-internals.js';
import { collect, keyAt, sampleMetrics, writeAtKey } from '../../support/reader-fixtures.js';
import { type RecordedTrace, recordTrace, signalKeyAt } from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';

/**
 * The reader decodes Parquet pages with hyparquet, whose hybrid decoder writes every value of
 * an RLE run into a JavaScript array: a run of 2^28 levels made V8 end the process ("invalid
 * size error" on Node 20, after seconds of work on 24) instead of throwing. A stored object
 * anyone may have written must be reported unreadable, the process kept.
 */

let recorded: RecordedTrace;
let dir: string;
beforeAll(async () => {
  recorded = await recordTrace();
  dir = await makeTempDir('otel-s3-parquet-pages-');
  return () => removeDir(dir);
});

/** Each signal: an uncompressed file of it, a repeated column, and how the reader reads it. */
const SIGNALS = [
  {
    signal: 'traces',
    column: 'SpanAttributes.key_value.key',
    file: async () => {
      const builders = spanColumnBuilders();
      builders.append(recorded.spans, newTally(false));
      return flatEncoder(SPANS)(builders.seal(), { compression: 'none' });
    },
    key: () => signalKeyAt('traces', 'parquet', 'p', READER_T0, '.parquet'),
    read: readSpans,
  },
  {
    signal: 'logs',
    column: 'LogAttributes.key_value.key',
    file: async () => {
      const builders = logColumnBuilders();
      builders.append(recorded.logs, newTally(false));
      return flatEncoder(LOG_RECORDS)(builders.seal(), { compression: 'none' });
    },
    key: () => signalKeyAt('logs', 'parquet', 'p', READER_T0, '.parquet'),
    read: readLogRecords,
  },
  {
    signal: 'metrics',
    column: 'Attributes.key_value.key',
    file: async () => {
      const builders = new MetricColumnBuilders();
      builders.appendResourceMetrics(await sampleMetrics());
      return encodeParquet(builders.seal(), { compression: 'none' });
    },
    key: () => keyAt('p', READER_T0, '.parquet'),
    read: readMetrics,
  },
] as const;

/** The offset of the first data page's body of `column` in `file`. */
function firstPageBody(file: Uint8Array, column: string): number {
  const chunk = parquetMetadata(file.buffer as ArrayBuffer).row_groups[0]?.columns.find(
    (c) => c.meta_data?.path_in_schema.join('.') === column,
  )?.meta_data;
  expect(chunk).toBeDefined();
  const reader = { view: new DataView(file.buffer), offset: Number(chunk?.data_page_offset) };
  expect(parquetHeader(reader).type).toBe('DATA_PAGE');
  return reader.offset;
}

async function readAll(
  signal: (typeof SIGNALS)[number],
  root: string,
  limits: { maxDecompressedBytes?: number; maxObjectBytes?: number } = {},
) {
  const problems: UnreadableObject[] = [];
  const stream = signal.read({
    dir: root,
    prefix: 'p',
    onError: (p) => problems.push(p),
    ...limits,
  });
  const objects = await collect(stream);
  return { objects, problems };
}

describe('a Parquet page that would make hyparquet outgrow memory is refused', () => {
  for (const s of SIGNALS) {
    test(`${s.signal}: a run of 2^28 levels in a page of a few is reported unreadable`, async () => {
      const file = new Uint8Array(await s.file());
      const root = join(dir, `${s.signal}-run`);
      const key = s.key();
      // Unchanged, the file reads.
      await writeAtKey(root, key, file);
      expect((await readAll(s, root)).objects).toHaveLength(1);
      // The page's repetition levels: a 4-byte length, then the runs; the first becomes an RLE
      // run of 2^28 (its header 2^29, a varint of 5 bytes; its value 0).
      file.set([0x80, 0x80, 0x80, 0x80, 0x02, 0], firstPageBody(file, s.column) + 4);
      await writeAtKey(root, key, file);
      const { objects, problems } = await readAll(s, root);
      expect(objects).toEqual([]);
      expect(problems.map((p) => [p.key, p.stage])).toEqual([[key, 'decode']]);
      expect(problems[0]?.error.message).toContain(
        `${s.column}: a run of values longer than its page`,
      );
    });
  }

  test('a version 2 page whose definition levels claim a run of 2^28 is refused', async () => {
    // hyparquet-writer writes version 2 pages: their levels come first, uncompressed, each
    // section's length in the page header. The file claims the log records' schema, so the
    // reader gets as far as its pages.
    const file = new Uint8Array(
      parquetWriteBuffer({
        columnData: [{ name: 'Body', data: ['a', null, 'b', null], type: 'STRING' }],
        kvMetadata: [{ key: SCHEMA_VERSION_KEY, value: LOG_RECORDS.version }],
        codec: 'UNCOMPRESSED',
      }),
    );
    const chunk = parquetMetadata(file.buffer as ArrayBuffer).row_groups[0]?.columns[0]?.meta_data;
    const reader = { view: new DataView(file.buffer), offset: Number(chunk?.data_page_offset) };
    expect(parquetHeader(reader).type).toBe('DATA_PAGE_V2');
    file.set([0x80, 0x80, 0x80, 0x80, 0x02, 0], reader.offset);
    const root = join(dir, 'v2');
    const logs = SIGNALS[1];
    const key = logs.key();
    await writeAtKey(root, key, file);
    const { objects, problems } = await readAll(logs, root);
    expect(objects).toEqual([]);
    expect(problems.map((p) => [p.stage, p.error.message])).toEqual([
      ['decode', `${key}: Parquet column Body: a run of values longer than its page`],
    ]);
  });

  test('a read decodes at most maxDecompressedBytes values', async () => {
    // A million nulls: one RLE run of definition levels, a few bytes stored and decompressed,
    // for a million values hyparquet holds in arrays (and a million rows). The file claims to
    // be of the log records' schema, so it gets as far as its pages.
    const nulls = 1_000_000;
    const file = new Uint8Array(
      parquetWriteBuffer({
        columnData: [{ name: 'Body', data: new Array(nulls).fill(null), type: 'STRING' }],
        kvMetadata: [{ key: SCHEMA_VERSION_KEY, value: LOG_RECORDS.version }],
      }),
    );
    expect(file.length).toBeLessThan(2_000);
    const root = join(dir, 'values');
    const logs = SIGNALS[1];
    const key = logs.key();
    await writeAtKey(root, key, file);
    for (const limit of [nulls - 1, 100_000]) {
      const { objects, problems } = await readAll(logs, root, { maxDecompressedBytes: limit });
      expect(objects).toEqual([]);
      expect(problems.map((p) => [p.stage, p.error.message])).toEqual([
        [
          'decode',
          `${key}: Parquet pages of more than ${limit} values in one read (maxDecompressedBytes)`,
        ],
      ]);
    }
    // Within the limit its pages are read (and its rows found not to be log records).
    const { problems } = await readAll(logs, root, { maxDecompressedBytes: nulls + 1 });
    expect(problems.map((p) => p.error.message)).not.toContainEqual(
      expect.stringMatching(/values in one read/),
    );
  });
});
