import type { ZstdEngine } from '../compression/zstd-engine.js';
import type { Framing } from '../encoding/records.js';
import type { Compression } from '../layout/formats.js';
import type { SignalName, TransferableColumns } from '../signals/signal.js';

/**
 * What a sealed batch holds until its body is made: OTLP records (framed and compressed as a
 * whole), OTLP records already compressed as they came (a frame being ended; see
 * BodyMaker.openFrame), or Parquet columns (encoded by the worker). A worker takes their memory
 * by transfer: the caller must not use them afterwards, unless a BodyMakerError gives them back.
 */
export type BatchContents =
  | { records: Buffer[]; columns?: undefined; frame?: undefined }
  | { frame: Promise<Uint8Array>; records?: undefined; columns?: undefined }
  | { columns: TransferableColumns; records?: undefined; frame?: undefined };

/** What a BodyMakerError can give back: records or columns (a frame's records are gone). */
export type ReturnedContents = Exclude<BatchContents, { frame: Promise<Uint8Array> }>;

/** An object whose records are compressed as they are appended (BodyMaker.openFrame). */
export interface RecordFrame {
  /** Hands a record over; `consumed` is called once the compressor no longer reads it. */
  append(record: Buffer, consumed?: () => void): void;
  /** Closes the object; its compressed bytes. */
  end(): Promise<Uint8Array>;
}

export type BodyRequest = BatchContents & {
  /** How records join into one object (unused for columns). */
  framing: Framing | null;
  /** Compute the SHA-256 SigV4 signs (so the SDK does not hash on the event loop). */
  sha256: boolean;
  /** Compute the CRC32 checksum S3 checks (when the client sends one). */
  crc32: boolean;
};

export interface PreparedBody {
  body: Buffer;
  /** Hex SHA-256 of the body, when asked for. */
  sha256: string | undefined;
  /** Base64 big-endian CRC32 of the body, when asked for. */
  crc32: string | undefined;
}

/** A failure to make a body; `contents` gives the caller the batch back when it still has it. */
export class BodyMakerError extends Error {
  readonly contents: ReturnedContents | undefined;
  constructor(message: string, contents?: BatchContents) {
    super(message);
    this.name = 'BodyMakerError';
    this.contents = contents?.frame === undefined ? contents : undefined;
  }
}

/** Makes the bytes of an object from a batch's contents, off the event loop. */
export interface BodyMaker {
  /**
   * Where the work runs: libuv's pool through node:zlib (a Parquet file's pages; the file itself
   * on this thread in short slices), or the body worker.
   */
  readonly runsIn: 'thread-pool' | 'worker';
  /**
   * Starts an object whose records are compressed as they are appended, where the compressor
   * can take an object part by part (zstd on node:zlib): the open batch then holds compressed
   * bytes, and each record is freed as soon as it is compressed. Undefined elsewhere: records
   * are kept until their batch's body is made. The first record's length sizes zstd's window.
   */
  readonly openFrame:
    | ((framing: Framing | null, firstRecordBytes: number) => RecordFrame)
    | undefined;
  make(request: BodyRequest): Promise<PreparedBody>;
  /**
   * Loads what the first body will need (the Parquet writer's modules, on the exporter's
   * thread), so that the turn that makes it does not: called at the first export.
   */
  prepare?(): void;
  /** Frees the compression context and stops the worker; later calls to make() reject. */
  close(): Promise<void>;
}

/** Which body to make (the format's row in src/layout/formats.ts); Parquet's in whose schema. */
export type BodyKind = { body: 'framed' } | { body: 'parquet'; signal: SignalName };

export type BodyMakerOptions = BodyKind & {
  compression: Compression;
  level: number;
  /** The zstd engine, instead of this runtime's choice (tests and the bench measure both). */
  engine?: ZstdEngine;
  /** How long the worker may sit idle before it exits (tests); WORKER_IDLE_EXIT_MILLIS if not set. */
  workerIdleExitMillis?: number;
  /** The exporter's maxBatchBytes: it sizes a job's deadline in the worker (workerAnswerMillis). */
  maxBatchBytes?: number;
  /** A job's deadline in the worker (tests); workerAnswerMillis(maxBatchBytes) if not set. */
  workerAnswerMillis?: number;
  /**
   * Where a Parquet file is made: 'worker' forces the body worker (tests and the bench compare
   * it); by default the exporter's thread in slices wherever that is possible (needsWorker).
   */
  parquetThread?: 'worker' | 'event-loop';
  /**
   * Each export repeats the last one's items (the signal's row: metrics): a frame of records
   * then gets a zstd window that holds the last record (recordWindowLog in compressors.js).
   */
  recordsRepeat?: boolean;
};
