import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Codec } from './codec.js';

/** A compression failure; `input` gives the caller its bytes back when the worker returned them. */
export class CompressionError extends Error {
  readonly input: Buffer | undefined;
  constructor(message: string, input?: Buffer) {
    super(message);
    this.name = 'CompressionError';
    this.input = input;
  }
}

interface Job {
  resolve(data: Buffer): void;
  reject(error: Error): void;
}

interface Reply {
  id: number;
  data?: ArrayBuffer;
  error?: string;
}

/** Fails at construction, not at the first batch, when the native addon is missing. */
function assertZstdLoads(): void {
  try {
    createRequire(import.meta.url)('zstd-napi');
  } catch (error) {
    throw new Error(
      `otel-s3-exporter: compression 'zstd' needs the zstd-napi native addon, which failed to load (${(error as Error).message}). ` +
        'It builds at install time: npm 11 skips dependency install scripts unless allowed ' +
        '(`npm install-scripts approve zstd-napi`, then `npm rebuild zstd-napi`), and building needs python3, make and a C++ compiler. ' +
        "Or choose compression: 'gzip'.",
    );
  }
}

/** An ArrayBuffer holding exactly `data`, transferable without taking anyone else's memory. */
function ownedArrayBuffer(data: Buffer): ArrayBuffer {
  const buffer = data.buffer;
  if (
    buffer instanceof ArrayBuffer &&
    data.byteOffset === 0 &&
    data.byteLength === buffer.byteLength
  ) {
    return buffer;
  }
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return copy.buffer;
}

/**
 * zstd in one worker thread per exporter that owns one reused compression context (a context
 * per batch grows native memory until finalizers run). The worker only keeps the process
 * alive while a job is running; it is restarted if it ever dies.
 */
export function zstdCodec(level: number): Codec {
  assertZstdLoads();
  const jobs = new Map<number, Job>();
  let worker: Worker | undefined;
  let nextId = 1;
  let closed = false;

  const failAll = (error: Error) => {
    for (const job of jobs.values()) job.reject(error);
    jobs.clear();
  };

  const start = (): Worker => {
    const w = new Worker(new URL('./zstd-worker.js', import.meta.url), { workerData: { level } });
    w.unref();
    w.on('message', (reply: Reply) => {
      const job = jobs.get(reply.id);
      if (job === undefined) return;
      jobs.delete(reply.id);
      if (jobs.size === 0) w.unref();
      const data = reply.data === undefined ? undefined : Buffer.from(reply.data);
      if (reply.error !== undefined || data === undefined) {
        job.reject(new CompressionError(`zstd compression failed: ${reply.error}`, data));
      } else {
        job.resolve(data);
      }
    });
    w.on('error', (error) => {
      failAll(new CompressionError(`zstd worker failed: ${error.message}`));
      if (worker === w) worker = undefined;
    });
    w.on('exit', (code) => {
      failAll(new CompressionError(`zstd worker exited with code ${code}`));
      if (worker === w) worker = undefined;
    });
    return w;
  };

  // Start the worker now: its start-up (~100 ms) then never lands inside a flush or a shutdown.
  worker = start();

  return {
    name: 'zstd',
    extension: '.zst',
    contentType: 'application/zstd',
    compress(data) {
      if (closed) return Promise.reject(new CompressionError('zstd codec is closed', data));
      worker ??= start();
      const w = worker;
      return new Promise<Buffer>((resolve, reject) => {
        const id = nextId++;
        jobs.set(id, { resolve, reject });
        if (jobs.size === 1) w.ref();
        const buffer = ownedArrayBuffer(data);
        w.postMessage({ id, data: buffer }, [buffer]);
      });
    },
    async close() {
      closed = true;
      const w = worker;
      worker = undefined;
      if (w !== undefined) await w.terminate();
      failAll(new CompressionError('zstd codec closed'));
    },
  };
}
