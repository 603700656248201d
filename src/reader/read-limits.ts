import { formatBytes } from '../base/byte-size.js';
import { check } from '../config/option-table.js';
import { READ_DEFAULTS } from '../config/options.js';

/** Why 64 MiB: see READ_DEFAULTS in src/config/options.ts. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = READ_DEFAULTS.maxDecompressedBytes;

/** Size limits that keep a hostile or runaway object from exhausting memory. */
export interface ReadLimitOptions {
  /**
   * Objects stored larger than this are skipped unread: checked against the listing, against
   * GetObject's Content-Length, and while downloading. Default: maxDecompressedBytes (an object
   * stored larger than that could not be decompressed within it anyway).
   */
  maxObjectBytes?: number;
  /**
   * Objects that decompress to more than this are skipped; decompression stops at the limit.
   * Default 64 MiB (DEFAULT_MAX_DECOMPRESSED_BYTES); raise it with the exporter's maxBufferedBytes.
   */
  maxDecompressedBytes?: number;
}

export type ReadLimits = Required<ReadLimitOptions>;
export type SizeLimit = keyof ReadLimits;

/** Validates the limits; throws InvalidOptionError naming the option. */
export function resolveReadLimits(options: ReadLimitOptions): ReadLimits {
  const maxDecompressedBytes = limit(
    'maxDecompressedBytes',
    options.maxDecompressedBytes,
    DEFAULT_MAX_DECOMPRESSED_BYTES,
  );
  return {
    maxObjectBytes: limit('maxObjectBytes', options.maxObjectBytes, maxDecompressedBytes),
    maxDecompressedBytes,
  };
}

function limit(option: SizeLimit, value: unknown, fallback: number): number {
  return value === undefined ? fallback : check<number>(option)(option, value);
}

/** An object over a size limit: skipped without holding more than the limit in memory. */
export class ObjectTooLargeError extends Error {
  readonly limit: SizeLimit;
  readonly max: number;
  /** The size, when it is known (listed, Content-Length, uncompressed); else only "more than max". */
  readonly size: number | undefined;
  /** What is over the limit, when it is a piece of the object (`Parquet footer`). */
  readonly what: string | undefined;
  /**
   * The reader's own limit on that piece, which no option raises (MAX_FOOTER_BYTES), when it is
   * that limit and not `limit`'s; `limit` then says which bytes it bounds, and so the stage.
   */
  readonly fixed: boolean;

  constructor(limit: SizeLimit, max: number, size?: number, what?: string, fixed = false) {
    super('');
    this.name = 'ObjectTooLargeError';
    this.limit = limit;
    this.max = max;
    this.size = size;
    this.what = what;
    this.fixed = fixed;
    this.message = this.describe(limit);
  }

  /** What is wrong, with the limit named as the reader's user knows it (an option, a CLI flag). */
  describe(limitName: string): string {
    const over = this.fixed
      ? `over the reader's fixed limit of ${formatBytes(this.max)} for a ${this.what ?? 'piece'}`
      : `over the ${limitName} limit of ${formatBytes(this.max)}`;
    const what = this.what ?? (this.limit === 'maxObjectBytes' ? 'stored' : 'decompressed');
    return this.size === undefined
      ? `${what} size is ${over}`
      : `${what} size ${formatBytes(this.size)} is ${over}`;
  }
}

/**
 * Runs a node:zlib decompression bounded by its `maxOutputLength` (`maxBytes`): the error it
 * throws past the bound becomes ObjectTooLargeError.
 */
export function boundedByZlib<T>(maxBytes: number, decompress: () => T): T {
  try {
    return decompress();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ObjectTooLargeError('maxDecompressedBytes', maxBytes);
    }
    throw error;
  }
}
