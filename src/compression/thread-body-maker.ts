import { framedMaker, parts } from './bodies.js';
import type { BodyMaker, BodyMakerOptions, PreparedBody } from './body-types.js';
import { BodyMakerError } from './body-types.js';
import { crc32Base64, sha256Hex } from './checksums.js';
import { uncompressedBody } from './uncompressed-body.js';

/**
 * Bodies made with no thread of ours: node:zlib compresses on libuv's pool (one reused context,
 * fed the records in turn), Web Crypto hashes there too, and this thread only hands over the
 * records, gathers the output chunks and computes the CRC32 of the compressed body (cheap). For
 * framed formats on runtimes whose node:zlib has zstd, and for gzip and none everywhere. With
 * none there is nothing to compress: the records are joined and hashed here, in short turns.
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
    async make(request): Promise<PreparedBody> {
      const { records } = request;
      if (records === undefined) throw new BodyMakerError('columns need the body worker', request);
      if (closed) throw new BodyMakerError('the exporter is shut down', { records });
      let made: Uint8Array;
      let sha256: string | undefined;
      try {
        if (options.compression === 'none') {
          return await uncompressedBody(parts({ records, framing: request.framing }), request);
        }
        made = await bodies.make({ records, framing: request.framing });
        sha256 = request.sha256 ? await sha256Hex(made) : undefined;
      } catch (error) {
        throw new BodyMakerError(
          `${options.compression} body failed: ${(error as Error).message}`,
          { records },
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
