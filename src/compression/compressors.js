// @ts-check
// The compressors of every compression, for the exporter's thread and for the body worker. Each
// keeps one context for its whole life: a new context per batch (or per page) costs page faults
// and native allocations every time, and with zstd-napi it is a leak that only finalizers free
// (DESIGN.md, decision 6). The engine is chosen by zstd-engine.ts and passed in. Plain
// JavaScript, so the same file runs in the worker from src/ (tests) and dist/ (the package).
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

/** @typedef {'zstd' | 'gzip' | 'none'} Compression */
/** @typedef {'node:zlib' | 'zstd-napi'} ZstdEngine */
/**
 * Compresses the parts of one object as one stream (a zstd frame, a gzip member), without
 * assembling them first; `close()` frees the context.
 * @typedef {{
 *   compress: (parts: Uint8Array[]) => Uint8Array | Promise<Uint8Array>,
 *   close: () => void,
 * }} PartsCompressor
 */
/**
 * Compresses one Parquet page into a frame of its own (the page's codec); `close()` frees what
 * it holds.
 * @typedef {{
 *   compressPage: (page: Uint8Array) => Uint8Array | Promise<Uint8Array>,
 *   close: () => void,
 * }} PageCompressor
 */
/** @typedef {{ compression: Compression, level: number, engine?: ZstdEngine | undefined }} CompressorOptions */

/** Output slices of node:zlib's streams: one batch's frame arrives in a few of them. */
const ZLIB_CHUNK_BYTES = 64 * 1024;

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

/** The compressor of whole objects for `compression`. @param {CompressorOptions} o @returns {PartsCompressor} */
export function partsCompressor(o) {
  if (o.compression === 'gzip') return zlibStream('gzip', o.level);
  if (o.compression === 'none') return { compress: (parts) => join(parts), close: () => {} };
  return zstdEngineOf(o) === 'zstd-napi' ? napiZstd(o.level) : zlibStream('zstd', o.level);
}

/**
 * The page compressor of the Parquet writer, which runs in the worker (it may block). A page is
 * small and its size is known: node:zlib's one-shot calls size their context to the page and
 * free it when they return, with no pool trip or stream bookkeeping per page, so they are the
 * cheaper call here, unlike for whole bodies (the measurements: docs/parquet.md, "The writer").
 * @param {CompressorOptions} o @returns {PageCompressor}
 */
export function createPageCompressor(o) {
  if (o.compression === 'none') return { compressPage: (page) => page, close: () => {} };
  if (o.compression === 'gzip') {
    return { compressPage: (page) => zlib.gzipSync(page, { level: o.level }), close: () => {} };
  }
  if (zstdEngineOf(o) === 'zstd-napi') {
    const napi = napiZstd(o.level);
    return { compressPage: (page) => napi.compress([page]), close: napi.close };
  }
  const params = { [zlib.constants.ZSTD_c_compressionLevel]: o.level };
  return { compressPage: (page) => zlib.zstdCompressSync(page, { params }), close: () => {} };
}

/** @param {CompressorOptions} o @returns {ZstdEngine} */
function zstdEngineOf(o) {
  if (o.engine === undefined) throw new Error('zstd needs an engine (see zstd-engine.ts)');
  return o.engine;
}

/**
 * zstd-napi (the native addon, for runtimes without zstd in node:zlib): one reused context, fed
 * part by part, so no assembled copy of the batch is made. It runs on the calling thread, so
 * the exporter calls it only in its worker.
 * @param {number} level @returns {PartsCompressor}
 */
export function napiZstd(level) {
  /** @type {typeof import('zstd-napi/binding.js')} */
  const binding = createRequire(import.meta.url)('zstd-napi/binding');
  const cctx = new binding.CCtx();
  cctx.setParameter(binding.CParameter.compressionLevel, level);
  const scratch = Buffer.allocUnsafe(binding.cStreamOutSize());
  /** @type {PartsCompressor['compress']} */
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
  // The context is freed by its finalizer: zstd-napi has no explicit free.
  return { compress, close: () => {} };
}

/**
 * node:zlib with one reused context: a stream fed the parts in turn (no assembled copy), each
 * object ended with a flush that closes the frame (zstd: ZSTD_e_end leaves the context ready for
 * the next; gzip: Z_FINISH, then reset() starts the next member on the same context). It runs
 * on libuv's pool, in slices of one output chunk; jobs queue one after another, so replies keep
 * their order.
 * @param {'zstd' | 'gzip'} kind @param {number} level @returns {PartsCompressor}
 */
export function zlibStream(kind, level) {
  /** @type {zlib.ZstdCompress | zlib.Gzip | undefined} */
  let stream;
  /** @type {Buffer[]} */
  let chunks = [];
  /** @type {(error: Error) => void} */
  let fail = () => {};
  const open = () => {
    const s =
      kind === 'zstd'
        ? zlib.createZstdCompress({
            params: { [zlib.constants.ZSTD_c_compressionLevel]: level },
            chunkSize: ZLIB_CHUNK_BYTES,
          })
        : zlib.createGzip({ level, chunkSize: ZLIB_CHUNK_BYTES });
    s.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
    s.on('error', (error) => {
      if (stream === s) stream = undefined; // a failed stream is not reused
      fail(error);
    });
    return s;
  };
  const end = kind === 'zstd' ? zlib.constants.ZSTD_e_end : zlib.constants.Z_FINISH;
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
          s.flush(end, () => {
            // reset() is there on every zlib stream (its type declares it on Zlib only).
            if (kind === 'gzip') /** @type {zlib.Gzip & { reset(): void }} */ (s).reset();
            resolve(join(chunks));
          });
        }),
    );
    queue = job.catch(() => undefined);
    return /** @type {Promise<Uint8Array>} */ (job);
  };
  const close = () => {
    stream?.destroy();
    stream = undefined;
    fail(new Error('the compressor is closed'));
  };
  return { compress, close };
}
