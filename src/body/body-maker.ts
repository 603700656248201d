import { requireZstdEngine, type ZstdEngine } from '../compression/zstd-engine.js';
import type { BodyMaker, BodyMakerOptions } from './body-types.js';
import { createThreadBodyMaker } from './thread-body-maker.js';
import { createWorkerBodyMaker } from './worker-body-maker.js';

/**
 * The work that needs a thread of its own: a Parquet file (CPU work on megabytes, in
 * JavaScript), and zstd through the zstd-napi addon (it runs on the calling thread). Everything
 * else runs on libuv's pool through node:zlib's asynchronous API, with no thread of ours.
 */
export function needsWorker(body: 'framed' | 'parquet', engine: ZstdEngine | undefined): boolean {
  return body === 'parquet' || engine === 'zstd-napi';
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
  return needsWorker(options.body, engine)
    ? createWorkerBodyMaker(resolved)
    : createThreadBodyMaker(resolved);
}

export * from './body-types.js';
