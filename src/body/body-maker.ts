import { requireZstdEngine, type ZstdEngine } from '../compression/zstd-engine.js';
import type { SignalName } from '../signals/signal.js';
import type { BodyMaker, BodyMakerOptions } from './body-types.js';
import { createThreadBodyMaker } from './thread-body-maker.js';
import { createWorkerBodyMaker } from './worker-body-maker.js';

/**
 * The signals whose Parquet writer comes in steps (src/parquet/steps.js), so that it can run on
 * the exporter's thread in slices. Spans' and log records' plans are one piece: theirs stay in
 * the worker.
 */
export const slicedSignal = (signal: SignalName | undefined): boolean => signal === 'metrics';

/**
 * The work that needs a thread of its own: zstd through the zstd-napi addon (it runs on the
 * calling thread), for a framed body or a Parquet file's pages, and a Parquet file of spans or
 * log records (their writer has no steps: one long piece of CPU work). Everything else runs on
 * libuv's pool through node:zlib's asynchronous API, with no thread of ours; a Parquet file of
 * metrics is written on the exporter's thread in short slices, its pages compressed on the pool
 * (parquet-body.js slicedParquetMaker). `parquetThread` forces the worker (tests, the bench).
 */
export function needsWorker(
  body: 'framed' | 'parquet',
  engine: ZstdEngine | undefined,
  signal?: SignalName,
  parquetThread?: 'worker' | 'event-loop',
): boolean {
  if (engine === 'zstd-napi') return true;
  if (body === 'framed') return false;
  return parquetThread === 'worker' || !slicedSignal(signal);
}

/**
 * The body maker of a format and compression. The zstd engine is chosen here, so a runtime with
 * none fails at construction with ZstdUnavailableError rather than at the first batch. Neither
 * kind starts a thread here: a worker starts at its first batch.
 */
export function createBodyMaker(options: BodyMakerOptions): BodyMaker {
  const engine =
    options.compression === 'zstd' ? (options.engine ?? requireZstdEngine()) : undefined;
  const resolved = { ...options, engine };
  const signal = options.body === 'parquet' ? options.signal : undefined;
  return needsWorker(options.body, engine, signal, options.parquetThread)
    ? createWorkerBodyMaker(resolved)
    : createThreadBodyMaker(resolved);
}

export * from './body-types.js';
