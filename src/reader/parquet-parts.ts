import type { AsyncBuffer, FileMetaData, KeyValue, RowGroup } from 'hyparquet';
import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { SignalName } from '../layout/formats.js';
import {
  type ColumnsRead,
  type ExpectedSchema,
  groupBytes,
  ownBuffer,
  readColumns,
  readRows,
  schemaMetadata,
} from '../parquet/read.js';
import { mayHold } from '../parquet/row-group-filter.js';
import { readTraceRows } from '../signals/flat-parquet/read.js';
import { expectedSchema } from '../signals/flat-parquet/table.js';
import { logRows } from '../signals/logs/parquet-read.js';
import { LOG_RECORDS } from '../signals/logs/parquet-schema.js';
import { rowsToRequest } from '../signals/metrics/parquet/rows-to-request.js';
import { EXPECTED_SCHEMA, SCHEMA_VERSION_KEY } from '../signals/metrics/parquet/schema.js';
import type { Row } from '../signals/parquet-values.js';
import { spanRows } from '../signals/traces/parquet-read.js';
import { SPANS } from '../signals/traces/parquet-schema.js';
import { decompress } from './decompress.js';
import { ObjectTooLargeError, type ReadLimits } from './read-limits.js';

/**
 * A Parquet object of this package's schema read one row group at a time, so a file of any size
 * (a compaction output of 128 MiB, say) costs the memory of one row group: its stored bytes
 * (at most `maxObjectBytes`), their decompressed pages (at most `maxDecompressedBytes`) and its
 * rows (at most MAX_ROW_GROUP_ROWS). The footer is read first, and only when it is within
 * MAX_FOOTER_BYTES and both limits.
 */

/**
 * Parquet objects larger than this are read in parts by readMetrics: one row group at a time,
 * never whole (this package's own files are smaller: its batches are at most 8 MiB of OTLP).
 */
export const PARQUET_PARTS_BYTES = 16 * 1024 * 1024;

/** Whether readMetrics reads an object in parts (see PARQUET_PARTS_BYTES), not whole. */
export const readInParts = (format: string, size: number): boolean =>
  format === 'parquet' && size > PARQUET_PARTS_BYTES;

/**
 * Each signal's Parquet schema version, its rows as its request, and whether its compaction's
 * appender takes strings as dictionary indices (`coded`: spans' and log records',
 * src/compact/flat-append-columns.ts).
 */
const SCHEMAS: Record<
  SignalName,
  { expected: ExpectedSchema; request(rows: Row[]): OtlpObject; coded: boolean }
> = {
  metrics: { expected: EXPECTED_SCHEMA, request: (rows) => rowsToRequest(rows), coded: false },
  traces: {
    expected: expectedSchema(SPANS),
    request: (rows) => spanRows.rowsToRequest(rows),
    coded: true,
  },
  logs: {
    expected: expectedSchema(LOG_RECORDS),
    request: (rows) => logRows.rowsToRequest(rows),
    coded: true,
  },
};

/** The signal whose Parquet table has schema version `version`, if any. */
export function signalOfSchemaVersion(version: string | undefined): SignalName | undefined {
  return (Object.keys(SCHEMAS) as SignalName[]).find(
    (s) => SCHEMAS[s].expected.version === version,
  );
}

/** Bytes of a file, read by range: from memory, from S3 (Range GETs) or from a local file. */
export interface ByteRanges {
  readonly byteLength: number;
  read(start: number, end: number): Promise<Uint8Array>;
}

/**
 * The largest footer read. This package's files have footers of a few KB; a compaction output
 * that replaces thousands of OTLP objects lists them there (about 80 bytes each).
 */
export const MAX_FOOTER_BYTES = 16 * 1024 * 1024;
/** The tail read first: a footer of a few row groups (a few KiB) and its length and magic. */
const TAIL_GUESS_BYTES = 64 * 1024;

/**
 * The most rows in one row group. Ours hold at most 65,536 (ROW_GROUP_ROWS); rows cost far more
 * decoded than stored (a run of equal values can encode millions in a few bytes), so a file
 * claiming more is refused rather than decoded.
 */
export const MAX_ROW_GROUP_ROWS = 262_144;

/** One row group as its signal's request (an ExportMetricsServiceRequest, ...). */
export interface ParquetPart {
  request: OtlpObject;
  rows: number;
  /** Decompressed bytes of its pages. */
  rawBytes: number;
}

export interface ParquetParts {
  /** Rows (data points) in the file, as its footer says. */
  readonly rows: number;
  /** Row groups. */
  readonly count: number;
  readonly keyValues: readonly KeyValue[];
  /** The file's last bytes: its footer, its length and PAR1 (what parquetMetadata() reads). */
  readonly footer: Uint8Array;
  /**
   * Row group `index`; throws for bad data or a limit, ObjectTooLargeError for the latter. With
   * `traceId` (lower-case hex), its rows of that trace only.
   */
  read(index: number, traceId?: string): Promise<ParquetPart>;
  /**
   * Whether row group `index` may hold rows of trace `traceId` (lower-case hex), by its
   * `TraceId` statistics and bloom filter (row-group-filter.ts); true for metrics' files.
   */
  mayHoldTrace(index: number, traceId: string): Promise<boolean>;
  /** Row group `index` as columns (the compactor's), with the same checks and limits. */
  readColumns(index: number): Promise<ColumnsRead>;
}

/** Bytes in memory as ranges. */
export function bytesAsRanges(bytes: Uint8Array): ByteRanges {
  return {
    byteLength: bytes.length,
    read: async (start, end) => bytes.subarray(start, end),
  };
}

/**
 * Reads the footer and checks it: this package's schema version of `signal`'s table, row groups
 * within the limits. Throws (with what is wrong) for anything else.
 */
export async function openParquetParts(
  file: ByteRanges,
  limits: ReadLimits,
  signal: SignalName = 'metrics',
): Promise<ParquetParts> {
  const schema = SCHEMAS[signal];
  if (file.byteLength < 12) throw new Error('not a Parquet file: too short');
  // The last bytes at once, the footer most often among them: one request, not two, per file
  // (a lookup over S3 waits for each in turn). Never more than a limit allows.
  const guess = Math.min(
    file.byteLength,
    TAIL_GUESS_BYTES,
    limits.maxObjectBytes,
    limits.maxDecompressedBytes,
  );
  const tail = await file.read(file.byteLength - Math.max(8, guess), file.byteLength);
  const view = new DataView(tail.buffer, tail.byteOffset + tail.length - 8, 8);
  if (view.getUint32(4, true) !== 0x31524150) throw new Error('not a Parquet file: no PAR1 footer');
  const footerBytes = view.getUint32(0, true);
  // Damage first: a length the file cannot hold says nothing of its size.
  if (footerBytes + 12 > file.byteLength) throw new Error('Parquet footer longer than the file');
  checkFooterSize(footerBytes, limits);
  const footer =
    footerBytes + 8 <= tail.length
      ? tail.subarray(tail.length - 8 - footerBytes)
      : await file.read(file.byteLength - 8 - footerBytes, file.byteLength);
  const metadata = schemaMetadata(
    footer,
    SCHEMA_VERSION_KEY,
    schema.expected,
    limits.maxDecompressedBytes,
  );
  let rows = 0;
  const groups = metadata.row_groups.map((group) => {
    const checked = checkedGroup(group, rows, file.byteLength, limits);
    rows += checked.rows;
    return checked;
  });
  if (BigInt(rows) !== BigInt(metadata.num_rows)) {
    throw new Error(`Parquet footer says ${metadata.num_rows} rows, its row groups ${rows}`);
  }
  return {
    rows,
    count: groups.length,
    keyValues: metadata.key_value_metadata ?? [],
    footer,
    read: (index, traceId) =>
      withLimit(readGroup(file, metadata, groups, index, limits, schema.request, traceId), limits),
    mayHoldTrace: (index, traceId) =>
      signal === 'metrics'
        ? Promise.resolve(true)
        : mayHold(metadata, index, 'TraceId', traceId, (start, end) => file.read(start, end)),
    readColumns: (index) =>
      withLimit(readGroupColumns(file, metadata, groups, index, limits, schema.coded), limits),
  };
}

/**
 * The footer is held with every row group and yielded with each: refused before it is fetched
 * when it is over MAX_FOOTER_BYTES, or over a limit the file read whole would be held to (its
 * stored bytes, and, being uncompressed, its decompressed bytes). Each an ObjectTooLargeError,
 * as every size limit of the reader is.
 */
function checkFooterSize(footerBytes: number, limits: ReadLimits): void {
  // Stored bytes refused before they are fetched, as over maxObjectBytes: stage 'fetch'.
  if (footerBytes > MAX_FOOTER_BYTES) {
    throw new ObjectTooLargeError(
      'maxObjectBytes',
      MAX_FOOTER_BYTES,
      footerBytes,
      'Parquet footer',
      true,
    );
  }
  for (const limit of ['maxObjectBytes', 'maxDecompressedBytes'] as const) {
    if (footerBytes > limits[limit]) {
      throw new ObjectTooLargeError(limit, limits[limit], footerBytes, 'Parquet footer');
    }
  }
}

/**
 * A row group's read, its pages past the decompression budget refused with the limit the
 * caller gave: the decompressor names what was left of it when a page went over.
 */
async function withLimit<T>(read: Promise<T>, limits: ReadLimits): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof ObjectTooLargeError && error.limit === 'maxDecompressedBytes') {
      throw new ObjectTooLargeError('maxDecompressedBytes', limits.maxDecompressedBytes);
    }
    throw error;
  }
}

interface Group {
  /** First row of the group in the file. */
  firstRow: number;
  rows: number;
  /** The stored bytes of its column chunks. */
  start: number;
  end: number;
}

function checkedGroup(
  group: RowGroup,
  firstRow: number,
  fileBytes: number,
  limits: ReadLimits,
): Group {
  const rows = Number(group.num_rows);
  if (!(rows >= 0 && rows <= MAX_ROW_GROUP_ROWS)) {
    throw new Error(
      `a Parquet row group of ${group.num_rows} rows (at most ${MAX_ROW_GROUP_ROWS})`,
    );
  }
  const { start, end } = groupBytes(group, fileBytes);
  if (end - start > limits.maxObjectBytes) {
    throw new ObjectTooLargeError('maxObjectBytes', limits.maxObjectBytes, end - start);
  }
  return { firstRow, rows, start, end };
}

/** A row group's stored bytes (one read), as hyparquet reads them, and its rows' range. */
async function groupBuffer(
  file: ByteRanges,
  groups: Group[],
  index: number,
): Promise<{ asyncBuffer: AsyncBuffer; group: Group; bytes: Uint8Array }> {
  const group = groups[index];
  if (group === undefined) throw new RangeError(`no row group ${index}`);
  // One read for the whole row group; hyparquet's slices are served from it.
  const bytes = await file.read(group.start, group.end);
  const asyncBuffer: AsyncBuffer = {
    byteLength: file.byteLength,
    slice(start, end = file.byteLength) {
      if (start < group.start || end > group.end) {
        throw new Error('a Parquet page outside its row group');
      }
      return ownBuffer(bytes.subarray(start - group.start, end - group.start));
    },
  };
  return { asyncBuffer, group, bytes };
}

async function readGroupColumns(
  file: ByteRanges,
  metadata: FileMetaData,
  groups: Group[],
  index: number,
  limits: ReadLimits,
  coded: boolean,
): Promise<ColumnsRead> {
  const { group, bytes } = await groupBuffer(file, groups, index);
  return readColumns(
    { metadata, group: index, rows: group.rows, bytes, start: group.start, coded },
    { decompress, maxDecompressedBytes: limits.maxDecompressedBytes },
  );
}

async function readGroup(
  file: ByteRanges,
  metadata: FileMetaData,
  groups: Group[],
  index: number,
  limits: ReadLimits,
  toRequest: (rows: Row[]) => OtlpObject,
  traceId: string | undefined,
): Promise<ParquetPart> {
  const { asyncBuffer, group, bytes } = await groupBuffer(file, groups, index);
  const { firstRow } = group;
  const read = {
    file: asyncBuffer,
    stored: { bytes, start: group.start },
    metadata,
    group: index,
    rowStart: firstRow,
    rowEnd: firstRow + group.rows,
  };
  const decompression = { decompress, maxDecompressedBytes: limits.maxDecompressedBytes };
  if (traceId !== undefined) {
    const { rows, rawBytes } = await readTraceRows(read, decompression, traceId);
    return { request: toRequest(rows as Row[]), rows: rows.length, rawBytes };
  }
  const { rows, rawBytes } = await readRows(read, decompression);
  if (rows.length !== group.rows) {
    throw new Error(
      `Parquet row group ${index} held ${rows.length} rows, its footer says ${group.rows}`,
    );
  }
  return { request: toRequest(rows as Row[]), rows: rows.length, rawBytes };
}
