// @ts-check
// The two zstd compressors the body worker can run, one per engine (zstd-engine.ts picks the
// engine). Each keeps one context for the life of the worker: a new context per batch costs
// page faults and native allocations every time (node:zlib's one-shot zstdCompressSync() over an
// assembled 8 MiB batch took 1.7-4x the CPU of a reused context: bench/zstd-engines.ts), and
// with zstd-napi it is the known leak. Plain JavaScript, like body-worker.js, so the same file
// runs from src/ (tests) and dist/ (the package).
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

/** @typedef {(parts: Uint8Array[]) => Uint8Array | Promise<Uint8Array>} ZstdCompressor */

/** The parts as one new array that owns its memory (safe to transfer). */
export function join(/** @type {Uint8Array[]} */ parts, total = sumLengths(parts)) {
  const body = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    body.set(part, at);
    at += part.length;
  }
  return body;
}

function sumLengths(/** @type {Uint8Array[]} */ parts) {
  return parts.reduce((n, p) => n + p.length, 0);
}

/**
 * zstd-napi (the native addon, for runtimes without zstd in node:zlib): one reused context, fed
 * part by part, so no assembled copy of the batch is ever made. Never a new context per batch:
 * native memory grew from 192 MB to 1075 MB RSS over 1000 of them (freed only by finalizers).
 */
export function napiZstd(/** @type {number} */ level) {
  /** @type {typeof import('zstd-napi/binding.js')} */
  const binding = createRequire(import.meta.url)('zstd-napi/binding');
  const cctx = new binding.CCtx();
  cctx.setParameter(binding.CParameter.compressionLevel, level);
  const scratch = Buffer.allocUnsafe(binding.cStreamOutSize());
  /** @type {ZstdCompressor} */
  const compress = (input) => {
    /** @type {Uint8Array[]} */
    const chunks = [];
    let total = 0;
    try {
      const last = input.length - 1;
      for (let i = 0; i <= Math.max(last, 0); i++) {
        let src = input[i] ?? new Uint8Array(0);
        const end = i >= last;
        for (;;) {
          const [remaining, produced, consumed] = cctx.compressStream2(
            scratch,
            src,
            end ? binding.EndDirective.end : binding.EndDirective.continue,
          );
          if (produced > 0) {
            chunks.push(new Uint8Array(scratch.subarray(0, produced))); // a copy: scratch is reused
            total += produced;
          }
          src = src.subarray(consumed);
          if (end ? remaining === 0 : src.length === 0) break;
        }
      }
    } catch (error) {
      cctx.reset(binding.ResetDirective.sessionOnly);
      throw error;
    }
    return join(chunks, total);
  };
  return compress;
}

/**
 * node:zlib (Node ≥ 22.15) with one reused context: a ZstdCompress stream fed the records in
 * turn (no assembled copy), each batch ended with flush(ZSTD_e_end), which closes the frame and
 * leaves the context ready for the next. node:zlib has no synchronous call that reuses a
 * context, so this runs on libuv's pool, in slices of one 64 KiB output chunk; batches queue one
 * after another. Measured through the worker it costs about the CPU of zstd-napi's reused
 * context, with the lowest main-thread stalls of the contenders (bench/zstd-engines.ts).
 */
export function zlibZstdStream(/** @type {number} */ level) {
  /** @type {zlib.ZstdCompress | undefined} */
  let stream;
  /** @type {Buffer[]} */
  let chunks = [];
  /** @type {(error: Error) => void} */
  let fail = () => {};
  const open = () => {
    const s = zlib.createZstdCompress({
      params: { [zlib.constants.ZSTD_c_compressionLevel]: level },
      chunkSize: 64 * 1024,
    });
    s.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
    s.on('error', (error) => {
      stream = undefined; // a failed stream is not reused
      fail(error);
    });
    return s;
  };
  /** @type {Promise<unknown>} */
  let queue = Promise.resolve();
  /** @type {(parts: Uint8Array[]) => Promise<Uint8Array>} */
  const compress = (parts) => {
    const job = queue.then(
      () =>
        new Promise((resolve, reject) => {
          stream ??= open();
          const s = stream;
          chunks = [];
          fail = reject;
          for (const part of parts) s.write(part);
          s.flush(zlib.constants.ZSTD_e_end, () => resolve(join(chunks)));
        }),
    );
    queue = job.catch(() => undefined);
    return /** @type {Promise<Uint8Array>} */ (job);
  };
  return compress;
}

/** The compressor of `engine` at `level`. */
export function zstdCompressor(
  /** @type {'node:zlib' | 'zstd-napi'} */ engine,
  /** @type {number} */ level,
) {
  return engine === 'node:zlib' ? zlibZstdStream(level) : napiZstd(level);
}
