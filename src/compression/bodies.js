// @ts-check
// The bodies the worker can make of a batch's records, one per kind of format (the `body` of a
// format's row in src/formats.ts): framed records compressed as a whole, or a Parquet file that
// compresses its column chunks itself. Plain JavaScript, like body-worker.js.
import * as zlib from 'node:zlib';
import { parquetBody } from '../parquet/write.js';
import { join, napiZstd, zstdCompressor } from './zstd-compressors.js';

/** @typedef {{ head: string, separator: string, tail: string } | null} Framing */
/** @typedef {{ records: Uint8Array[], framing: Framing }} Batch */
/** @typedef {(batch: Batch) => Uint8Array | Promise<Uint8Array>} MakeBody */
/**
 * @typedef {{
 *   body: 'framed' | 'parquet',
 *   compression: 'zstd' | 'gzip' | 'none',
 *   level: number,
 *   zstdEngine: 'node:zlib' | 'zstd-napi' | undefined,
 *   parquetCodec: 'ZSTD' | 'GZIP' | 'UNCOMPRESSED',
 * }} BodyOptions
 */

/** The body maker for the worker's options. @param {BodyOptions} options @returns {MakeBody} */
export function bodyMaker(options) {
  return options.body === 'parquet' ? parquetMaker(options) : framedMaker(options);
}

/** The object's parts in order: framing text and records (records are not copied). @param {Batch} batch */
function parts(batch) {
  if (batch.framing === null) return batch.records;
  /** @type {Uint8Array[]} */
  const out = [Buffer.from(batch.framing.head)];
  const separator = Buffer.from(batch.framing.separator);
  batch.records.forEach((record, i) => {
    if (i > 0) out.push(separator);
    out.push(record);
  });
  out.push(Buffer.from(batch.framing.tail));
  return out;
}

/** One request of framed records, compressed as a whole: `.json.zst`, `.binpb.gz`, ... @param {BodyOptions} o @returns {MakeBody} */
function framedMaker(o) {
  if (o.compression === 'zstd' && o.zstdEngine !== undefined) {
    const zstd = zstdCompressor(o.zstdEngine, o.level);
    return (batch) => zstd(parts(batch));
  }
  if (o.compression === 'gzip') {
    return (batch) => {
      const gz = zlib.gzipSync(join(parts(batch)), { level: o.level });
      return join([gz], gz.length); // a copy that owns its memory, safe to transfer
    };
  }
  return (batch) => join(parts(batch));
}

/**
 * A Parquet file (its column chunks compressed with the codec of `compression`); the records are
 * OTLP/JSON requests. Pages are compressed one by one, synchronously, as the writer asks.
 * @param {BodyOptions} o @returns {MakeBody}
 */
function parquetMaker(o) {
  /** @type {((page: Uint8Array) => Uint8Array) | undefined} */
  let compress;
  if (o.compression === 'zstd') {
    if (o.zstdEngine === 'zstd-napi') {
      const napi = napiZstd(o.level);
      compress = (page) => /** @type {Uint8Array} */ (napi([page]));
    } else {
      const params = { [zlib.constants.ZSTD_c_compressionLevel]: o.level };
      compress = (page) => zlib.zstdCompressSync(page, { params });
    }
  } else if (o.compression === 'gzip') {
    compress = (page) => zlib.gzipSync(page, { level: o.level });
  }
  const codec = o.parquetCodec;
  return (batch) => parquetBody(batch.records, { codec, compress, createdBy: 'otel-s3-exporter' });
}
