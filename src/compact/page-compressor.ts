import * as zlib from 'node:zlib';
import { napiZstd } from '../compression/zstd-compressors.js';
import { builtInZstd } from '../compression/zstd-engine.js';
import type { Compression } from '../formats.js';

/** Compresses one Parquet page. */
export type PageCompressor = (page: Uint8Array) => Uint8Array;

/**
 * The page compressor of an output file: node:zlib's zstd where the runtime has it (Node ≥
 * 22.15), else the zstd-napi addon with one reused context (checked by requireZstdEngine() when
 * the options are resolved); gzip; undefined for none.
 */
export function pageCompressor(
  compression: Compression,
  level: number,
): PageCompressor | undefined {
  if (compression === 'none') return undefined;
  if (compression === 'gzip') return (page) => zlib.gzipSync(page, { level });
  if (builtInZstd()) {
    const zstdSync = (zlib as unknown as Record<string, (input: Uint8Array, o: object) => Buffer>)
      .zstdCompressSync as (input: Uint8Array, o: object) => Buffer;
    const params = { [zlib.constants.ZSTD_c_compressionLevel]: level };
    return (page) => zstdSync(page, { params });
  }
  const napi = napiZstd(level);
  return (page) => napi([page]) as Uint8Array;
}
