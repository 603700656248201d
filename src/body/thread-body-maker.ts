import { crc32Base64, runningChecksums, sha256Hex } from '../compression/checksums.js';
import type { Framing } from '../encoding/records.js';
import { framedMaker, parts } from './bodies.js';
import type { BodyMaker, BodyMakerOptions, PreparedBody, RecordFrame } from './body-types.js';
import { BodyMakerError } from './body-types.js';
import { uncompressedBody } from './uncompressed-body.js';

/** The maker of Parquet files on this thread (parquet-body.js), where there is one. */
type SlicedParquetMaker = NonNullable<
  ReturnType<typeof import('./parquet-body.js')['slicedParquetMaker']>
>;

/**
 * Bodies made with no thread of ours: node:zlib compresses on libuv's pool (one reused context,
 * fed the records in turn), and this thread only hands over the records and gathers the output
 * chunks. For framed formats on runtimes whose node:zlib has zstd, and for gzip and none
 * everywhere. With none there is nothing to compress: the records are joined and hashed here, in
 * short turns.
 *
 * With zstd, records are compressed as they are appended (openFrame): an open batch holds its
 * compressed bytes (about 1/25 at 2,000 series) instead of its records, which took glibc's main
 * heap of such a process from 23.5 to 12.3 MiB (docs/performance.md). A frame that fails loses
 * its batch (counted as internal-error): its records are gone. zstd on a valid context fails
 * only when memory does. gzip must finish one member before the next starts, so it keeps
 * records until the seal.
 *
 * A frame's SHA-256 (which SigV4 signs) and CRC32 are computed on the way, one output chunk
 * (64 KiB at most) at a time as node:zlib hands it over: the turn that ends the frame hashes
 * only its last chunks. Hashing the whole body there instead (Web Crypto, whose digest copies
 * its input on the calling thread before hashing on the pool) was the longest part of the
 * flush's stall for a 1.8 MiB body (bench/results/2026-12-04-event-loop-slices.md). Other bodies
 * (gzip) are hashed whole, by Web Crypto, once made.
 *
 * Parquet (metrics): the file is written on this thread in slices of about 0.5 ms, the event loop
 * running between them, and its pages compressed on libuv's pool (parquet-body.js
 * slicedParquetMaker); its modules load at the first export (prepare()). A shut-down maker
 * abandons a file being written at its next slice; a file that fails gives its columns back
 * (the exporter then stores the batch as OTLP records).
 */
export function createThreadBodyMaker(options: BodyMakerOptions): BodyMaker {
  const bodies = framedMaker({
    compression: options.compression,
    level: options.level,
    zstdEngine: options.engine,
    recordsRepeat: options.recordsRepeat,
  });
  let closed = false;
  /** The Parquet maker, loaded with parquet-body.js at the first export (an OTLP format never loads it). */
  let parquet: Promise<SlicedParquetMaker | undefined> | undefined;
  const sliced = () => {
    if (options.body !== 'parquet') return Promise.resolve(undefined);
    parquet ??= import('./parquet-body.js').then((m) =>
      m.slicedParquetMaker(
        {
          body: 'parquet',
          signal: options.signal,
          compression: options.compression,
          level: options.level,
          zstdEngine: options.engine,
        },
        () => closed,
      ),
    );
    return parquet;
  };
  /** The checksums of each frame's body, computed as its chunks came (see openFrame). */
  const sums = new WeakMap<Uint8Array, { sha256: string; crc32: string }>();
  const open = bodies.open;
  const openFrame =
    open &&
    ((framing: Framing | null, firstRecordBytes: number): RecordFrame => {
      const running = runningChecksums();
      const frame = open(framing, firstRecordBytes, running.update);
      return {
        append: (record, consumed) => frame.append(record, consumed),
        end: () =>
          frame.end().then((body) => {
            sums.set(body, running.finish());
            return body;
          }),
      };
    });
  return {
    runsIn: 'thread-pool',
    openFrame: options.body === 'parquet' ? undefined : openFrame,
    prepare() {
      // A failure to load shows at the first make(), with the batch given back.
      sliced()
        .then((maker) => maker?.load())
        .catch(() => {});
    },
    async make(request): Promise<PreparedBody> {
      if (request.columns !== undefined) {
        const maker = await sliced().catch(() => undefined);
        if (maker === undefined) throw new BodyMakerError('columns need the body worker', request);
        if (closed) throw new BodyMakerError('the exporter is shut down', request);
        try {
          const file = await maker.make({ columns: request.columns });
          const sha256 = request.sha256 ? await sha256Hex(file) : undefined;
          const crc32 = request.crc32 ? crc32Base64(file) : undefined;
          return {
            body: Buffer.from(file.buffer, file.byteOffset, file.byteLength),
            sha256,
            crc32,
          };
        } catch (error) {
          throw new BodyMakerError(
            closed
              ? 'the exporter is shut down'
              : `Parquet body failed: ${(error as Error).message}`,
            request,
          );
        }
      }
      const { records } = request;
      // A frame's records are gone: there is nothing to give back.
      const contents = records && { records };
      if (closed) throw new BodyMakerError('the exporter is shut down', contents);
      let made: Uint8Array;
      let sha256: string | undefined;
      let known: { sha256: string; crc32: string } | undefined;
      try {
        if (records !== undefined && options.compression === 'none') {
          return await uncompressedBody(parts({ records, framing: request.framing }), request);
        }
        made = await (request.frame !== undefined
          ? request.frame
          : bodies.make({ records: request.records, framing: request.framing }));
        known = sums.get(made);
        sha256 = request.sha256 ? (known?.sha256 ?? (await sha256Hex(made))) : undefined;
      } catch (error) {
        throw new BodyMakerError(
          `${options.compression} body failed: ${(error as Error).message}`,
          contents,
        );
      }
      const body = Buffer.from(made.buffer, made.byteOffset, made.byteLength);
      const crc32 = request.crc32 ? (known?.crc32 ?? crc32Base64(made)) : undefined;
      return { body, sha256, crc32 };
    },
    async close() {
      closed = true;
      bodies.close();
      (await parquet?.catch(() => undefined))?.close();
    },
  };
}
