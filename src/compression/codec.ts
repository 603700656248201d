import type { Compression } from '../config.js';

/** Compresses sealed batches off the event loop. */
export interface Codec {
  readonly name: Compression;
  /** Object name suffix: `.zst`, `.gz` or none. */
  readonly extension: string;
  /** Content-Type of compressed objects; undefined keeps the format's own. */
  readonly contentType: string | undefined;
  /**
   * Compresses `data`. The codec may take ownership of `data`'s memory (it is transferred to
   * a worker thread), so the caller must not use it afterwards.
   */
  compress(data: Buffer): Promise<Buffer>;
  /** Releases threads and native memory; later calls to compress() reject. */
  close(): Promise<void>;
}
