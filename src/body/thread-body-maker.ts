import { crc32Base64, sha256Hex } from '../compression/checksums.js';
import { framedMaker, parts } from './bodies.js';
import type { BodyMaker, BodyMakerOptions, PreparedBody } from './body-types.js';
import { BodyMakerError } from './body-types.js';
import { uncompressedBody } from './uncompressed-body.js';

/**
 * Bodies made with no thread of ours: node:zlib compresses on libuv's pool (one reused context,
 * fed the records in turn), Web Crypto hashes there too, and this thread only hands over the
 * records, gathers the output chunks and computes the CRC32 of the compressed body (cheap). For
 * framed formats on runtimes whose node:zlib has zstd, and for gzip and none everywhere. With
 * none there is nothing to compress: the records are joined and hashed here, in short turns.
 *
 * With zstd, records are compressed as they are appended (openFrame): an open batch holds its
 * compressed bytes (about 1/25 at 2,000 series) instead of its records, which took glibc's main
 * heap of such a process from 23.5 to 12.3 MiB (docs/performance.md). A frame that fails loses
 * its batch (counted as internal-error): its records are gone. zstd on a valid context fails
 * only when memory does. gzip must finish one member before the next starts, so it keeps
 * records until the seal.
 */
export function createThreadBodyMaker(options: BodyMakerOptions): BodyMaker {
  const bodies = framedMaker({
    compression: options.compression,
    level: options.level,
    zstdEngine: options.engine,
  });
  let closed = false;
  return {
    runsIn: 'thread-pool',
    openFrame: bodies.open,
    async make(request): Promise<PreparedBody> {
      if (request.columns !== undefined) {
        throw new BodyMakerError('columns need the body worker', request);
      }
      const { records } = request;
      // A frame's records are gone: there is nothing to give back.
      const contents = records && { records };
      if (closed) throw new BodyMakerError('the exporter is shut down', contents);
      let made: Uint8Array;
      let sha256: string | undefined;
      try {
        if (records !== undefined && options.compression === 'none') {
          return await uncompressedBody(parts({ records, framing: request.framing }), request);
        }
        made = await (request.frame !== undefined
          ? request.frame
          : bodies.make({ records: request.records, framing: request.framing }));
        sha256 = request.sha256 ? await sha256Hex(made) : undefined;
      } catch (error) {
        throw new BodyMakerError(
          `${options.compression} body failed: ${(error as Error).message}`,
          contents,
        );
      }
      const body = Buffer.from(made.buffer, made.byteOffset, made.byteLength);
      return { body, sha256, crc32: request.crc32 ? crc32Base64(made) : undefined };
    },
    async close() {
      closed = true;
      bodies.close();
    },
  };
}
