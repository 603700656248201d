/**
 * zstd for the tests, from a standard libzstd and never from the code under test: node:zlib
 * where the runtime has zstd (Node ≥ 22.15), else the zstd-napi addon (the Node 20 leg installs
 * it). So the tests need no native addon on current runtimes.
 */
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

interface ZstdNapi {
  compress(
    data: Uint8Array,
    parameters?: { compressionLevel?: number; checksumFlag?: boolean },
  ): Buffer;
  decompress(data: Uint8Array): Buffer;
  CompressStream: new () => NodeJS.ReadWriteStream;
}

/** True where node:zlib has zstd (Node.js ≥ 22.15). */
export const builtInZstd = typeof (zlib as Record<string, unknown>).zstdCompressSync === 'function';
const builtIn = builtInZstd;

/** The addon, loaded only where the runtime lacks zstd. */
const napi = (): ZstdNapi => createRequire(import.meta.url)('zstd-napi') as ZstdNapi;

/** The engine these helpers use here, for test names. */
export const testZstdEngine = builtIn ? 'node:zlib' : 'zstd-napi';

export function zstdDecompress(bytes: Uint8Array): Buffer {
  return builtIn ? zlib.zstdDecompressSync(bytes) : napi().decompress(bytes);
}

/** One zstd frame of `bytes`; `checksum` adds the frame's content checksum. */
export function zstdCompress(
  bytes: Uint8Array | string,
  level = 3,
  options: { checksum?: boolean } = {},
): Buffer {
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  const checksumFlag = options.checksum === true;
  return builtIn
    ? zlib.zstdCompressSync(data, {
        params: {
          [zlib.constants.ZSTD_c_compressionLevel]: level,
          [zlib.constants.ZSTD_c_checksumFlag]: checksumFlag ? 1 : 0,
        },
      })
    : napi().compress(data, { compressionLevel: level, checksumFlag });
}

/** A streaming zstd compressor (one frame), for inputs too large to hold. */
export function zstdCompressStream(): NodeJS.ReadWriteStream {
  return builtIn ? zlib.createZstdCompress() : new (napi().CompressStream)();
}
