import { Worker } from 'node:worker_threads';
import { settleWithin } from '../base/deadline.js';
import { log } from '../base/log.js';
import { ownsItsArrayBuffer } from '../encoding/handed-over.js';
import type { TransferableColumns } from '../signals/signal.js';
import {
  type BodyMaker,
  BodyMakerError,
  type BodyMakerOptions,
  type BodyRequest,
  type PreparedBody,
  type ReturnedContents,
} from './body-types.js';

/**
 * How long the body worker may sit idle before it exits. A worker holds its own V8 heap and
 * isolate (megabytes that the service pays while nothing happens); starting one again costs a
 * few tens of milliseconds of CPU, off the event loop, once per batch at most. With the default
 * batch ages (a minute, ten for Parquet) the worker is there while a batch is made and gone
 * between batches.
 */
export const WORKER_IDLE_EXIT_MILLIS = 30_000;

/**
 * How long close() waits for the worker to stop. terminate() resolves once the worker's thread
 * has stopped, which a thread inside a native call (a compression library's) does only when the
 * call returns: a shutdown must not wait for that.
 */
const STOP_GRACE_MILLIS = 1_000;

/**
 * How long the worker may take to answer a job, at least: a worker that answers nothing by then
 * (stuck in a native call, or waiting for something that never comes) is stopped, so that it does
 * not hold every later batch. A batch's body takes well under a second at the default 8 MiB.
 */
export const WORKER_ANSWER_MIN_MILLIS = 30_000;

/** A slow rate to make a body at: a worker at nice +10 on busy cores, at zstd's top level. */
const SLOW_BYTES_PER_SECOND = 100 * 1024;

/**
 * The deadline of a job: WORKER_ANSWER_MIN_MILLIS, or a batch of `maxBatchBytes` made at
 * SLOW_BYTES_PER_SECOND when that is longer (82 s at the default 8 MiB).
 */
export function workerAnswerMillis(maxBatchBytes: number | undefined): number {
  const slow = Math.ceil(((maxBatchBytes ?? 0) / SLOW_BYTES_PER_SECOND) * 1000);
  return Math.max(WORKER_ANSWER_MIN_MILLIS, slow);
}

/** A small young generation: the worker nudges a scavenge after each job (see body-worker.js). */
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
  /** With an error: the job's records or columns, handed back. */
  records?: ArrayBuffer[];
  lengths?: number[];
  columns?: TransferableColumns;
}

/** What goes to the worker for a request, and the memory it takes by transfer. */
function workerMessage(
  id: number,
  request: BodyRequest & { frame?: undefined },
): { message: object; transfer: ArrayBuffer[] } {
  const { framing, sha256, crc32 } = request;
  if (request.columns !== undefined) {
    const { columns } = request;
    return { message: { id, columns, sha256, crc32 }, transfer: columns.transfer };
  }
  const records = request.records.map(ownedArrayBuffer);
  const lengths = request.records.map((r) => r.length);
  return { message: { id, records, lengths, framing, sha256, crc32 }, transfer: records };
}

/** The contents an error reply hands back. */
function returned(reply: Reply): ReturnedContents | undefined {
  if (reply.columns !== undefined) return { columns: reply.columns };
  if (reply.records === undefined) return undefined;
  return { records: reply.records.map((b, i) => Buffer.from(b, 0, reply.lengths?.[i])) };
}

/** An ArrayBuffer that starts with `data` (its length travels beside it), transferable without taking anyone else's memory. */
function ownedArrayBuffer(data: Buffer): ArrayBuffer {
  if (ownsItsArrayBuffer(data)) return data.buffer as ArrayBuffer;
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return copy.buffer;
}

/**
 * Bodies made in a worker thread (body-worker.js, at nice +10 on Linux), for the work that needs
 * one (see needsWorker). The worker starts at the first batch, keeps the process alive only
 * while a job runs, exits after WORKER_IDLE_EXIT_MILLIS without one, and is started again by the
 * next batch (also after it died).
 */
export function createWorkerBodyMaker(options: BodyMakerOptions): BodyMaker {
  const { body, compression, level, engine } = options;
  const signal = options.body === 'parquet' ? options.signal : undefined;
  const idleExitMillis = options.workerIdleExitMillis ?? WORKER_IDLE_EXIT_MILLIS;
  const answerMillis = options.workerAnswerMillis ?? workerAnswerMillis(options.maxBatchBytes);
  const jobs = new Map<number, Job>();
  let worker: Worker | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  /** The deadline of the job the worker makes now (the oldest it has not answered). */
  let answerTimer: NodeJS.Timeout | undefined;
  let nextId = 1;
  let closed = false;

  const failAll = (error: Error) => {
    for (const job of jobs.values()) job.reject(error);
    jobs.clear();
  };

  /**
   * Stops a worker without waiting for it for long: terminate() resolves only once its thread
   * has stopped, which a thread inside a native call does only when the call returns.
   */
  const stop = async (w: Worker, when: string): Promise<void> => {
    if (!(await settleWithin(w.terminate(), STOP_GRACE_MILLIS))) {
      log.warn(
        `the compression worker did not stop within ${STOP_GRACE_MILLIS} ms of ${when}; it is left to end on its own`,
      );
    }
  };

  /** Gives the worker's oldest job until the deadline to be answered; none when it has no job. */
  const watch = (w: Worker) => {
    clearTimeout(answerTimer);
    answerTimer = undefined;
    if (jobs.size === 0) return;
    answerTimer = setTimeout(() => {
      answerTimer = undefined;
      if (worker !== w) return;
      // Its jobs' records or columns were moved to it: they end with it.
      worker = undefined;
      failAll(
        new BodyMakerError(
          `the compression worker did not answer within ${answerMillis} ms; it is stopped and its batch is lost`,
        ),
      );
      // Not referenced: one that does not stop must not hold the process at its exit either.
      w.unref();
      void stop(w, 'its deadline');
    }, answerMillis);
    // The worker keeps the process alive while it has a job; the deadline need not.
    answerTimer.unref();
  };

  const stopWhenIdle = (w: Worker) => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idleTimer = undefined;
      if (worker !== w || jobs.size > 0) return;
      worker = undefined;
      void w.terminate();
    }, idleExitMillis);
    idleTimer.unref();
  };

  const start = (): Worker => {
    const w = new Worker(new URL('./body-worker.js', import.meta.url), {
      workerData: {
        body,
        signal,
        compression,
        level,
        zstdEngine: engine,
      },
      // A small young generation: the worker frees the buffers a job received once its body is
      // made, and nudges a scavenge after each job for the rest (see body-worker.js).
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    w.unref();
    w.on('message', (reply: Reply) => {
      const job = jobs.get(reply.id);
      if (job === undefined) return;
      jobs.delete(reply.id);
      // Jobs run one after another: the next one starts now.
      watch(w);
      if (jobs.size === 0) {
        w.unref();
        stopWhenIdle(w);
      }
      if (reply.error !== undefined || reply.body === undefined) {
        job.reject(
          new BodyMakerError(
            `${body === 'parquet' ? 'Parquet' : compression} body failed: ${reply.error}`,
            returned(reply),
          ),
        );
      } else {
        job.resolve({ body: Buffer.from(reply.body), sha256: reply.sha256, crc32: reply.crc32 });
      }
    });
    w.on('error', (error) => {
      if (worker !== w) return; // stopped on purpose: its jobs were failed then
      worker = undefined;
      clearTimeout(answerTimer);
      failAll(new BodyMakerError(`compression worker failed: ${error.message}`));
    });
    w.on('exit', (code) => {
      if (worker !== w) return; // stopped on purpose: idle, closed, or past its deadline
      worker = undefined;
      clearTimeout(answerTimer);
      failAll(new BodyMakerError(`compression worker exited with code ${code}`));
    });
    return w;
  };

  return {
    runsIn: 'worker',
    openFrame: undefined,
    make(request) {
      // A frame is compressed as it comes, on libuv's pool: this maker never opens one.
      if (request.frame !== undefined) {
        return Promise.reject(new BodyMakerError('the worker makes no body of a frame'));
      }
      if (closed) return Promise.reject(new BodyMakerError('the exporter is shut down', request));
      clearTimeout(idleTimer);
      try {
        worker ??= start();
      } catch (error) {
        // No thread (ERR_WORKER_INIT_FAILED: out of threads or memory): nothing was handed
        // over, so the caller keeps its batch and stores it another way.
        const { code, message } = error as NodeJS.ErrnoException;
        return Promise.reject(
          new BodyMakerError(
            `could not start the compression worker: ${code === undefined ? '' : `${code} `}${message}`,
            request,
          ),
        );
      }
      const w = worker;
      return new Promise<PreparedBody>((resolve, reject) => {
        const id = nextId++;
        jobs.set(id, { resolve, reject });
        if (jobs.size === 1) {
          w.ref();
          watch(w);
        }
        const { message, transfer } = workerMessage(id, request);
        try {
          w.postMessage(message, transfer);
        } catch (error) {
          // Not sent (e.g. one ArrayBuffer listed twice): nothing was transferred, the caller
          // keeps its records, and the worker must not stay referenced for this job.
          jobs.delete(id);
          if (jobs.size === 0) {
            clearTimeout(answerTimer);
            w.unref();
            stopWhenIdle(w);
          }
          reject(
            new BodyMakerError(
              `could not hand the batch to the worker: ${(error as Error).message}`,
              request,
            ),
          );
        }
      });
    },
    async close() {
      closed = true;
      clearTimeout(idleTimer);
      clearTimeout(answerTimer);
      const w = worker;
      worker = undefined;
      if (w !== undefined) await stop(w, 'shutdown');
      failAll(new BodyMakerError('the exporter is shut down'));
    },
  };
}
