import zlib from 'node:zlib';
import { loadZstdAddon, type ZstdBinding } from '../compression/zstd-addon.js';
import { type ZstdEngine, ZstdUnavailableError, zstdEngine } from '../compression/zstd-engine.js';
import { boundedByZlib, ObjectTooLargeError } from './read-limits.js';
import { zstdFrameEnd } from './zstd-frames.js';

/** Decompresses a zstd stream (one or more frames); past `maxBytes` it stops and throws ObjectTooLargeError. */
export type ZstdDecompress = (bytes: Uint8Array, maxBytes: number) => Buffer;

const decompressors = new Map<ZstdEngine, ZstdDecompress>();

/** The reader's decompressor on `engine` (one per engine, reusing its context). */
export function zstdDecompressor(engine: ZstdEngine): ZstdDecompress {
  let found = decompressors.get(engine);
  if (found === undefined) {
    found = engine === 'node:zlib' ? builtinDecompressor() : addonDecompressor(loadZstdAddon());
    decompressors.set(engine, found);
  }
  return found;
}

/** zstd on this runtime's engine (zstd-engine.ts); ZstdUnavailableError where there is none. */
export const zstdDecompress: ZstdDecompress = (bytes, maxBytes) => {
  const engine = zstdEngine();
  if (engine instanceof ZstdUnavailableError) throw engine;
  return zstdDecompressor(engine)(bytes, maxBytes);
};

function builtinDecompressor(): ZstdDecompress {
  const small = new SmallFrames();
  return (bytes, maxBytes) => {
    const fast = small.decode(bytes, maxBytes);
    if (fast !== undefined) return fast;
    const parts: Buffer[] = [];
    let total = 0;
    let offset = 0;
    // node:zlib stops after the first frame and ignores the rest (nodejs/node#64741), but a
    // zstd stream may hold several (`cat a.zst b.zst`, pzstd): decode them one by one,
    // each found by its headers.
    do {
      // Node 22 decodes a cut-off frame without an error: check the frame is whole first.
      const end = zstdFrameEnd(bytes, offset);
      const room = maxBytes - total;
      const buffer = boundedByZlib(maxBytes, () =>
        zlib.zstdDecompressSync(bytes.subarray(offset, end), {
          maxOutputLength: Math.max(room, 1),
        }),
      );
      if (buffer.length > room) throw new ObjectTooLargeError('maxDecompressedBytes', maxBytes);
      parts.push(buffer);
      total += buffer.length;
      offset = end;
    } while (offset < bytes.length);
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, total);
  };
}

/** Frames that decode to at most this many bytes may take the reused context (SmallFrames). */
export const SMALL_FRAME_BYTES = 1024 * 1024;

/** node:zlib's native handle of a zstd stream: the calls its own synchronous path makes. */
interface ZlibHandle {
  writeSync(
    flush: number,
    input: Uint8Array,
    inOffset: number,
    inLength: number,
    output: Uint8Array,
    outOffset: number,
    outLength: number,
  ): void;
}

/**
 * One-frame objects that decode to a little (a Parquet page: a few KB), through one reused
 * decompression context. node:zlib's one-shot call makes a context and a stream for each call
 * (about 30 µs, measured on Node 24: most of a page's decoding, and a compaction decodes tens of
 * thousands of pages an hour); a reused context decodes such a frame in about 3 µs. node:zlib has
 * no public call that keeps a context across frames, so this drives the stream's native handle
 * as node:zlib's own synchronous path does (`_handle.writeSync`, `_writeState`). Anything
 * unexpected (no such handle, an error, input left, output over the limit, a frame that did not
 * end) returns undefined, drops the context, and the one-shot call decodes the frame: errors and
 * limits are the one-shot call's, and the bytes the same (one libzstd decoder).
 */
class SmallFrames {
  #stream: (zlib.ZstdDecompress & { _handle?: ZlibHandle; _writeState?: Uint32Array }) | undefined;
  #error: Error | undefined;
  /** Set when this runtime's stream has no handle to drive: never tried again. */
  #unusable = false;

  decode(bytes: Uint8Array, maxBytes: number): Buffer | undefined {
    if (this.#unusable || maxBytes > SMALL_FRAME_BYTES || bytes.length < 4) return undefined;
    // One whole standard frame (not a skippable one), nothing after it.
    if (bytes[0] !== 0x28 || bytes[1] !== 0xb5 || bytes[2] !== 0x2f || bytes[3] !== 0xfd) {
      return undefined;
    }
    let end: number;
    try {
      end = zstdFrameEnd(bytes, 0);
    } catch {
      return undefined;
    }
    if (end !== bytes.length) return undefined;
    const stream = this.#open();
    const handle = stream?._handle;
    const state = stream?._writeState;
    if (stream === undefined || handle === undefined || state === undefined) {
      this.#unusable = true;
      this.#close();
      return undefined;
    }
    // One byte of room past the limit: a frame that fills it went over, or did not end.
    const out = Buffer.allocUnsafe(maxBytes + 1);
    try {
      handle.writeSync(zlib.constants.ZSTD_e_end, bytes, 0, bytes.length, out, 0, out.length);
    } catch {
      this.#close();
      return undefined;
    }
    const outLeft = state[0] as number;
    const inLeft = state[1] as number;
    // An error reaches the stream during the call (it is destroyed then; the event comes later).
    if (stream.destroyed || this.#error !== undefined || inLeft !== 0 || outLeft === 0) {
      this.#close();
      return undefined;
    }
    return out.subarray(0, out.length - outLeft);
  }

  #open() {
    if (this.#stream === undefined) {
      const stream = zlib.createZstdDecompress();
      this.#error = undefined;
      stream.on('error', (error) => {
        this.#error = error;
      });
      this.#stream = stream;
    }
    return this.#stream;
  }

  #close(): void {
    this.#stream?.destroy();
    this.#stream = undefined;
  }
}

const ADDON_CHUNK = 128 * 1024;

function addonDecompressor(binding: ZstdBinding): ZstdDecompress {
  // One context for every object: a context per object grows native memory, freed only by
  // finalizers (192 MB to 1075 MB RSS over 1000 of them, measured with zstd-napi).
  let dctx: InstanceType<ZstdBinding['DCtx']> | undefined;
  return (bytes, maxBytes) => {
    dctx ??= new binding.DCtx();
    // A previous object may have failed mid-frame.
    dctx.reset(binding.ResetDirective.sessionOnly);
    const parts: Buffer[] = [];
    let total = 0;
    let input = bytes;
    for (;;) {
      const chunk = Buffer.allocUnsafe(ADDON_CHUNK);
      const [hint, produced, consumed] = dctx.decompressStream(chunk, input);
      input = input.subarray(consumed);
      total += produced;
      if (total > maxBytes) throw new ObjectTooLargeError('maxDecompressedBytes', maxBytes);
      if (produced > 0) parts.push(chunk.subarray(0, produced));
      // 0: a frame is done and flushed; with input left, the next frame follows.
      if (hint === 0 && input.length === 0) break;
      // A full chunk may have more to flush; otherwise the frame wants input there is not.
      if (input.length === 0 && produced < ADDON_CHUNK) {
        throw new Error('truncated zstd frame (unexpected end of data)');
      }
      if (consumed === 0 && produced === 0) throw new Error('zstd data makes no progress');
    }
    return Buffer.concat(parts, total);
  };
}
