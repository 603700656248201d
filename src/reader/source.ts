/** One entry of a listing: a key and its stored size. */
export interface ListedKey {
  key: string;
  size: number;
  /** When it was last written, in Unix milliseconds by the store's clock, where the store says. */
  lastModified?: number;
}

/**
 * Where stored objects are read from: an S3 bucket, or a local directory laid out like one.
 * Both list keys in the order S3 does (ascending UTF-8 bytes), so time ranges prune the same way.
 */
export interface ObjectSource {
  /** For messages, e.g. `s3://metrics/prod/` or `dir ./mirror`. */
  readonly description: string;
  /** Keys under `prefix` that sort after `startAfter`, in key order; pulled lazily, page by page. */
  list(
    prefix: string,
    startAfter: string | undefined,
    signal: AbortSignal,
  ): AsyncIterable<ListedKey>;
  /** The stored bytes of one object; ObjectTooLargeError past `maxBytes`, without reading on. */
  get(key: string, signal: AbortSignal, maxBytes: number): Promise<Uint8Array>;
  /**
   * Bytes [start, end) of one object, e.g. a Parquet footer or one row group, so a large file is
   * never held whole. Fewer bytes than asked for (the object changed since it was listed) throw.
   */
  getRange(key: string, start: number, end: number, signal: AbortSignal): Promise<Uint8Array>;
  /** Releases what the source opened (the S3 client it created). */
  close(): void;
}
