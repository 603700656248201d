import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import { addonProblem, ZstdUnavailableError } from '../zstd-unavailable.js';
import { boundedByZlib, ObjectTooLargeError } from './read-limits.js';
import { zstdFrameEnd } from './zstd-frames.js';

export { ZstdUnavailableError };

type ZstdBinding = typeof import('zstd-napi/binding.js');

/** Decompresses a zstd stream (one or more frames); past `maxBytes` it stops and throws ObjectTooLargeError. */
export interface ZstdEngine {
  readonly name: 'node:zlib' | 'zstd-napi';
  decompress(bytes: Uint8Array, maxBytes: number): Buffer;
}

/** Where a zstd engine can come from; tests pass their own to play an older runtime. */
export interface ZstdEngineSources {
  /** node:zlib's zstdDecompressSync: there on Node.js ≥ 22.15, undefined before. */
  builtin: typeof zlib.zstdDecompressSync | undefined;
  /** Loads the zstd-napi addon's binding; throws when it is not installed or not built. */
  loadAddon: () => ZstdBinding;
  /** For the message, e.g. `v20.20.2`. */
  nodeVersion: string;
}

const runtimeSources = (): ZstdEngineSources => ({
  // Typed as always there by @types/node 24; Node 20 has no zstd in node:zlib.
  builtin: typeof zlib.zstdDecompressSync === 'function' ? zlib.zstdDecompressSync : undefined,
  // Loaded only where the built-in is missing: zstd-napi is an optional native addon.
  loadAddon: () => createRequire(import.meta.url)('zstd-napi/binding') as ZstdBinding,
  nodeVersion: process.version,
});

/** node:zlib's zstd where the runtime has it, else the zstd-napi addon, else why there is none. */
export function findZstdEngine(
  sources: ZstdEngineSources = runtimeSources(),
): ZstdEngine | ZstdUnavailableError {
  if (sources.builtin !== undefined) return builtinEngine(sources.builtin);
  let binding: ZstdBinding;
  try {
    binding = sources.loadAddon();
  } catch (error) {
    return new ZstdUnavailableError(unavailableMessage(sources.nodeVersion, error), error);
  }
  return addonEngine(binding);
}

let found: ZstdEngine | ZstdUnavailableError | undefined;
/** This runtime's engine, looked for once (on the first zstd object). */
export function zstdEngine(): ZstdEngine | ZstdUnavailableError {
  found ??= findZstdEngine();
  return found;
}

function unavailableMessage(nodeVersion: string, error: unknown): string {
  const { reason, fix } = addonProblem(error);
  return (
    'zstd needs Node.js 22.15 or later (zstd in node:zlib) or the optional zstd-napi addon: ' +
    `this is Node.js ${nodeVersion} and ${reason}; upgrade Node.js, or ${fix}`
  );
}

function builtinEngine(decompressSync: typeof zlib.zstdDecompressSync): ZstdEngine {
  return {
    name: 'node:zlib',
    decompress(bytes, maxBytes) {
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
          decompressSync(bytes.subarray(offset, end), { maxOutputLength: Math.max(room, 1) }),
        );
        if (buffer.length > room) throw new ObjectTooLargeError('maxDecompressedBytes', maxBytes);
        parts.push(buffer);
        total += buffer.length;
        offset = end;
      } while (offset < bytes.length);
      return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, total);
    },
  };
}

const ADDON_CHUNK = 128 * 1024;

function addonEngine(binding: ZstdBinding): ZstdEngine {
  // One context for every object: a context per object grows native memory (DESIGN 6).
  let dctx: InstanceType<ZstdBinding['DCtx']> | undefined;
  return {
    name: 'zstd-napi',
    decompress(bytes, maxBytes) {
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
    },
  };
}
