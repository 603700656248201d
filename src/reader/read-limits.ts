import { constants } from 'node:buffer';
import { InvalidOptionError } from '../base/invalid-option.js';
import { formatBytes } from './byte-size.js';

/**
 * 64 MiB: the exporter's default maxBufferedBytes, which bounds every object it writes (batches
 * seal at maxBatchBytes, 8 MiB by default; only one export larger than that is stored alone, and
 * it must fit in maxBufferedBytes). Refusing a decompression bomb costs at most this much memory,
 * and decoding an object of this size can already take a gigabyte of heap for hostile JSON.
 */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

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
  return value === undefined ? fallback : sizeLimit(option, value);
}

/** A size limit: a whole number of bytes that fits in a Buffer; InvalidOptionError otherwise. */
export function sizeLimit(option: string, value: unknown): number {
  if (
    typeof value !== 'number' ||
    !Number.isSafeInteger(value) ||
    value < 1 ||
    value > constants.MAX_LENGTH
  ) {
    throw new InvalidOptionError(
      option,
      value,
      `a whole number of bytes from 1 to ${constants.MAX_LENGTH} (the largest Buffer)`,
    );
  }
  return value;
}

/** An object over a size limit: skipped without holding more than the limit in memory. */
export class ObjectTooLargeError extends Error {
  readonly limit: SizeLimit;
  readonly max: number;
  /** The size, when it is known (listed, Content-Length, uncompressed); else only "more than max". */
  readonly size: number | undefined;

  constructor(limit: SizeLimit, max: number, size?: number) {
    super('');
    this.name = 'ObjectTooLargeError';
    this.limit = limit;
    this.max = max;
    this.size = size;
    this.message = this.describe(limit);
  }

  /** What is wrong, with the limit named as the reader's user knows it (an option, a CLI flag). */
  describe(limitName: string): string {
    const over = `over the ${limitName} limit of ${formatBytes(this.max)}`;
    const what = this.limit === 'maxObjectBytes' ? 'stored' : 'decompressed';
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
