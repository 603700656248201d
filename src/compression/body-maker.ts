import { Worker } from 'node:worker_threads';
import type { Compression } from '../config.js';
import type { Framing } from '../encoding/format.js';
import { ownsItsArrayBuffer } from '../encoding/handed-over.js';
import { COMPRESSION_ROWS } from '../formats.js';
import { requireZstdEngine, type ZstdEngine } from './zstd-engine.js';

export interface BodyRequest {
  /** The batch's records. Their memory is transferred to the worker: do not use them afterwards. */
  records: Buffer[];
  framing: Framing | null;
  /** Compute the SHA-256 SigV4 signs (so the SDK does not hash on the event loop). */
  sha256: boolean;
  /** Compute the CRC32 checksum S3 checks (when the client sends one). */
  crc32: boolean;
}

export interface PreparedBody {
  body: Buffer;
  /** Hex SHA-256 of the body, when asked for. */
  sha256: string | undefined;
  /** Base64 big-endian CRC32 of the body, when asked for. */
  crc32: string | undefined;
}

/** A failure to make a body; `records` gives the caller its bytes back when the worker returned them. */
export class BodyMakerError extends Error {
  readonly records: Buffer[] | undefined;
  constructor(message: string, records?: Buffer[]) {
    super(message);
    this.name = 'BodyMakerError';
    this.records = records;
  }
}

/** Makes the bytes of an object from a batch's records, off the event loop. */
export interface BodyMaker {
  make(request: BodyRequest): Promise<PreparedBody>;
  /** Stops the worker; later calls to make() reject. */
  close(): Promise<void>;
}

export interface BodyMakerOptions {
  /** Which body the worker makes (the format's row in src/formats.ts). */
  body: 'framed' | 'parquet';
  compression: Compression;
  level: number;
  /** The zstd engine, instead of this runtime's choice (tests and the bench measure both). */
  engine?: ZstdEngine;
}

const YOUNG_GENERATION_MB = 2;

interface Job {
  resolve(body: PreparedBody): void;
  reject(error: Error): void;
}

interface Reply {
  id: number;
  body?: ArrayBuffer;
  sha256?: string;
  crc32?: string;
  error?: string;
  records?: ArrayBuffer[];
  lengths?: number[];
}

/** An ArrayBuffer that starts with `data` (its length travels beside it), transferable without taking anyone else's memory. */
function ownedArrayBuffer(data: Buffer): ArrayBuffer {
  if (ownsItsArrayBuffer(data)) return data.buffer as ArrayBuffer;
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return copy.buffer;
}

/**
 * One worker thread per exporter, started at once (its start-up then never lands inside a flush
 * or a shutdown), owning its zstd compressor. It keeps the process alive only while a job runs,
 * and is restarted if it ever dies. The zstd engine is chosen here, so a runtime with none fails
 * at construction with ZstdUnavailableError rather than at the first batch; `engine` overrides
 * the choice (tests and the bench measure both).
 */
export function createBodyMaker(options: BodyMakerOptions): BodyMaker {
  const { body, compression, level, engine } = options;
  const zstdEngine = compression === 'zstd' ? (engine ?? requireZstdEngine()) : undefined;
  const jobs = new Map<number, Job>();
  let worker: Worker | undefined;
  let nextId = 1;
  let closed = false;

  const failAll = (error: Error) => {
    for (const job of jobs.values()) job.reject(error);
    jobs.clear();
  };

  const start = (): Worker => {
    const w = new Worker(new URL('./body-worker.js', import.meta.url), {
      workerData: {
        body,
        compression,
        level,
        zstdEngine,
        // The table's codec name, so the worker (plain JavaScript) holds no copy of it.
        parquetCodec: COMPRESSION_ROWS[compression].parquetCodec,
      },
      // A small young generation: the worker nudges a scavenge after each job, which frees the
      // megabytes of records it received (see body-worker.js).
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    w.unref();
    w.on('message', (reply: Reply) => {
      const job = jobs.get(reply.id);
      if (job === undefined) return;
      jobs.delete(reply.id);
      if (jobs.size === 0) w.unref();
      if (reply.error !== undefined || reply.body === undefined) {
        const records = reply.records?.map((b, i) => Buffer.from(b, 0, reply.lengths?.[i]));
        job.reject(
          new BodyMakerError(
            `${body === 'parquet' ? 'Parquet' : compression} body failed: ${reply.error}`,
            records,
          ),
        );
      } else {
        job.resolve({ body: Buffer.from(reply.body), sha256: reply.sha256, crc32: reply.crc32 });
      }
    });
    w.on('error', (error) => {
      failAll(new BodyMakerError(`compression worker failed: ${error.message}`));
      if (worker === w) worker = undefined;
    });
    w.on('exit', (code) => {
      failAll(new BodyMakerError(`compression worker exited with code ${code}`));
      if (worker === w) worker = undefined;
    });
    return w;
  };
  worker = start();

  return {
    make(request) {
      if (closed)
        return Promise.reject(new BodyMakerError('the exporter is shut down', request.records));
      worker ??= start();
      const w = worker;
      return new Promise<PreparedBody>((resolve, reject) => {
        const id = nextId++;
        jobs.set(id, { resolve, reject });
        if (jobs.size === 1) w.ref();
        const records = request.records.map(ownedArrayBuffer);
        try {
          w.postMessage(
            {
              id,
              records,
              lengths: request.records.map((r) => r.length),
              framing: request.framing,
              sha256: request.sha256,
              crc32: request.crc32,
            },
            records,
          );
        } catch (error) {
          // Not sent (e.g. one ArrayBuffer listed twice): nothing was transferred, the caller
          // keeps its records, and the worker must not stay referenced for this job.
          jobs.delete(id);
          if (jobs.size === 0) w.unref();
          reject(
            new BodyMakerError(
              `could not hand the batch to the worker: ${(error as Error).message}`,
              request.records,
            ),
          );
        }
      });
    },
    async close() {
      closed = true;
      const w = worker;
      worker = undefined;
      if (w !== undefined) await w.terminate();
      failAll(new BodyMakerError('the exporter is shut down'));
    },
  };
}
