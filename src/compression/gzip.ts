import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import type { Codec } from './codec.js';

const gzip = promisify(gzipCallback);

/** gzip through node:zlib's async API, which runs on the libuv thread pool. */
export function gzipCodec(level: number): Codec {
  return {
    name: 'gzip',
    extension: '.gz',
    contentType: 'application/gzip',
    compress: (data) => gzip(data, { level }),
    close: async () => {},
  };
}
