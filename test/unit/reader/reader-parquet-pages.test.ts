import { join } from 'node:path';
import { type FileMetaData, parquetMetadata } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { type LeafValues, Utf8Values } from '../../../src/parquet/flat-columns.js';
import { ownBuffer, readColumns, readRows } from '../../../src/parquet/read.js';
import { decompress } from '../../../src/reader/decompress.js';
import {
  readLogRecords,
  readMetrics,
  readSpans,
  type UnreadableObject,
} from '../../../src/reader.js';
import {
  expectedSchema,
  flatEncoder,
  SCHEMA_VERSION_KEY,
} from '../../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import {
  dataPage,
  ENCODING,
  hostileFile,
  PAGE,
  page,
  pagelessFile,
  rleRun,
  varint,
  withFooter,
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

  test('a file claiming the schema version with another schema is refused before its pages', async () => {
    // hyparquet follows the schema a file gives (nesting, fixed lengths, logical types it
    // converts): a version is a claim anyone can write, the schema is checked element for element.
    const foreign = new Uint8Array(
      parquetWriteBuffer({
        columnData: [{ name: 'Body', data: ['a', null, 'b', null], type: 'STRING' }],
        kvMetadata: [{ key: SCHEMA_VERSION_KEY, value: LOG_RECORDS.version }],
        codec: 'UNCOMPRESSED',
      }),
    );
    // Our own file, one column renamed in its footer (the same length: the footer stays whole).
    const builders = logColumnBuilders();
    builders.append(recorded.logs, newTally(false));
    const ours = new Uint8Array(
      await flatEncoder(LOG_RECORDS)(builders.seal(), { compression: 'none' }),
    );
    const renamed = Buffer.from(ours);
    const name = Buffer.from('SeverityText');
    for (let at = renamed.indexOf(name); at >= 0; at = renamed.indexOf(name, at + 1)) {
      renamed.write('SeverityTexx', at);
    }
    const root = join(dir, 'schema');
    const logs = SIGNALS[1];
    const keys = [logs.key(), logs.key(), logs.key()];
    await writeAtKey(root, keys[0] as string, foreign);
    await writeAtKey(root, keys[1] as string, renamed);
    await writeAtKey(root, keys[2] as string, ours);
    const { objects, problems } = await readAll(logs, root);
    expect(objects.map((o) => o.key)).toEqual([keys[2]]);
    const prefix = 'not an otel-s3-exporter Parquet file of schema version logs-1: ';
    expect(problems.map((p) => [p.key, p.stage, p.error.message])).toEqual([
      [
        keys[0],
        'decode',
        `${keys[0]}: ${prefix}2 schema elements, not ${expectedSchema(LOG_RECORDS).schema.length}`,
      ],
      [
        keys[1],
        'decode',
        `${keys[1]}: ${prefix}schema element 5 (SeverityText) has name "SeverityTexx", not "SeverityText"`,
      ],
    ]);
  });
});

test('a footer claiming rows its columns hold no values for is refused', async () => {
  // hyparquet makes an object a row the footer claims: a million rows of no pages, 1.5 KB,
  // held 826 MiB in a reader, and ten million ended a Node 20 process (heap out of memory).
  const root = join(dir, 'pageless');
  const logs = SIGNALS[1];
  const key = logs.key();
  const { schema, version } = expectedSchema(LOG_RECORDS);
  await writeAtKey(root, key, pagelessFile(schema, version, 1_000_000));
  const { objects, problems } = await readAll(logs, root);
  expect(objects).toEqual([]);
  expect(problems.map((p) => [p.stage, p.error.message])).toEqual([
    ['decode', `${key}: Parquet column Timestamp: 0 values for a row group of 1000000 rows`],
  ]);
});

describe('a footer that under-states its rows is refused, not read short', () => {
  // hyparquet reads as many rows as the footer says and drops the rest: a file of 9 spans whose
  // footer said 6 was read as 6, with no error (a compaction refused it).
  const LIES = [
    {
      name: 'row groups and file',
      edit: (m: FileMetaData, rows: bigint) => {
        m.num_rows = rows - 3n;
        for (const g of m.row_groups) g.num_rows = rows - 3n;
      },
      error: (rows: bigint) =>
        `Parquet column Timestamp: ${rows} rows in a row group of ${rows - 3n}`,
    },
    {
      name: 'the file alone',
      edit: (m: FileMetaData, rows: bigint) => {
        m.num_rows = rows + 1000n;
      },
      error: (rows: bigint) => `Parquet footer says ${rows + 1000n} rows, its row groups ${rows}`,
    },
  ];
  for (const signal of SIGNALS.slice(0, 2)) {
    for (const lie of LIES) {
      test(`${signal.signal}: a footer lying about ${lie.name}`, async () => {
        const root = join(dir, `lying-${signal.signal}-${lie.name.replaceAll(' ', '-')}`);
        const key = signal.key();
        const file = await signal.file();
        const rows = parquetMetadata(file.slice().buffer).num_rows;
        expect(parquetMetadata(file.slice().buffer).row_groups).toHaveLength(1);
        expect(rows).toBeGreaterThan(3n);
        await writeAtKey(
          root,
          key,
          withFooter(file, (m) => lie.edit(m, rows)),
        );
        const { objects, problems } = await readAll(signal, root);
        expect(objects).toEqual([]);
        expect(problems.map((p) => [p.stage, p.error.message])).toEqual([
          ['decode', `${key}: ${lie.error(rows)}`],
        ]);
      });
    }
  }
});

const decompression = { decompress, maxDecompressedBytes: 64 * 2 ** 20 };

/**
 * Reads `o`'s file through both of the package's ways of reading pages, past the schema check
 * (the page checks stand on their own).
 */
function bothWays(
  o: Omit<Parameters<typeof hostileFile>[0], 'version'>,
  maxDecompressedBytes = decompression.maxDecompressedBytes,
  coded = false,
) {
  const bytes = hostileFile({ ...o, version: 'any' });
  const file = ownBuffer(bytes);
  const metadata = parquetMetadata(file);
  const limits = { decompress, maxDecompressedBytes };
  // hyparquet's page loop (the reader's objects), checked first by page-bounds.ts.
  const rows = readRows({ file, metadata }, limits);
  // The package's own page loop (a compaction's inputs, read flat).
  const chunk = metadata.row_groups[0]?.columns[0]?.meta_data;
  const start = Number(chunk?.data_page_offset);
  const columns = (async () =>
    readColumns(
      {
        metadata,
        group: 0,
        rows: o.rows,
        bytes: bytes.subarray(start, start + Number(chunk?.total_compressed_size)),
        start,
        coded,
      },
      limits,
    ))();
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
      'definition levels that run past the page (hyparquet counts -7 nulls, reads 8 indices)',
      {
        ...INT32,
        pages: [
          dataPage(
            1,
            ENCODING.RLE_DICTIONARY,
            withLevels([...rleRun(8), 1], [1, ...rleRun(1), 0, ...rleRun(2 ** 28), 0]),
          ),
        ],
      },
      /a run of values longer than its page/,
    ],
    [
      'repetition levels with a run of 2^28, then a length past the page',
      {
        type: 'INT32',
        repetition: 'REPEATED',
        rows: 1,
        pages: [dataPage(1, ENCODING.PLAIN, [0xff, 0xff, 0, 0, ...rleRun(2 ** 28), 0])],
      },
      /a run of values longer than its page/,
    ],
    [
      'a DELTA_BINARY_PACKED block of -1 miniblocks (hyparquet reads back over it, forever)',
      {
        type: 'INT32',
        repetition: 'REQUIRED',
        rows: 2,
        pages: [
          dataPage(2, ENCODING.DELTA_BINARY_PACKED, [
            ...varint(128),
            0xff,
            0xff,
            0xff,
            0xff,
            0x0f,
            2,
            0,
            0,
            0,
            0,
          ]),
        ],
      },
      /a DELTA_BINARY_PACKED block of 128 values in -1 miniblocks/,
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
      const [rows, columns] = bothWays(file);
      await expect(rows).rejects.toThrow(message);
      await expect(columns).rejects.toThrow(message);
    });
  }

  /** A version 1 page of PLAIN strings of an OPTIONAL column (null: a level 0). */
  const strings = (values: (string | null)[]) => {
    const present = values.filter((v) => v !== null).map((v) => Buffer.from(v));
    // The levels as one bit-packed group of 8 (width 1).
    const bits = values.reduce((b, v, i) => b | ((v === null ? 0 : 1) << i), 0);
    return dataPage(
      values.length,
      ENCODING.PLAIN,
      withLevels(
        [3, bits],
        present.flatMap((v) => [...new Uint8Array(Uint32Array.of(v.length).buffer), ...v]),
      ),
    );
  };
  /** A page whose one string claims 20 bytes and has 1: the rest would be the next page's. */
  const tooLong = dataPage(1, ENCODING.PLAIN, withLevels([3, 1], [20, 0, 0, 0, 0x61]));

  test('a PLAIN string past its page is refused both ways, coded or not, whatever pages come before', async () => {
    const files = [
      [tooLong, strings(['after'])],
      [strings(['a', 'b']), tooLong, strings(['after'])],
      // A page with a null first: a coded read takes the column as strings from there on.
      [strings([null, 'a']), tooLong, strings(['after'])],
    ];
    for (const pages of files) {
      const rows = pages.length + 1;
      const file = { type: 'BYTE_ARRAY' as const, repetition: 'OPTIONAL' as const, rows, pages };
      for (const coded of [false, true]) {
        for (const read of bothWays(file, undefined, coded)) {
          await expect(read).rejects.toThrow('Parquet column c: a PLAIN string past its page');
        }
      }
    }
  });

  test('PLAIN strings read coded are the strings read as values, whichever pages hold nulls', async () => {
    const orders = [
      [strings(['a', 'b']), strings(['c', null])],
      [strings([null, 'b']), strings(['c', 'd'])],
      [strings(['\ufeffé', 'b']), strings(['😀', null]), strings(['e', 'f'])],
    ];
    for (const pages of orders) {
      const file = {
        type: 'BYTE_ARRAY' as const,
        repetition: 'OPTIONAL' as const,
        rows: 2 * pages.length,
        pages,
      };
      const [rows, plain] = bothWays(file);
      const [, coded] = bothWays(file, undefined, true);
      const expected = (await rows).rows.map((r) => r.c ?? null);
      const values = (read: Awaited<typeof coded>) =>
        Array.from(Utf8Values.strings(read.columns.get('c') as LeafValues));
      expect(values(await plain)).toEqual(expected);
      expect(values(await coded)).toEqual(expected);
    }
  });

  test('a read refuses a dictionary index past its dictionary (its value would be made up)', async () => {
    const two = page(
      { field_1: PAGE.DICTIONARY_PAGE, field_7: { field_1: 2, field_2: 0 } },
      [1, 0, 0, 0, 0x61, 1, 0, 0, 0, 0x62],
    );
    // Bit width 2, one RLE run of index 1 (b), then of index 3 (past the two).
    const file = (index: number) => ({
      type: 'BYTE_ARRAY' as const,
      repetition: 'REQUIRED' as const,
      rows: 2,
      pages: [two, dataPage(2, ENCODING.RLE_DICTIONARY, [2, ...rleRun(1), 1, ...rleRun(1), index])],
    });
    const [goodRows, good] = bothWays(file(0));
    expect((await goodRows).rows).toEqual([{ c: 'b' }, { c: 'a' }]);
    expect(Array.from((await good).columns.get('c') as ArrayLike<unknown>)).toEqual(['b', 'a']);
    for (const bad of bothWays(file(3))) {
      await expect(bad).rejects.toThrow('Parquet column c: a dictionary index past its dictionary');
    }
    // Bit width 32, one RLE run of 0xfffffffb: hyparquet reads it as -5.
    const negative = {
      ...file(0),
      pages: [
        two,
        dataPage(2, ENCODING.RLE_DICTIONARY, [32, ...rleRun(2), 0xfb, 0xff, 0xff, 0xff]),
      ],
    };
    for (const bad of bothWays(negative)) {
      await expect(bad).rejects.toThrow('Parquet column c: a dictionary index past its dictionary');
    }
    // Indices without a dictionary page: nothing to look them up in.
    const orphan = { ...file(0), pages: file(0).pages.slice(1) };
    for (const bad of bothWays(orphan)) {
      await expect(bad).rejects.toThrow('Parquet column c: a dictionary index past its dictionary');
    }
  });

  test('a dictionary page or a PLAIN page that claims more values than it holds is refused both ways', async () => {
    const int32s = (...v: number[]) => [...new Uint8Array(Int32Array.from(v).buffer)];
    // Two INT32 entries claimed three, then a data page whose next bytes would be the third.
    const dictionary = (claimed: number) =>
      page(
        { field_1: PAGE.DICTIONARY_PAGE, field_7: { field_1: claimed, field_2: 0 } },
        int32s(5, 6),
      );
    const coded = (index: number) =>
      dataPage(2, ENCODING.RLE_DICTIONARY, [2, ...rleRun(1), index, ...rleRun(1), 0]);
    const file = (pages: Uint8Array[]) => ({
      type: 'INT32' as const,
      repetition: 'REQUIRED' as const,
      rows: 2,
      pages,
    });
    const [goodRows] = bothWays(file([dictionary(2), coded(1)]));
    expect((await goodRows).rows).toEqual([{ c: 6 }, { c: 5 }]);
    // Before: index 2 read the data page's header bytes as a third entry.
    for (const bad of bothWays(file([dictionary(3), coded(2)]))) {
      await expect(bad).rejects.toThrow(
        'Parquet column c: a dictionary page of 3 entries: 3 PLAIN INT32 values past their page',
      );
    }
    // Strings: two claimed, one there.
    const strings = page(
      { field_1: PAGE.DICTIONARY_PAGE, field_7: { field_1: 2, field_2: 0 } },
      [1, 0, 0, 0, 0x61],
    );
    const stringFile = {
      type: 'BYTE_ARRAY' as const,
      repetition: 'REQUIRED' as const,
      rows: 2,
      pages: [strings, dataPage(2, ENCODING.RLE_DICTIONARY, [1, ...rleRun(2), 0])],
    };
    for (const bad of bothWays(stringFile)) {
      await expect(bad).rejects.toThrow(
        'a dictionary page of 2 entries: a PLAIN string past its page',
      );
    }
    // A PLAIN data page of two INT32 values holding one, before a page whose bytes would follow.
    const plain = file([
      dataPage(2, ENCODING.PLAIN, int32s(7)),
      dataPage(1, ENCODING.PLAIN, int32s(8)),
    ]);
    for (const bad of bothWays({ ...plain, rows: 3 })) {
      await expect(bad).rejects.toThrow('Parquet column c: 2 PLAIN INT32 values past their page');
    }
  });

  test('a read decodes at most maxDecompressedBytes values', async () => {
    // 200,000 nulls: one run of definition levels, a few bytes stored, 200,000 values decoded.
    const nulls = {
      ...INT32,
      rows: 200_000,
      pages: [dataPage(200_000, ENCODING.PLAIN, withLevels([...rleRun(200_000), 0]))],
    };
    for (const way of bothWays(nulls, 100_000)) {
      await expect(way).rejects.toThrow(
        'Parquet pages of more than 100000 values in one read (maxDecompressedBytes)',
      );
    }
    const [rows, columns] = bothWays(nulls, 200_000);
    expect((await rows).rows).toHaveLength(200_000);
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
