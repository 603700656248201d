/**
 * zstd comes from node:zlib (Node.js >= 22.15) or the optional zstd-napi addon; this is the one
 * error for a runtime with neither, for the exporter (compressing) and the reader (reading).
 * It says what is missing and how to fix it, without the addon's require stack.
 */
export class ZstdUnavailableError extends Error {
  readonly code = 'ERR_ZSTD_UNAVAILABLE';
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ZstdUnavailableError';
  }
}

/** Why the addon did not load, in one line, and the fix for that reason. */
export function addonProblem(error: unknown): { reason: string; fix: string } {
  // The first line only: the rest of a require error is its require stack.
  const first = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  return first.startsWith("Cannot find module 'zstd-napi")
    ? {
        reason: 'the zstd-napi addon is not installed',
        fix: 'install the addon with: npm install zstd-napi',
      }
    : {
        reason: `the zstd-napi addon could not be loaded (${first})`,
        fix: 'build the addon with: npm rebuild zstd-napi',
      };
}
