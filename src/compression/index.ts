import type { Compression } from '../config.js';
import type { Codec } from './codec.js';
import { gzipCodec } from './gzip.js';
import { noCompression } from './none.js';
import { zstdCodec } from './zstd.js';

export type { Codec } from './codec.js';
export { CompressionError } from './zstd.js';

export function createCodec(compression: Compression, level: number): Codec {
  switch (compression) {
    case 'zstd':
      return zstdCodec(level);
    case 'gzip':
      return gzipCodec(level);
    case 'none':
      return noCompression;
  }
}
