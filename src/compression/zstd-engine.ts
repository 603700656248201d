import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import { addonProblem, ZstdUnavailableError } from '../zstd-unavailable.js';

export { ZstdUnavailableError };

/**
 * Where zstd runs: `node:zlib` (built into Node ≥ 22.15: no native build, no install-script
 * approval) or the `zstd-napi` addon (an optional dependency, for older runtimes).
 */
export type ZstdEngine = 'node:zlib' | 'zstd-napi';

const require = createRequire(import.meta.url);

/** True when this runtime's node:zlib has zstd (Node ≥ 22.15, 23.8). */
export function builtInZstd(): boolean {
  // Read through a string key: on older runtimes the function is missing although the types
  // (of the newest @types/node) always declare it.
  return typeof (zlib as Record<string, unknown>).zstdCompressSync === 'function';
}

let napi: { loaded: true } | { error: Error } | undefined;

/** Whether zstd-napi loads (checked once), with the reason when it is not installed or not built. */
function loadNapi(): { loaded: true } | { error: Error } {
  if (napi === undefined) {
    try {
      // The binding the worker uses: a package installed without its native build fails here.
      require('zstd-napi/binding');
      napi = { loaded: true };
    } catch (error) {
      napi = { error: error as Error };
    }
  }
  return napi;
}

/**
 * The engine this runtime uses: the built-in one wherever it exists (no native build; within
 * 1.4x of the addon's CPU per batch, flat native memory: bench/zstd-engines.ts), else zstd-napi
 * when it loads.
 */
export function zstdEngine(): ZstdEngine | undefined {
  if (builtInZstd()) return 'node:zlib';
  return 'loaded' in loadNapi() ? 'zstd-napi' : undefined;
}

/** The engine to use, or ZstdUnavailableError (thrown at construction, not at the first batch). */
export function requireZstdEngine(): ZstdEngine {
  const engine = zstdEngine();
  if (engine !== undefined) return engine;
  const loaded = loadNapi();
  const cause = 'error' in loaded ? loaded.error : undefined;
  const { reason } = addonProblem(cause);
  throw new ZstdUnavailableError(
    `otel-s3-exporter: compression 'zstd' needs zstd, and this runtime has none: Node.js ${process.versions.node} ` +
      `has no zstd in node:zlib (it arrived in Node.js 22.15) and ${reason}. ` +
      'Fix it with one of: run on Node.js >= 22.15 (24 LTS recommended); or install the addon, ' +
      '`npm install zstd-napi` (it builds from source with python3, make and a C++ compiler, and ' +
      'npm 11 runs its install script only once approved: `npm install-scripts approve zstd-napi`, ' +
      "then `npm rebuild zstd-napi`); or choose compression: 'gzip'.",
    cause,
  );
}
