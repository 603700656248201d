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
  return (bytes, maxBytes) => {
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
