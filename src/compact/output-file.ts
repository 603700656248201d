import { ByteWriter, type ColumnSource, ParquetWriter } from 'hyparquet-writer';
import { DEFAULTS } from '../config/options.js';
import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { Compression } from '../formats.js';
import { COMPRESSION_ROWS } from '../formats.js';
import { TableBuilder } from '../parquet/rows.js';
import { ROW_GROUP_ROWS, SCHEMA, SCHEMA_VERSION, SCHEMA_VERSION_KEY } from '../parquet/schema.js';
import { pageCompressor } from './page-compressor.js';
import { countPoints } from './points.js';
import { sortColumns } from './sort-columns.js';

/**
 * One output file, written one sorted run at a time: requests go into column builders; a run
 * (what the builders hold) is sorted as the exporter sorts a file and encoded into row groups;
 * the footer comes last. The file's bytes grow in one buffer whose untouched pages cost no
 * memory, so the file is never copied to be uploaded.
 *
 * This is the compactor's one seam with the Parquet writer. It runs on what `main` has today
 * (rows.js's TableBuilder, hyparquet-writer's ParquetWriter); the column builders and the
 * writer of src/parquet/ replace both behind this interface.
 */
export interface OutputFile {
  /** Appends a request's data points; returns how many. */
  add(request: OtlpObject): number;
  /** Rows added so far, encoded or buffered. */
  readonly rows: number;
  /** Memory the buffered (not yet encoded) rows hold, estimated. */
  readonly bufferedBytes: number;
  readonly bufferedRows: number;
  /** Bytes of the file so far (header and encoded runs). */
  readonly encodedBytes: number;
  /** Sorts and encodes what is buffered as row groups of the file. */
  flushRun(): Promise<void>;
  /** Encodes what is left and writes the footer; the file's bytes. */
  finish(keyValues: { key: string; value: string }[]): Promise<Uint8Array>;
}

export interface OutputFileOptions {
  compression: Compression;
  /** The file's expected size, to reserve (not touch) its buffer. */
  expectedBytes: number;
}

/**
 * Memory one buffered row costs, encoding included: rows.js's TableBuilder holds about 0.76 KB
 * of JS values a row (mostly its per-row attribute objects), sorting and hyparquet-writer's
 * per-run arrays about as much again (measured: 1.7-2 KB a row at the peak). The column
 * builders report their real size instead.
 */
export const BUFFERED_ROW_BYTES = 2_000;

export function createOutputFile(options: OutputFileOptions): OutputFile {
  const writer = new ReservedWriter(options.expectedBytes);
  const codec = COMPRESSION_ROWS[options.compression].parquetCodec;
  const compress = pageCompressor(options.compression, levelOf(options.compression));
  const parquet = new ParquetWriter({
    writer,
    schema: SCHEMA,
    codec,
    ...(compress === undefined ? {} : { compressors: { [codec]: compress } }),
    createdBy: 'otel-s3-exporter compaction',
  });
  let table = new TableBuilder();
  let rows = 0;
  let bufferedRows = 0;

  const flushRun = async (): Promise<void> => {
    if (bufferedRows === 0) return;
    const { columns } = table.build();
    table = new TableBuilder();
    bufferedRows = 0;
    await parquet.write({
      columnData: sortColumns(columns) as ColumnSource[],
      rowGroupSize: ROW_GROUP_ROWS,
    });
  };

  return {
    add(request) {
      for (const rm of Array.isArray(request.resourceMetrics) ? request.resourceMetrics : []) {
        table.addResourceMetrics(rm);
      }
      const points = countPoints(request);
      rows += points;
      bufferedRows += points;
      return points;
    },
    get rows() {
      return rows;
    },
    get bufferedRows() {
      return bufferedRows;
    },
    get bufferedBytes() {
      return bufferedRows * BUFFERED_ROW_BYTES;
    },
    get encodedBytes() {
      return writer.offset;
    },
    flushRun,
    async finish(extra) {
      await flushRun();
      parquet.kvMetadata = [{ key: SCHEMA_VERSION_KEY, value: SCHEMA_VERSION }, ...extra];
      await parquet.finish();
      if (parquet.num_rows !== BigInt(rows)) {
        throw new Error(`the writer wrote ${parquet.num_rows} rows of ${rows} added`);
      }
      return writer.bytes();
    },
  };
}

function levelOf(compression: Compression): number {
  return compression === 'gzip' ? DEFAULTS.gzipLevel : DEFAULTS.zstdLevel;
}

/**
 * hyparquet-writer's ByteWriter over one buffer reserved at the expected size: the pages the
 * file does not reach are never touched, so they take no memory, and the file's bytes are a view
 * of the buffer (no copy to upload). It grows like ByteWriter if the file outgrows it.
 */
class ReservedWriter extends ByteWriter {
  constructor(expectedBytes: number) {
    super(Math.max(1024, Math.ceil(expectedBytes)));
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.buffer, 0, this.index);
  }
}
