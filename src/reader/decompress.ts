import { gunzipSync } from 'node:zlib';
import type { Compression } from '../layout/formats.js';
import { boundedByZlib, ObjectTooLargeError } from './read-limits.js';
import { zstdDecompress } from './zstd-decompress.js';

/**
 * Bytes of `compression` decompressed: a stored object's outer layer, or a Parquet page. The
 * reader's one way to decompress. Decompression stops as soon as the output passes `maxBytes`
 * (ObjectTooLargeError), so a bomb costs at most that much memory. Throws ZstdUnavailableError
 * when this runtime cannot decompress zstd.
 */
export function decompress(compression: Compression, bytes: Uint8Array, maxBytes: number): Buffer {
  switch (compression) {
    case 'zstd':
      return zstdDecompress(bytes, maxBytes);
    case 'gzip':
      return boundedByZlib(maxBytes, () => gunzipSync(bytes, { maxOutputLength: maxBytes }));
    case 'none':
      if (bytes.length > maxBytes) {
        throw new ObjectTooLargeError('maxDecompressedBytes', maxBytes, bytes.length);
      }
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
}
