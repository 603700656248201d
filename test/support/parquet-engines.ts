import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import {
  DuckDBBlobValue,
  DuckDBInstance,
  DuckDBListValue,
  type DuckDBStructValue,
  DuckDBTimestampTZValue,
} from '@duckdb/node-api';
import { parquetReadObjects } from 'hyparquet';
import pl from 'nodejs-polars';
import { inject, test } from 'vitest';
import { dbl, type Entry, type Row } from './parquet-expected.js';
import type { FlatRow } from './parquet-signal-batches.js';
import { zstdDecompress } from './zstd.js';

/**
 * Parquet files read by engines we did not write, each row spelled as parquet-batches.ts spells
 * the expected ones: DuckDB, Polars, hyparquet (in process) and pyarrow (a Python subprocess,
 * test/support/pyarrow_rows.py).
 */

const INT64 = ['TimeUnix', 'StartTimeUnix', 'ValueAsInt', 'Count', 'ZeroCount'];
const DOUBLE = ['Value', 'Sum', 'Min', 'Max'];
const INT64_LISTS = ['BucketCounts', 'PositiveBucketCounts', 'NegativeBucketCounts'];
const MAPS = ['ResourceAttributes', 'Attributes'];

const int64 = (v: unknown) =>
  v === null || v === undefined ? null : BigInt(v as bigint).toString();
const double = (v: unknown) => (v === null || v === undefined ? null : dbl(v as number));

/** A row whose values `value(column, v)` has already made plain, spelled canonically. */
function canonical(row: Record<string, unknown>, entries: (map: unknown) => Entry[]): Row {
  const out: Record<string, unknown> = { ...row };
  for (const c of INT64) out[c] = int64(row[c]);
  for (const c of DOUBLE) out[c] = double(row[c]);
  for (const c of INT64_LISTS) out[c] = (row[c] as unknown[]).map((v) => int64(v));
  out.ExplicitBounds = (row.ExplicitBounds as number[]).map((v) => dbl(v));
  for (const c of MAPS) out[c] = entries(row[c]);
  return out as unknown as Row;
}

const keyValues = (map: unknown): Entry[] =>
  (map as { key: string; value: string | null }[]).map((e) => [e.key, e.value ?? null]);

const keepBom = new TextDecoder('utf-8', { ignoreBOM: true });

/** A file's rows as hyparquet gives them: timestamps and strings raw, a map as an object. */
async function hyparquetObjects(path: string): Promise<Record<string, unknown>[]> {
  const file = new Uint8Array(await readFile(path)).buffer;
  return await parquetReadObjects({
    file,
    compressors: {
      ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompress(input)),
      GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)),
    },
    parsers: {
      timestampFromMicroseconds: (micros: bigint) => micros,
      timestampFromNanoseconds: (nanos: bigint) => nanos,
      // Its default TextDecoder drops a leading U+FEFF from every string.
      stringFromBytes: (bytes: Uint8Array) => bytes && keepBom.decode(bytes),
    } as never,
  });
}

const objectEntries = (m: unknown): Entry[] => Object.entries(m as Record<string, string | null>);

/** hyparquet gives a map as an object: its entries come back in object-key order. */
export async function hyparquetRows(path: string): Promise<Row[]> {
  return (await hyparquetObjects(path)).map((r) => canonical(r, objectEntries));
}

const STRINGS = [
  'ServiceName',
  'ResourceSchemaUrl',
  'ScopeName',
  'ScopeVersion',
  'ScopeSchemaUrl',
  'MetricName',
  'MetricDescription',
  'MetricUnit',
  'MetricType',
];

/** DuckDB's strings are read as bytes: its JavaScript binding drops a leading U+FEFF. */
export async function duckdbTableRows(path: string): Promise<Row[]> {
  const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const connection = await db.connect();
  const bytes = [
    ...STRINGS.map((c) => `encode(${c}) AS ${c}`),
    ...MAPS.map(
      (c) =>
        `list_transform(map_entries(${c}), e -> {'key': encode(e.key), 'value': encode(e.value)}) AS ${c}`,
    ),
  ];
  const text = (v: unknown) => (v instanceof DuckDBBlobValue ? keepBom.decode(v.bytes) : v);
  try {
    const reader = await connection.runAndReadAll(
      `SELECT * REPLACE (${bytes.join(', ')}) FROM read_parquet('${path}')`,
    );
    return reader.getRowObjects().map((row) => {
      const plain: Record<string, unknown> = {};
      for (const [c, v] of Object.entries(row)) {
        if (v instanceof DuckDBTimestampTZValue) plain[c] = v.micros;
        else if (MAPS.includes(c)) {
          plain[c] = (v as DuckDBListValue).items.map((e) => {
            const { key, value } = (e as DuckDBStructValue).entries;
            return { key: text(key), value: text(value) };
          });
        } else if (v instanceof DuckDBListValue) plain[c] = v.items;
        else plain[c] = text(v);
      }
      return canonical(plain, keyValues);
    });
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

/** DuckDB's value as plain JavaScript: lists as arrays, blobs (strings read as bytes) as text. */
const plainDuck = (v: unknown): unknown =>
  v instanceof DuckDBListValue
    ? v.items.map(plainDuck)
    : v instanceof DuckDBBlobValue
      ? keepBom.decode(v.bytes)
      : v;

/** A column of a flat table (the spans' and log records', src/signals/flat-parquet/table.js). */
export interface FlatColumn {
  readonly name: string;
  readonly kind: string;
  readonly list?: number;
}
/** A flat table's columns: how each engine's values are spelled back. */
export interface FlatColumns {
  readonly columns: readonly FlatColumn[];
}

function flatValue(kind: string, v: unknown, entries: (map: unknown) => Entry[]): unknown {
  if (v === null || v === undefined) return null;
  if (kind === 'timestamp' || kind === 'int64') return BigInt(v as bigint).toString();
  return kind === 'map' ? entries(v) : v;
}

/**
 * A flat table's row spelled as parquet-signal-batches.ts spells the expected ones: timestamps
 * and INT64 as decimal strings, maps as [key, value] pairs (`entries` reads an engine's map).
 */
export function flatRow(
  table: FlatColumns,
  row: Record<string, unknown>,
  entries: (map: unknown) => Entry[],
): FlatRow {
  const out: FlatRow = {};
  for (const { name, kind, list } of table.columns) {
    const v = row[name];
    out[name] =
      list === undefined
        ? flatValue(kind, v, entries)
        : (v as unknown[]).map((x) => flatValue(kind, x, entries));
  }
  return out;
}

/** A flat table's rows as hyparquet reads them (maps in object-key order), nanoseconds exact. */
export async function flatHyparquetRows(path: string, table: FlatColumns): Promise<FlatRow[]> {
  return (await hyparquetObjects(path)).map((r) => flatRow(table, r, objectEntries));
}

/** What DuckDB selects of a column: strings as bytes, timestamps as microseconds, INT64 as text. */
function duckColumn({ name, kind, list }: FlatColumn): string {
  const one = (x: string) =>
    kind === 'timestamp'
      ? `epoch_us(${x})::VARCHAR`
      : kind === 'int64'
        ? `${x}::VARCHAR`
        : kind === 'string' || kind === 'text'
          ? `encode(${x})`
          : kind === 'map'
            ? `list_transform(map_entries(${x}), e -> [encode(e.key), encode(e.value)])`
            : x;
  const c = `"${name}"`;
  return `${list === undefined ? one(c) : `list_transform(${c}, x -> ${one('x')})`} AS ${c}`;
}

/**
 * A flat table's rows as DuckDB reads them. It reads a UTC-adjusted TIMESTAMP(NANOS) as a
 * TIMESTAMP WITH TIME ZONE, which has microseconds: timestamps come as decimal microseconds.
 */
export async function flatDuckdbRows(path: string, table: FlatColumns): Promise<FlatRow[]> {
  const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const connection = await db.connect();
  try {
    const reader = await connection.runAndReadAll(
      `SELECT ${table.columns.map(duckColumn).join(', ')} FROM read_parquet('${path}')`,
    );
    return reader.getRowObjects().map((row) => {
      const plain = Object.fromEntries(Object.entries(row).map(([c, v]) => [c, plainDuck(v)]));
      return flatRow(table, plain, (m) => m as Entry[]);
    });
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

/** A flat table's rows as Polars reads them, 64-bit integers and nanoseconds exact (as text). */
export function flatPolarsRows(path: string, table: FlatColumns): FlatRow[] {
  const frame = pl.readParquet(path);
  const text = frame.select(
    ...table.columns.map(({ name, kind, list }) => {
      const c = pl.col(name);
      const int = kind === 'timestamp' ? pl.Int64 : kind === 'int64' ? pl.Utf8 : undefined;
      if (int === undefined) return c;
      return list === undefined
        ? c.cast(int).cast(pl.Utf8)
        : c.cast(pl.List(int)).cast(pl.List(pl.Utf8));
    }),
  );
  return (text.toRecords() as Record<string, unknown>[]).map((r) => flatRow(table, r, keyValues));
}

/** Polars gives 64-bit integers as doubles: they are cast to text first. */
export function polarsRows(path: string): Row[] {
  const frame = pl.readParquet(path);
  const text = frame.select(
    ...frame.columns.map((c) => {
      if (c === 'TimeUnix' || c === 'StartTimeUnix') return pl.col(c).cast(pl.Int64).cast(pl.Utf8);
      if (INT64.includes(c)) return pl.col(c).cast(pl.Utf8);
      if (INT64_LISTS.includes(c)) return pl.col(c).cast(pl.List(pl.Utf8));
      return pl.col(c);
    }),
  );
  return (text.toRecords() as Record<string, unknown>[]).map((r) => canonical(r, keyValues));
}

/**
 * The Python with pyarrow that the integration tests' global setup found or made
 * (test/support/pyarrow-python.ts), or why there is none.
 */
const pyarrow = inject('pyarrow');

/** A test that reads with pyarrow: skipped, with the reason the setup printed, only without Python 3 outside CI. */
export const testPyarrow: typeof test.skip =
  'unavailable' in pyarrow && pyarrow.skip ? test.skip : test;

/** The Python with pyarrow; without one, throws the setup's one line. */
export function pyarrowPython(): string {
  if ('unavailable' in pyarrow) throw new Error(pyarrow.unavailable);
  return pyarrow.python;
}

export interface PyarrowFile {
  rows: Row[];
  groups: { rows: number; statistics: Record<string, [string, string] | null> }[];
}

/** pyarrow spells doubles as the hex of their bits ("x" + 16 hex digits, little-endian). */
const fromHex = (v: unknown) =>
  typeof v === 'string' ? Buffer.from(v.slice(1), 'hex').readDoubleLE(0) : v;

interface PyarrowLine {
  path: string;
  rows: Record<string, unknown>[];
  groups: PyarrowFile['groups'];
}

/** Every file read by pyarrow in one subprocess. Without pyarrow, throws the setup's one line. */
async function pyarrowLines(paths: string[]): Promise<PyarrowLine[]> {
  const python = pyarrowPython();
  const script = new URL('./pyarrow_rows.py', import.meta.url).pathname;
  const { stdout } = await promisify(execFile)(python, [script, ...paths], {
    maxBuffer: 1 << 30,
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
    throw new Error(`pyarrow test: no Python at ${python} (OTEL_S3_PYARROW_PYTHON)`);
  });
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as PyarrowLine);
}

/** The metrics' files, read by pyarrow. */
export async function pyarrowFiles(paths: string[]): Promise<Map<string, PyarrowFile>> {
  const out = new Map<string, PyarrowFile>();
  for (const file of await pyarrowLines(paths)) {
    const rows = file.rows.map((r) => {
      const plain: Record<string, unknown> = { ...r };
      for (const c of DOUBLE) plain[c] = fromHex(r[c]);
      plain.ExplicitBounds = (r.ExplicitBounds as string[]).map(fromHex);
      return canonical(plain, (m) => m as Entry[]);
    });
    out.set(file.path, { rows, groups: file.groups });
  }
  return out;
}

/** A flat table's files (spans', log records'), read by pyarrow: their rows, every value exact. */
export async function pyarrowFlatFiles(
  paths: string[],
  table: FlatColumns,
): Promise<Map<string, FlatRow[]>> {
  const lines = await pyarrowLines(paths);
  return new Map(
    lines.map((f) => [f.path, f.rows.map((r) => flatRow(table, r, (m) => m as Entry[]))]),
  );
}
