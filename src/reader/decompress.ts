import { gunzipSync } from 'node:zlib';
import type { ObjectEncoding } from '../formats.js';
import { boundedByZlib, ObjectTooLargeError } from './read-limits.js';
import { zstdEngine } from './zstd-engine.js';

/**
 * The bytes of a stored object, decompressed. Decompression stops as soon as the output passes
 * `maxBytes` (ObjectTooLargeError), so a bomb costs at most that much memory. Throws
 * ZstdUnavailableError when this runtime cannot decompress zstd.
 */
export function decompress(
  bytes: Uint8Array,
  compression: ObjectEncoding['compression'],
  maxBytes: number,
): Buffer {
  switch (compression) {
    case 'zstd': {
      const engine = zstdEngine();
      if (engine instanceof Error) throw engine;
      return engine.decompress(bytes, maxBytes);
    }
    case 'gzip':
      return boundedByZlib(maxBytes, () => gunzipSync(bytes, { maxOutputLength: maxBytes }));
    case 'none':
      if (bytes.length > maxBytes) {
        throw new ObjectTooLargeError('maxDecompressedBytes', maxBytes, bytes.length);
      }
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
}
