import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { Compression } from '../layout/formats.js';
import { MetricColumnBuilders } from '../signals/metrics/parquet/column-builders.js';
import { ParquetFileWriter } from '../signals/metrics/parquet/file-writer.js';

/**
 * One output file, written one sorted run at a time: requests go into the Parquet format's
 * column builders; a run (what the builders hold) is sorted as the exporter sorts a file and
 * written as row groups (src/parquet/file-writer.js); the footer comes last. The file's bytes
 * grow in one buffer reserved at the expected size (pages it never reaches cost no memory), and
 * are uploaded from it without a copy.
 */
export interface OutputFile {
  /** Appends a request's data points; returns how many. */
  add(request: OtlpObject): number;
  /** Rows added so far, written or buffered. */
  readonly rows: number;
  /** Memory the builders hold now (their real size, capacity included). */
  readonly bufferedBytes: number;
  readonly bufferedRows: number;
  /** Bytes of the file so far (header and written runs). */
  readonly encodedBytes: number;
  /** Sorts what the builders hold and writes it as row groups of the file. */
  flushRun(): Promise<void>;
  /** Writes what is left and the footer; the file's bytes. */
  finish(keyValues: { key: string; value: string }[]): Promise<Uint8Array>;
}

export interface OutputFileOptions {
  compression: Compression;
  /** Compresses one page (createPageCompressor's, one per merge); not called for 'none'. */
  compressPage: (page: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  /** The file's expected size, to reserve (not touch) its buffer. */
  expectedBytes: number;
}

export function createOutputFile(options: OutputFileOptions): OutputFile {
  const writer = new ParquetFileWriter({
    compression: options.compression,
    compressPage: options.compressPage,
    capacity: options.expectedBytes,
  });
  const builders = new MetricColumnBuilders();

  const flushRun = async (): Promise<void> => {
    if (builders.rows > 0) await writer.writeRun(builders.seal());
  };

  return {
    add: (request) => builders.appendRequest(request),
    get rows() {
      return writer.rows + builders.rows;
    },
    get bufferedRows() {
      return builders.rows;
    },
    get bufferedBytes() {
      return builders.bytes;
    },
    get encodedBytes() {
      return writer.bytes;
    },
    flushRun,
    async finish(keyValues) {
      await flushRun();
      return writer.finish(keyValues);
    },
  };
}
