// @ts-check
// The one loader of the zstd-napi addon (an optional peer dependency, for runtimes whose
// node:zlib has no zstd). Plain JavaScript: the body worker's compressors (compressors.js) load
// it too, and the worker runs this file from src/ (tests) and dist/ (the package).
import { createRequire } from 'node:module';

/**
 * What this package uses of the addon's binding: declared here, because the addon's own types
 * are those of an optional peer dependency that a user's project may not have. The streaming
 * calls answer [bytes left to flush, or 0 when a frame is done; bytes produced; bytes consumed].
 * @typedef {{
 *   CCtx: new () => {
 *     setParameter(parameter: number, value: number): void,
 *     reset(directive: number): void,
 *     compressStream2(output: Uint8Array, input: Uint8Array, end: number): [number, number, number],
 *   },
 *   DCtx: new () => {
 *     reset(directive: number): void,
 *     decompressStream(output: Uint8Array, input: Uint8Array): [number, number, number],
 *   },
 *   CParameter: { compressionLevel: number },
 *   EndDirective: { continue: number, end: number },
 *   ResetDirective: { sessionOnly: number },
 *   cStreamOutSize(): number,
 * }} ZstdBinding
 */

/**
 * The addon's binding; throws when it is not installed or not built (zstd-engine.ts turns that
 * into the one ZstdUnavailableError).
 * @returns {ZstdBinding}
 */
export function loadZstdAddon() {
  // Typed as the addon declares itself, so the return checks ZstdBinding against it.
  /** @type {typeof import('zstd-napi/binding.js')} */
  const binding = createRequire(import.meta.url)('zstd-napi/binding');
  return binding;
}
