// Preload (`node --require`) that makes this process a runtime with no zstd engine: node:zlib
// without its zstd functions (as before Node 22.15) and no zstd-napi to load (as when the
// optional addon was not installed or not built). For tests of the ZstdUnavailableError path.
const Module = require('node:module');
const zlib = require('node:zlib');

/** @type {Record<string, unknown>} */
const exports_ = zlib;
for (const name of Object.keys(exports_)) {
  if (/zstd/i.test(name)) delete exports_[name];
}
Module.syncBuiltinESMExports(); // `import * as zlib from 'node:zlib'` sees the same

/** The CommonJS loader's resolver: internal, but the one hook that works on every Node.js major. */
const loader = /** @type {{ _resolveFilename(request: string, ...rest: unknown[]): string }} */ (
  /** @type {unknown} */ (Module)
);
const resolve = loader._resolveFilename;
/** @param {string} request @param {unknown[]} rest */
loader._resolveFilename = function resolveWithoutZstdNapi(request, ...rest) {
  if (request === 'zstd-napi' || request.startsWith('zstd-napi/')) {
    const error = Object.assign(
      new Error(`Cannot find module '${request}' (hidden by test/support/no-zstd.cjs)`),
      { code: 'MODULE_NOT_FOUND' },
    );
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
