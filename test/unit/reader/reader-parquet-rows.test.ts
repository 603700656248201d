import { join } from 'node:path';
import {
  type ColumnChunk,
  type ColumnMetaData,
  type FileMetaData,
  parquetMetadata,
  parquetReadObjects,
  type RowGroup,
} from 'hyparquet';
import { beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { readLogRecords, readSpans, spanRows, type UnreadableObject } from '../../../src/reader.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { runCliInProcess } from '../../support/cli-child.js';
import { withFooter } from '../../support/hostile-parquet.js';
import { collect, writeAtKey } from '../../support/reader-fixtures.js';
import {
  encodeSpans,
  type RecordedTrace,
  recordTrace,
  signalKeyAt,
} from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';
import { v1File } from '../../support/v1-pages.js';
import { zstdCompress } from '../../support/zstd.js';

/**
 * Parquet files of this package's schema whose pages are sound but whose rows no exporter
 * writes: each column is read right, and only their rows together say the file is damaged.
 * Such a file must be reported unreadable, not read as rows made up.
 */

type Rows = Record<string, unknown>[];

let recorded: RecordedTrace;
let dir: string;
beforeAll(async () => {
  recorded = await recordTrace();
  dir = await makeTempDir('otel-s3-parquet-rows-');
  return () => removeDir(dir);
});

/** The recorded spans as the exporter stores them, and as hyparquet reads that file's rows. */
async function spansFile() {
  const builders = spanColumnBuilders();
  builders.append(recorded.spans, newTally(false));
  const file = new Uint8Array(await flatEncoder(SPANS)(builders.seal(), { compression: 'none' }));
  const metadata = parquetMetadata(file.slice().buffer);
  const rows = (await parquetReadObjects({ file: file.slice().buffer })) as Rows;
  return { metadata, rows };
}

/** The recorded log records as the exporter stores them. */
async function logsFile(): Promise<Uint8Array> {
  const builders = logColumnBuilders();
  builders.append(recorded.logs, newTally(false));
  return new Uint8Array(await flatEncoder(LOG_RECORDS)(builders.seal(), { compression: 'none' }));
}

/** The spans of a file at its own key, read by readSpans: the spans, and what it refused. */
async function readSpansFile(name: string, file: Uint8Array, signal: 'traces' | 'logs' = 'traces') {
  const root = join(dir, name);
  await writeAtKey(root, signalKeyAt(signal, 'parquet', 'p', READER_T0, '.parquet'), file);
  const problems: UnreadableObject[] = [];
  const read = signal === 'traces' ? readSpans : readLogRecords;
  const objects = await collect(read({ dir: root, prefix: 'p', onError: (p) => problems.push(p) }));
  return { objects, problems };
}

describe("a span's parallel list columns that disagree are refused, not paired up", () => {
  test('unchanged, rewritten by another writer, the file reads', async () => {
    const { metadata, rows } = await spansFile();
    const { objects, problems } = await readSpansFile(
      'same',
      v1File(metadata.schema, metadata.key_value_metadata ?? [], rows),
    );
    expect(problems).toEqual([]);
    expect(objects).toHaveLength(1);
  });

  const cases: { name: string; edit: (row: Record<string, unknown>) => void; says: string }[] = [
    {
      name: 'more event times than event names',
      edit: (row) => {
        row['Events.Timestamp'] = [1n, 2n];
        row['Events.Name'] = ['exception'];
        row['Events.Attributes'] = [{}, {}];
      },
      says: 'Events.Timestamp, Events.Name, Events.Attributes hold 2, 1, 2 elements',
    },
    {
      name: 'event names but no event times',
      edit: (row) => {
        row['Events.Timestamp'] = [];
        row['Events.Name'] = ['exception'];
        row['Events.Attributes'] = [];
      },
      says: 'Events.Timestamp, Events.Name, Events.Attributes hold 0, 1, 0 elements',
    },
    {
      name: 'a link without its span id',
      edit: (row) => {
        row['Links.TraceId'] = ['5b8efff798038103d269b633813fc60c'];
        row['Links.SpanId'] = [];
        row['Links.TraceState'] = [''];
        row['Links.Attributes'] = [{}];
      },
      says: 'Links.TraceId, Links.SpanId, Links.TraceState, Links.Attributes hold 1, 0, 1, 1 elements',
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { metadata, rows } = await spansFile();
      const row = rows[0] as Record<string, unknown>;
      c.edit(row);
      const { objects, problems } = await readSpansFile(
        c.name.replaceAll(' ', '-'),
        v1File(metadata.schema, metadata.key_value_metadata ?? [], rows),
      );
      expect(objects).toEqual([]);
      expect(problems.map((p) => p.stage)).toEqual(['decode']);
      expect(problems[0]?.error.message).toContain(c.says);
    });
  }
});

/** The column chunk of `column` in the footer's first row group. */
function chunkOf(metadata: FileMetaData, column: string): ColumnChunk {
  const chunk = metadata.row_groups[0]?.columns.find(
    (c) => c.meta_data?.path_in_schema.join('.') === column,
  );
  if (chunk?.meta_data === undefined) throw new Error(`no column chunk ${column}`);
  return chunk;
}

describe("a footer whose column chunks are not the schema's columns is refused", () => {
  // hyparquet decodes a chunk by the type its footer entry claims, and gives a row no value of a
  // column no chunk is for: each of these was read as rows with times, durations or names made up.
  const cases: {
    name: string;
    signal: 'traces' | 'logs';
    edit: (metadata: FileMetaData) => void;
  }[] = [
    {
      name: 'a chunk of Duration claiming INT32 values',
      signal: 'traces',
      edit: (m) => {
        (chunkOf(m, 'Duration').meta_data as { type: string }).type = 'INT32';
      },
    },
    {
      name: 'a chunk of Timestamp claiming INT32 values',
      signal: 'traces',
      edit: (m) => {
        (chunkOf(m, 'Timestamp').meta_data as { type: string }).type = 'INT32';
      },
    },
    {
      name: 'no chunk of SpanName',
      signal: 'traces',
      edit: (m) => {
        const group = m.row_groups[0] as { columns: ColumnChunk[] };
        group.columns = group.columns.filter((c) => c !== chunkOf(m, 'SpanName'));
      },
    },
    {
      name: "SpanName's chunk claiming to be StatusMessage's",
      signal: 'traces',
      edit: (m) => {
        (chunkOf(m, 'SpanName').meta_data as { path_in_schema: string[] }).path_in_schema = [
          'StatusMessage',
        ];
      },
    },
    {
      name: "SpanName's chunk pointing at SpanKind's bytes",
      signal: 'traces',
      edit: (m) => {
        const name = chunkOf(m, 'SpanName').meta_data as ColumnMetaData;
        const kind = chunkOf(m, 'SpanKind').meta_data as ColumnMetaData;
        name.data_page_offset = kind.data_page_offset;
        name.dictionary_page_offset = kind.dictionary_page_offset;
        name.total_compressed_size = kind.total_compressed_size;
      },
    },
    {
      name: 'no chunk of Body in a file of log records',
      signal: 'logs',
      edit: (m) => {
        const group = m.row_groups[0] as { columns: ColumnChunk[] };
        group.columns = group.columns.filter((c) => c !== chunkOf(m, 'Body'));
      },
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const file =
        c.signal === 'traces'
          ? new Uint8Array(await flatEncoder(SPANS)(await sealedSpans(), { compression: 'none' }))
          : await logsFile();
      // Unchanged, the file reads.
      expect(
        (await readSpansFile(`${c.name.replaceAll(/\W/g, '-')}-same`, file, c.signal)).objects,
      ).toHaveLength(1);
      const { objects, problems } = await readSpansFile(
        c.name.replaceAll(/\W/g, '-'),
        withFooter(file, c.edit),
        c.signal,
      );
      expect(objects).toEqual([]);
      expect(problems.map((p) => p.stage)).toEqual(['decode']);
      expect(problems[0]?.error.message).toContain('column chunk');
    });
  }
});

async function sealedSpans() {
  const builders = spanColumnBuilders();
  builders.append(recorded.spans, newTally(false));
  return builders.seal();
}

/**
 * `file` with the uncompressed size in the header of the first page of `column` halved, in
 * place: the thrift compact header starts with its type (0x15, a byte) and that size (0x15, a
 * zigzag varint), rewritten in as many bytes.
 */
function withPageSizeHalved(file: Uint8Array, column: string): { file: Uint8Array; size: number } {
  const meta = chunkOf(parquetMetadata(file.slice().buffer), column).meta_data;
  const at = Number(meta?.dictionary_page_offset ?? meta?.data_page_offset) + 3;
  expect(file[at - 1]).toBe(0x15);
  const out = file.slice();
  let zigzag = 0;
  let end = at;
  for (let shift = 0; ; shift += 7) {
    const b = out[end++] as number;
    zigzag += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
  }
  const size = Math.max(Math.floor(zigzag / 4), 2 ** (7 * (end - at - 1) - 1));
  let v = size * 2;
  for (let i = at; i < end; i++, v = Math.floor(v / 128)) {
    out[i] = (v & 0x7f) | (i < end - 1 ? 0x80 : 0);
  }
  return { file: out, size };
}

test('a zstd page that decompresses to more than its header says is refused as such, not as over a limit', async () => {
  const file = new Uint8Array(
    await flatEncoder(SPANS)(await sealedSpans(), {
      compression: 'zstd',
      compressPage: (page: Uint8Array) => zstdCompress(page),
    }),
  );
  expect((await readSpansFile('zstd-page-same', file)).objects).toHaveLength(1);
  const lying = withPageSizeHalved(file, 'SpanName');
  const { objects, problems } = await readSpansFile('zstd-page-lying', lying.file);
  expect(objects).toEqual([]);
  // Not "over the maxDecompressedBytes limit of N B": the read's limit is 64 MiB, and raising
  // it would not make the page read.
  expect(problems.map((p) => [p.stage, p.error.message.replace(/^.*: /, '')])).toEqual([
    [
      'decode',
      `a Parquet page that decompresses to more than the ${lying.size} bytes its header says`,
    ],
  ]);
});

describe('a row group of a negative number of rows is refused, not read short or long', () => {
  // The file's count is its row groups' (6 - 3 = 3), which alone passed: the row group of -3
  // rows (its chunks empty) was never checked, and the 6 spans were read as 3 (or 6 of a
  // file of 3).
  const bogus = (m: FileMetaData): RowGroup => {
    const real = m.row_groups[0] as RowGroup;
    const columns = real.columns.map((c) => ({
      ...c,
      meta_data: { ...(c.meta_data as ColumnMetaData), total_compressed_size: 0n },
    }));
    return { ...real, columns, num_rows: -3n };
  };
  const lies: { name: string; edit: (metadata: FileMetaData) => void }[] = [
    {
      name: 'before the real one',
      edit: (m) => {
        m.row_groups.unshift(bogus(m));
        m.num_rows = 3n;
      },
    },
    {
      name: 'after the real one',
      edit: (m) => {
        m.row_groups.push(bogus(m));
        m.num_rows = 3n;
      },
    },
  ];
  for (const lie of lies) {
    test(lie.name, async () => {
      const file = new Uint8Array(
        await flatEncoder(SPANS)(await sealedSpans(), { compression: 'none' }),
      );
      const { objects, problems } = await readSpansFile(
        `negative-rows-${lie.name.replaceAll(' ', '-')}`,
        withFooter(file, lie.edit),
      );
      expect(objects).toEqual([]);
      expect(problems.map((p) => [p.stage, p.error.message.replace(/^.*: /, '')])).toEqual([
        ['decode', 'a Parquet row group of -3 rows'],
      ]);
    });
  }
});

test('the CLI reports such files of spans unreadable and exits 1: spans, trace', async () => {
  const { metadata, rows } = await spansFile();
  const traceId = String(rows[0]?.TraceId);
  const unequal = rows.map((r) => ({ ...r }));
  (unequal[0] as Record<string, unknown>)['Events.Name'] = [];
  const root = join(dir, 'cli');
  const good = new Uint8Array(
    await flatEncoder(SPANS)(await sealedSpans(), { compression: 'none' }),
  );
  const files = [
    v1File(metadata.schema, metadata.key_value_metadata ?? [], unequal),
    withFooter(good, (m) => {
      (chunkOf(m, 'Duration').meta_data as { type: string }).type = 'INT32';
    }),
    good,
  ];
  for (const file of files) {
    await writeAtKey(root, signalKeyAt('traces', 'parquet', 'p', READER_T0, '.parquet'), file);
  }
  for (const args of [
    ['spans', '--format', 'jsonl'],
    ['trace', traceId],
  ]) {
    const run = await runCliInProcess([...args, '--dir', root, '--prefix', 'p'], { cwd: root });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('Events.Timestamp, Events.Name, Events.Attributes hold 1, 0, 1');
    expect(run.stderr).toContain('column chunk');
    expect(run.stdout).toContain('add item');
  }
});

describe('attribute keys "__proto__" and "constructor" are keys like any other', () => {
  /** Attributes with keys an object's prototype answers to, as a user's code may set them. */
  const awkward = (): Record<string, string> =>
    JSON.parse('{"__proto__":"x","constructor":"y","a":"1"}');
  /** The first recorded span with those attributes, and its resource's too. */
  function awkwardSpan() {
    const span = recorded.spans[0] as (typeof recorded.spans)[number];
    const resource = Object.create(span.resource, {
      attributes: { value: { ...span.resource.attributes, ...awkward() } },
    });
    return Object.create(span, { attributes: { value: awkward() }, resource: { value: resource } });
  }

  test('read from Parquet as from OTLP/JSON: the span, its resource, the CLI', async () => {
    const builders = spanColumnBuilders();
    builders.append([awkwardSpan()], newTally(false));
    const parquet = new Uint8Array(
      await flatEncoder(SPANS)(builders.seal(), { compression: 'none' }),
    );
    const json = encodeSpans([awkwardSpan()], 'otlp-json', 'none');
    for (const [name, file, format] of [
      ['awkward-parquet', parquet, 'parquet'],
      ['awkward-json', json, 'otlp-json'],
    ] as const) {
      const root = join(dir, name);
      await writeAtKey(
        root,
        signalKeyAt('traces', format, 'p', READER_T0, format === 'parquet' ? '.parquet' : '.json'),
        file,
      );
      const problems: UnreadableObject[] = [];
      const objects = await collect(
        readSpans({ dir: root, prefix: 'p', onError: (p) => problems.push(p) }),
      );
      expect(problems).toEqual([]);
      const rows = objects.flatMap((o) => spanRows(o.request));
      expect(rows, name).toHaveLength(1);
      const attributes = rows[0]?.attributes;
      expect(Object.entries(attributes ?? {}), name).toEqual(Object.entries(awkward()));
      expect(Object.getPrototypeOf(attributes), name).toBe(Object.prototype);
      const resource = Object.entries(rows[0]?.resource ?? {});
      expect(resource, name).toEqual(expect.arrayContaining(Object.entries(awkward())));

      const run = await runCliInProcess(
        ['spans', '--format', 'jsonl', '--dir', root, '--prefix', 'p'],
        { cwd: root },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout, name).toContain('"__proto__":"x","constructor":"y","a":"1"');
    }
  });

  test('a file of another writer repeating a key: the request keeps both, its row the last', async () => {
    const { metadata, rows } = await spansFile();
    (rows[0] as Record<string, unknown>).SpanAttributes = [
      { key: 'a', value: '1' },
      { key: '__proto__', value: 'x' },
      { key: 'a', value: '2' },
    ];
    const { objects, problems } = await readSpansFile(
      'repeated-key',
      v1File(metadata.schema, metadata.key_value_metadata ?? [], rows),
    );
    expect(problems).toEqual([]);
    const [row] = spanRows(objects[0]?.request ?? {}).filter((r) => r.spanId === rows[0]?.SpanId);
    // As from an OTLP object that repeats a key: its KeyValues as they are, its row the last.
    const spans = JSON.stringify(objects[0]?.request, (_, v) =>
      typeof v === 'bigint' ? String(v) : v,
    );
    expect(spans).toContain(
      '"attributes":[{"key":"a","value":{"stringValue":"1"}},{"key":"__proto__","value":{"stringValue":"x"}},{"key":"a","value":{"stringValue":"2"}}]',
    );
    expect(Object.entries(row?.attributes ?? {})).toEqual([
      ['a', '2'],
      ['__proto__', 'x'],
    ]);
  });
});
