import * as zlib from 'node:zlib';
import { loadZstdAddon } from './zstd-addon.js';

/**
 * Where zstd runs, for the exporter (compressing), its worker and the reader (decompressing):
 * `node:zlib` (Node ≥ 22.15: nothing native to build, asynchronous on libuv's pool) or the
 * `zstd-napi` addon (an optional peer dependency, for older runtimes; it runs on the calling
 * thread). This module is the one place that chooses, and the one error when neither is there.
 */
export type ZstdEngine = 'node:zlib' | 'zstd-napi';

/** A runtime with no zstd: it says what is missing and how to fix it, without a require stack. */
export class ZstdUnavailableError extends Error {
  readonly code = 'ERR_ZSTD_UNAVAILABLE';
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ZstdUnavailableError';
  }
}

/** Where an engine can come from; tests pass their own to play an older runtime. */
export interface ZstdEngineSources {
  /** True when node:zlib has zstd (Node.js ≥ 22.15, 23.8). */
  builtin: boolean;
  /** Loads the zstd-napi addon's binding; throws when it is not installed or not built. */
  loadAddon: () => unknown;
  /** For the message, e.g. `v20.20.2`. */
  nodeVersion: string;
}

/** True when this runtime's node:zlib has zstd. */
export function builtInZstd(): boolean {
  // Read through a string key: the types (of the newest @types/node) always declare it.
  return typeof (zlib as Record<string, unknown>).zstdCompressSync === 'function';
}

const runtimeSources = (): ZstdEngineSources => ({
  builtin: builtInZstd(),
  loadAddon: loadZstdAddon,
  nodeVersion: process.version,
});

/**
 * node:zlib wherever the runtime has it (the addon is then never loaded), else zstd-napi when
 * it loads, else why there is none. The measurements behind the choice: docs/performance.md.
 */
export function findZstdEngine(
  sources: ZstdEngineSources = runtimeSources(),
): ZstdEngine | ZstdUnavailableError {
  if (sources.builtin) return 'node:zlib';
  try {
    sources.loadAddon();
    return 'zstd-napi';
  } catch (error) {
    return new ZstdUnavailableError(unavailableMessage(sources.nodeVersion, error), error);
  }
}

let found: ZstdEngine | ZstdUnavailableError | undefined;

/** This runtime's engine, looked for once. */
export function zstdEngine(): ZstdEngine | ZstdUnavailableError {
  found ??= findZstdEngine();
  return found;
}

/** This runtime's engine, or ZstdUnavailableError thrown (at construction, not at the first batch). */
export function requireZstdEngine(): ZstdEngine {
  const engine = zstdEngine();
  if (engine instanceof ZstdUnavailableError) throw engine;
  return engine;
}

/** The one message, for writing and for reading: what is missing, why, and every fix. */
function unavailableMessage(nodeVersion: string, error: unknown): string {
  // The first line only: the rest of a require error is its require stack.
  const first = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  const notInstalled = first.startsWith("Cannot find module 'zstd-napi");
  const reason = notInstalled
    ? 'the zstd-napi addon is not installed'
    : `the zstd-napi addon could not be loaded (${first})`;
  const addonFix = notInstalled
    ? 'install the addon: `npm install zstd-napi` (it builds from source with python3, make and a C++ compiler; if npm skipped its build: `npm install-scripts approve zstd-napi`, then `npm rebuild zstd-napi`)'
    : 'build the addon: `npm rebuild zstd-napi` (if npm skips its build: `npm install-scripts approve zstd-napi` first)';
  return (
    `zstd needs Node.js 22.15 or later (zstd in node:zlib) or the zstd-napi addon: this is ` +
    `Node.js ${nodeVersion} and ${reason}. Fix it with one of: run on Node.js >= 22.15 ` +
    `(24 LTS recommended); ${addonFix}; or, to write objects, choose compression: 'gzip'.`
  );
}
