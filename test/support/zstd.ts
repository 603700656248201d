/**
 * zstd for the tests, from a standard libzstd and never from the code under test: node:zlib
 * where the runtime has zstd (Node ≥ 22.15), else the zstd-napi addon (the Node 20 leg installs
 * it). So the tests need no native addon on current runtimes.
 */
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

interface ZstdNapi {
  compress(data: Uint8Array, parameters?: { compressionLevel?: number }): Buffer;
  decompress(data: Uint8Array): Buffer;
}

const builtIn = typeof (zlib as Record<string, unknown>).zstdCompressSync === 'function';

/** The addon, loaded only where the runtime lacks zstd. */
const napi = (): ZstdNapi => createRequire(import.meta.url)('zstd-napi') as ZstdNapi;

/** The engine these helpers use here, for test names. */
export const testZstdEngine = builtIn ? 'node:zlib' : 'zstd-napi';

export function zstdDecompress(bytes: Uint8Array): Buffer {
  return builtIn ? zlib.zstdDecompressSync(bytes) : napi().decompress(bytes);
}

export function zstdCompress(bytes: Uint8Array, level = 3): Buffer {
  return builtIn
    ? zlib.zstdCompressSync(bytes, { params: { [zlib.constants.ZSTD_c_compressionLevel]: level } })
    : napi().compress(bytes, { compressionLevel: level });
}
