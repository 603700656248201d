// @ts-check
// The compressors of every compression, for the exporter's thread and for the body worker. Each
// keeps one context for its whole life: a new context per batch (or per page) costs page faults
// and native allocations every time, and with zstd-napi it is a leak that only finalizers free
// (docs/performance.md, "Measurements behind the zstd choices"). The engine is chosen by
// zstd-engine.ts and passed in. Plain JavaScript, so the same file runs in the worker from src/
// (tests) and dist/ (the package).
import * as zlib from 'node:zlib';
import { loadZstdAddon } from './zstd-addon.js';

/**
 * The codecs made here. Layout's Compression (src/layout/formats.ts) is the table of them, a
 * floor above, so it is not imported: tsc checks the two agree where body/ passes one as the
 * other.
 * @typedef {'zstd' | 'gzip' | 'none'} Compression
 */
/** @typedef {import('./zstd-engine.js').ZstdEngine} ZstdEngine */
/**
 * Compresses the parts of one object as one stream (a zstd frame, a gzip member), without
 * assembling them first; `close()` frees the context.
 * @typedef {{
 *   compress: (parts: Uint8Array[]) => Uint8Array | Promise<Uint8Array>,
 *   close: () => void,
 * }} PartsCompressor
 */
/**
 * One object's frame, compressed as its parts are written. `consumed` is called once the
 * compressor is done with a part (its memory may be freed); `end()` gives the whole frame.
 * `open(observe)` hands each output chunk of the frame, in order, to `observe` as it arrives
 * (for checksums computed on the way).
 * @typedef {{
 *   write: (part: Uint8Array, consumed?: () => void) => void,
 *   end: () => Promise<Uint8Array>,
 * }} FrameWriter
 */
/**
 * A compressor that also takes an object part by part: `open(observe, windowLog)` starts its
 * frame (zstd's window log for it: see recordWindowLog; the context's own when undefined), and
 * `compress(parts, windowLog)` is such a frame written at once.
 * @typedef {{
 *   open: (observe?: (chunk: Uint8Array) => void, windowLog?: number) => FrameWriter,
 *   compress: (parts: Uint8Array[], windowLog?: number) => Promise<Uint8Array>,
 *   close: () => void,
 * }} FrameCompressor
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

/** The smallest and largest zstd window a frame of records gets (256 KiB, 2 MiB: level 3's). */
export const MIN_RECORD_WINDOW_LOG = 18;
export const MAX_RECORD_WINDOW_LOG = 21;

/**
 * zstd's window log for a frame of records whose first record is `recordBytes` long. A frame's
 * context holds its window for the whole batch (about 2.1 MiB at level 3's 2 MiB window, one
 * per exporter), so the window is sized to what it gains. Where each export repeats the last
 * one's items (`recordsRepeat`: a metrics export carries every series again), a window that
 * still holds the last record lets each record be written as its differences from the last: the
 * smallest window of at least two records, up to level 3's own. Spans and log records are new
 * each export and repeat within a record: the smallest window. Measured on realistic exports
 * (docs/performance.md, "The window of a frame of records"): smaller windows make spans' and
 * log records' frames 0.4-4 % smaller, and metrics' records of 1.3 MB 32 % larger once the
 * window no longer holds the last record.
 * @param {number} recordBytes @param {boolean} recordsRepeat
 */
export function recordWindowLog(recordBytes, recordsRepeat) {
  if (!recordsRepeat) return MIN_RECORD_WINDOW_LOG;
  const log = Math.ceil(Math.log2(Math.max(1, 2 * recordBytes)));
  return Math.min(MAX_RECORD_WINDOW_LOG, Math.max(MIN_RECORD_WINDOW_LOG, log));
}

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

/** Bytes joinInTurns copies per turn of the event loop: a fraction of a millisecond. */
const JOIN_SLICE_BYTES = 512 * 1024;

/**
 * join(), for a body on the event loop's thread: one turn copies up to JOIN_SLICE_BYTES of
 * parts, then the loop runs before the next, so a 2 MiB body is not one long copy (its first
 * writes to new memory fault its pages in too).
 * @param {Uint8Array[]} parts @returns {Promise<Uint8Array>}
 */
async function joinInTurns(parts) {
  const body = new Uint8Array(sumLengths(parts));
  let at = 0;
  let sinceTurn = 0;
  for (const part of parts) {
    if (sinceTurn >= JOIN_SLICE_BYTES) {
      sinceTurn = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
    body.set(part, at);
    at += part.length;
    sinceTurn += part.length;
  }
  return body;
}

function sumLengths(/** @type {Uint8Array[]} */ parts) {
  return parts.reduce((n, p) => n + p.length, 0);
}

/**
 * The compressor of whole objects for `compression`; for zstd on node:zlib, one that also takes
 * an object part by part (`open`).
 * @param {CompressorOptions} o @returns {PartsCompressor | FrameCompressor}
 */
export function partsCompressor(o) {
  if (o.compression === 'gzip') return gzipStream(o.level);
  if (o.compression === 'none') {
    return { compress: (/** @type {Uint8Array[]} */ parts) => join(parts), close: () => {} };
  }
  return zstdEngineOf(o) === 'zstd-napi' ? napiZstd(o.level) : zstdFrames(o.level);
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

/**
 * The page compressor for the Parquet writer on the event loop's thread: each page is
 * compressed on libuv's pool by node:zlib's asynchronous one-shot calls (the same stream and
 * parameters as the synchronous ones, so the same bytes), and this thread only hands pages over
 * and takes the frames back. Undefined where that is not possible: zstd through zstd-napi
 * (which runs on the calling thread) or a node:zlib without asynchronous zstd.
 * @param {CompressorOptions} o @returns {PageCompressor | undefined}
 */
export function poolPageCompressor(o) {
  if (o.compression === 'none') return { compressPage: (page) => page, close: () => {} };
  /** @type {(page: Uint8Array, options: object, done: (error: Error | null, out: Buffer) => void) => void} */
  let call;
  /** @type {object} */
  let options;
  if (o.compression === 'gzip') {
    call = zlib.gzip;
    options = { level: o.level };
  } else {
    const zstdCompress = /** @type {{ zstdCompress?: typeof call }} */ (
      /** @type {unknown} */ (zlib)
    ).zstdCompress;
    if (zstdEngineOf(o) !== 'node:zlib' || typeof zstdCompress !== 'function') return undefined;
    call = zstdCompress;
    options = { params: { [zlib.constants.ZSTD_c_compressionLevel]: o.level } };
  }
  return {
    compressPage: (page) =>
      new Promise((resolve, reject) => {
        // Output slices about the page's size: one pool trip for most pages, no large buffer
        // for a small one. The page's size pledged, as the synchronous call does: the frame
        // header says it (zstd), so the bytes are the same as the worker's.
        const chunkSize = Math.min(POOL_PAGE_CHUNK_BYTES, Math.max(1024, page.length));
        call(page, { ...options, chunkSize, pledgedSrcSize: page.length }, (error, out) =>
          error === null ? resolve(out) : reject(error),
        );
      }),
    close: () => {},
  };
}

/** The largest output slice of a page's frame on the pool. */
const POOL_PAGE_CHUNK_BYTES = 256 * 1024;

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
  const binding = loadZstdAddon();
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
 * zstd through node:zlib with one reused context, whose objects are compressed as their parts
 * come: `open()` starts an object's frame, each `write()` goes straight into the stream (on
 * libuv's pool, in slices of one output chunk), and `end()` closes the frame with ZSTD_e_end,
 * which leaves the context ready for the next. So the next object's parts may be written while
 * the last one's end is still being compressed, and a part's memory can be freed as soon as it
 * is consumed instead of waiting for the whole object. Frames follow each other in the stream
 * and their output arrives in order: what arrives before a frame's end is that frame's.
 * `compress(parts)` is a frame written at once, on a context of its own while a frame is open.
 * A frame of another window log than the last (recordWindowLog) gets a context of its own, which
 * stays for the frames after it.
 * @param {number} level @returns {FrameCompressor}
 */
export function zstdFrames(level) {
  /** @typedef {{ chunks: Buffer[], observe: ((chunk: Uint8Array) => void) | undefined, ended: boolean, error: Error | undefined, settle: (error?: Error) => void }} Frame */
  /** @typedef {{ stream: zlib.ZstdCompress, frames: Frame[], windowLog: number | undefined }} Lane */
  /** @type {Lane | undefined} */
  let lane;
  /** Lanes of another window whose last frames are still being ended: destroyed once they are. */
  /** @type {Set<Lane>} */
  const retired = new Set();
  /** @param {Lane} l */
  const destroy = (l) => {
    retired.delete(l);
    l.stream.destroy();
  };
  /** @param {Lane} l A lane destroyed once its frames have ended. */
  const retire = (l) => {
    retired.add(l);
    return l;
  };
  /** @param {number | undefined} windowLog */
  const openLane = (windowLog) => {
    /** @type {Record<number, number>} */
    const params = { [zlib.constants.ZSTD_c_compressionLevel]: level };
    if (windowLog !== undefined) params[zlib.constants.ZSTD_c_windowLog] = windowLog;
    const stream = zlib.createZstdCompress({ params, chunkSize: ZLIB_CHUNK_BYTES });
    /** @type {Lane} */
    const l = { stream, frames: [], windowLog };
    stream.on('data', (/** @type {Buffer} */ chunk) => {
      const frame = l.frames[0];
      if (frame === undefined) return;
      frame.chunks.push(chunk);
      frame.observe?.(chunk);
    });
    stream.on('error', (error) => {
      if (lane === l) lane = undefined; // a failed stream is not reused
      retired.delete(l);
      for (const frame of l.frames.splice(0)) frame.settle(error);
    });
    return l;
  };
  /**
   * @param {((chunk: Uint8Array) => void) | undefined} [observe]
   * @param {number} [windowLog]
   * @returns {FrameWriter}
   */
  const open = (observe, windowLog) => {
    if (frameOpen()) throw new Error('a zstd frame is still open');
    if (lane !== undefined && lane.windowLog !== windowLog) {
      // A context's window is set when it is made: another window takes another context, and
      // this one goes once its frames have ended (a batch's frame may still be ending).
      if (lane.frames.length === 0) destroy(lane);
      else retired.add(lane);
      lane = undefined;
    }
    lane ??= openLane(windowLog);
    return frameOn(lane, observe);
  };
  /** Whether the last frame opened is still being written. */
  const frameOpen = () => {
    const last = lane?.frames[lane.frames.length - 1];
    return last !== undefined && !last.ended;
  };
  /**
   * A frame on lane `l` (its frames follow each other in its stream).
   * @param {Lane} l @param {((chunk: Uint8Array) => void) | undefined} [observe]
   * @returns {FrameWriter}
   */
  const frameOn = (l, observe) => {
    /** @type {(value: Uint8Array) => void} */
    let resolve = () => {};
    /** @type {(error: Error) => void} */
    let reject = () => {};
    const done = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => {}); // a frame that fails before its end() is called rejects end() then

    /** @type {Frame} */
    const frame = {
      chunks: [],
      observe,
      ended: false,
      error: undefined,
      settle: (error) => {
        if (error !== undefined) {
          frame.error ??= error;
          reject(error);
        } else joinInTurns(frame.chunks).then(resolve, reject);
        frame.chunks = [];
      },
    };
    l.frames.push(frame);
    return {
      write(part, consumed) {
        if (frame.ended) throw new Error('write() after end() of a zstd frame');
        if (frame.error !== undefined) return; // the frame is lost; the part is left to the collector
        // The callback comes once the stream has consumed the part: nothing reads it after that.
        l.stream.write(part, (error) => {
          if (error == null) consumed?.();
        });
      },
      end() {
        if (!frame.ended) {
          frame.ended = true;
          if (frame.error === undefined) {
            l.stream.flush(zlib.constants.ZSTD_e_end, () => {
              if (l.frames[0] !== frame) return; // settled by an error meanwhile
              l.frames.shift();
              frame.settle();
              if (retired.has(l) && l.frames.length === 0) destroy(l);
            });
          }
        }
        return /** @type {Promise<Uint8Array>} */ (done); // rejected already if the frame failed
      },
    };
  };
  return {
    open,
    compress(parts, windowLog) {
      // While an open batch's frame takes its records as they come (it stays open until the
      // seal), an object made whole (a batch replayed from the journal) gets a context of its
      // own, freed once its frame has ended: the open frame is not disturbed.
      const frame = frameOpen() ? frameOn(retire(openLane(windowLog))) : open(undefined, windowLog);
      for (const part of parts) frame.write(part);
      return frame.end();
    },
    close() {
      const l = lane;
      lane = undefined;
      for (const old of [...retired, ...(l === undefined ? [] : [l])]) {
        destroy(old);
        for (const frame of old.frames.splice(0))
          frame.settle(new Error('the compressor is closed'));
      }
    },
  };
}

/**
 * gzip through node:zlib with one reused context: a stream fed the parts in turn (no assembled
 * copy), each object ended with Z_FINISH, then reset() starts the next member on the same
 * context. Unlike zstd's frames, a gzip member must be finished before the next one's first
 * write, so objects queue one after another. It runs on libuv's pool, in slices of one output
 * chunk.
 * @param {number} level @returns {PartsCompressor}
 */
export function gzipStream(level) {
  /** @type {zlib.Gzip | undefined} */
  let stream;
  /** @type {Buffer[]} */
  let chunks = [];
  /** Where a stream's error goes between members; made here, since a closure made in compress() keeps its member's promise. */
  const noFailure = () => {};
  /** @type {(error: Error) => void} */
  let fail = noFailure;
  const open = () => {
    const s = zlib.createGzip({ level, chunkSize: ZLIB_CHUNK_BYTES });
    s.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
    s.on('error', (error) => {
      if (stream === s) stream = undefined; // a failed stream is not reused
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
          s.flush(zlib.constants.Z_FINISH, () => {
            // reset() is there on every zlib stream (its type declares it on Zlib only).
            /** @type {zlib.Gzip & { reset(): void }} */ (s).reset();
            const body = join(chunks);
            // Nothing holds the member until the next one: its output chunks are in the body,
            // and `fail` lets go of this promise (which holds the body) through its reject.
            chunks = [];
            fail = noFailure;
            resolve(body);
          });
        }),
    );
    // The next member waits for this one, not holding its body (job.catch() would).
    queue = job.then(
      () => undefined,
      () => undefined,
    );
    return /** @type {Promise<Uint8Array>} */ (job);
  };
  const close = () => {
    stream?.destroy();
    stream = undefined;
    fail(new Error('the compressor is closed'));
  };
  return { compress, close };
}
