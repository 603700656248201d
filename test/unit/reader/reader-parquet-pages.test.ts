import { join } from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { decompress } from '../../../src/reader/decompress.js';
import { bytesAsRanges, openParquetParts } from '../../../src/reader/parquet-parts.js';
import { resolveReadLimits } from '../../../src/reader/read-limits.js';
import {
  readLogRecords,
  readMetrics,
  readSpans,
  type UnreadableObject,
} from '../../../src/reader.js';
import { readFlatRows } from '../../../src/signals/flat-parquet/read.js';
import { flatEncoder, SCHEMA_VERSION_KEY } from '../../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { SCHEMA_VERSION as METRICS_SCHEMA_VERSION } from '../../../src/signals/metrics/parquet/schema.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import {
  dataPage,
  ENCODING,
  hostileFile,
  PAGE,
  page,
  rleRun,
  varint,
} from '../../support/hostile-parquet.js';
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

  test('a version 2 page is refused: this package writes version 1', async () => {
    // hyparquet-writer writes version 2 pages, whose decoding in hyparquet has corners no walk
    // keeps up with (levels read past their stated length, width-0 runs that never end, a
    // negative null count): a file of them is refused whole.
    const file = new Uint8Array(
      parquetWriteBuffer({
        columnData: [{ name: 'Body', data: ['a', null, 'b', null], type: 'STRING' }],
        kvMetadata: [{ key: SCHEMA_VERSION_KEY, value: LOG_RECORDS.version }],
        codec: 'UNCOMPRESSED',
      }),
    );
    const root = join(dir, 'v2');
    const logs = SIGNALS[1];
    const key = logs.key();
    await writeAtKey(root, key, file);
    const { objects, problems } = await readAll(logs, root);
    expect(objects).toEqual([]);
    expect(problems.map((p) => [p.stage, p.error.message])).toEqual([
      [
        'decode',
        `${key}: Parquet column Body: a page of type DATA_PAGE_V2, which this package does not write`,
      ],
    ]);
  });
});

const decompression = { decompress, maxDecompressedBytes: 64 * 2 ** 20 };

/** Reads `o`'s file through both of the package's ways of reading pages. */
async function bothWays(
  o: Omit<Parameters<typeof hostileFile>[0], 'version'>,
  maxDecompressedBytes = decompression.maxDecompressedBytes,
) {
  // hyparquet's page loop (the reader's objects), checked first by page-bounds.ts.
  const rows = readFlatRows(
    hostileFile({ ...o, version: LOG_RECORDS.version }),
    { decompress, maxDecompressedBytes },
    LOG_RECORDS.version,
  );
  // The package's own page loop (a compaction's metrics inputs, read flat).
  const file = hostileFile({ ...o, version: METRICS_SCHEMA_VERSION });
  const columns = openParquetParts(
    bytesAsRanges(file),
    resolveReadLimits({ maxDecompressedBytes, maxObjectBytes: 2 ** 30 }),
  ).then((parts) => parts.readColumns(0));
  return [rows, columns] as const;
}

/** A version 1 page body: definition levels (a 4-byte length, then runs), then `values`. */
const withLevels = (levels: number[], values: number[] = []) => [
  ...new Uint8Array(Uint32Array.of(levels.length).buffer),
  ...levels,
  ...values,
];

describe('a hostile page hyparquet would follow too far is refused, both ways', () => {
  const INT32 = { type: 'INT32', repetition: 'OPTIONAL', rows: 1 } as const;
  const cases: [string, Omit<Parameters<typeof hostileFile>[0], 'version'>, RegExp][] = [
    [
      'a bit-packed run of no values, then a run of 2^28 levels',
      {
        ...INT32,
        pages: [
          dataPage(1, ENCODING.PLAIN, withLevels([0x01, 0, ...rleRun(2 ** 28), 1], [7, 0, 0, 0])),
        ],
      },
      /Parquet column c: a run of values longer than its page/,
    ],
    [
      'a bit-packed run whose count wraps to none, then a run of 2^28 levels',
      {
        ...INT32,
        pages: [
          dataPage(
            1,
            ENCODING.PLAIN,
            withLevels([...varint(2 ** 30 + 1), 0, ...rleRun(2 ** 28), 1], [7, 0, 0, 0]),
          ),
        ],
      },
      /Parquet column c: a run of values longer than its page/,
    ],
    [
      'a version 2 page that also carries a version 1 header of no values',
      {
        ...INT32,
        pages: [
          page(
            {
              field_1: PAGE.DATA_PAGE_V2,
              field_5: {
                field_1: 0,
                field_2: ENCODING.PLAIN,
                field_3: ENCODING.RLE,
                field_4: ENCODING.RLE,
              },
              field_8: {
                field_1: 1,
                field_2: 0,
                field_3: 1,
                field_4: ENCODING.PLAIN,
                field_5: 6,
                field_6: 0,
              },
            },
            [...rleRun(2 ** 28), 1, 7, 0, 0, 0],
          ),
        ],
      },
      /a page of type DATA_PAGE_V2, which this package does not write/,
    ],
    [
      'a BOOLEAN column encoded with a dictionary',
      {
        type: 'BOOLEAN',
        repetition: 'REQUIRED',
        rows: 1,
        pages: [dataPage(1, ENCODING.RLE_DICTIONARY, [0, 0, 0, 0, ...rleRun(2 ** 28), 1])],
      },
      /a BOOLEAN dictionary, which this package does not write/,
    ],
    [
      'INT32 values encoded RLE',
      {
        ...INT32,
        pages: [dataPage(1, ENCODING.RLE, withLevels([2, 1], [0, 0, 0, 0, ...rleRun(2 ** 28), 1]))],
      },
      /values encoded RLE, which this package does not write/,
    ],
    [
      'byte arrays encoded DELTA_BYTE_ARRAY (prefixes that grow: gigabytes from a few bytes)',
      {
        type: 'BYTE_ARRAY',
        repetition: 'REQUIRED',
        rows: 8,
        pages: [dataPage(8, ENCODING.DELTA_BYTE_ARRAY, [0x80, 1, 4, 8, 0, 0])],
      },
      /values encoded DELTA_BYTE_ARRAY, which this package does not write/,
    ],
    [
      'a page whose size steps back onto its own header',
      { ...INT32, pages: [selfLoopPage()] },
      /a page past its column chunk/,
    ],
    [
      'a column compressed with SNAPPY (hyparquet allocates what its header says)',
      {
        ...INT32,
        codec: 'SNAPPY',
        pages: [dataPage(1, ENCODING.PLAIN, withLevels([2, 1], [7, 0, 0, 0]))],
      },
      /codec SNAPPY, which this package does not write/,
    ],
  ];
  for (const [title, file, message] of cases) {
    test(title, async () => {
      const [rows, columns] = await bothWays(file);
      await expect(rows).rejects.toThrow(message);
      await expect(columns).rejects.toThrow(message);
    });
  }

  test('a read decodes at most maxDecompressedBytes values', async () => {
    // 200,000 nulls: one run of definition levels, a few bytes stored, 200,000 values decoded.
    const nulls = {
      ...INT32,
      rows: 200_000,
      pages: [dataPage(200_000, ENCODING.PLAIN, withLevels([...rleRun(200_000), 0]))],
    };
    for (const way of await bothWays(nulls, 100_000)) {
      await expect(way).rejects.toThrow(
        'Parquet pages of more than 100000 values in one read (maxDecompressedBytes)',
      );
    }
    const [rows, columns] = await bothWays(nulls, 200_000);
    expect(await rows).toHaveLength(200_000);
    expect((await columns).rows).toBe(200_000);
  });
});

/**
 * A data page whose compressed size is minus its header's length: a page loop that trusts it
 * reads the same header again, forever.
 */
function selfLoopPage(): Uint8Array {
  for (let back = 1; ; back++) {
    const fields = {
      field_1: PAGE.DATA_PAGE,
      field_2: 0,
      field_3: -back,
      field_5: {
        field_1: 1,
        field_2: ENCODING.PLAIN,
        field_3: ENCODING.RLE,
        field_4: ENCODING.RLE,
      },
    };
    if (page(fields, []).length === back) return page(fields, []);
  }
}
