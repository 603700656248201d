// @ts-check
// encodeParquet: sealed columns (sealed.js) → one Parquet file of the schema in schema.js. Rows
// are sorted (row-order.js), cut into row groups of ROW_GROUP_ROWS, and each leaf column's chunk
// is written as a dictionary page (strings) and data pages (chunks.js), each compressed by the
// caller's compressPage. The choices the Parquet spec leaves open are listed in docs/parquet.md
// ("The writer").
import { Scratch } from './chunks.js';
import { CODEC, footer, pageHeader } from './footer.js';
import { LEAVES } from './leaves.js';
import { plan } from './plan.js';
import { ROW_GROUP_ROWS, SCHEMA, SCHEMA_VERSION, SCHEMA_VERSION_KEY } from './schema.js';

/**
 * @typedef {object} EncodeOptions
 * @property {'zstd' | 'gzip' | 'none'} compression the codec of the column chunks
 * @property {(page: Uint8Array) => Uint8Array | Promise<Uint8Array>} [compressPage] compresses
 *   one page for `compression` (required unless 'none'); calls may overlap: results must come
 *   back for the page given
 * @property {{ key: string, value: string }[]} [keyValueMetadata] beside otel_s3.schema_version
 */

/** Written as the file's created_by. */
export const CREATED_BY = 'otel-s3-exporter';

/**
 * A chunk smaller than this (all its pages, uncompressed) is stored UNCOMPRESSED: compressing a
 * page costs a fixed ~50-90 µs of CPU with node:zlib's stream, and saves a few bytes here.
 */
export const COMPRESS_FROM_BYTES = 512;

const CODEC_OF = { zstd: CODEC.ZSTD, gzip: CODEC.GZIP, none: CODEC.UNCOMPRESSED };
const MAGIC = Buffer.from('PAR1');
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Leaf columns of the schema: path, physical type. */
const SCHEMA_LEAVES = (() => {
  /** @type {{ path: string[], type: string }[]} */
  const out = [];
  let i = 1;
  /** @param {string[]} prefix */
  const walk = (prefix) => {
    const e = /** @type {import('./schema.js').SchemaElement} */ (SCHEMA[i++]);
    const path = [...prefix, e.name];
    if (e.type !== undefined) out.push({ path, type: e.type });
    for (let c = 0; c < (e.num_children ?? 0); c++) walk(path);
  };
  while (i < SCHEMA.length) walk([]);
  if (out.map((l) => l.path.join('.')).join() !== LEAVES.map(([p]) => p).join()) {
    throw new Error('Parquet: the leaf writers do not match the schema');
  }
  return out;
})();

/** @param {EncodeOptions} options */
function check(options) {
  if (!LITTLE_ENDIAN) throw new Error('the Parquet writer needs a little-endian machine');
  if (!(options.compression in CODEC_OF)) {
    throw new TypeError(
      `encodeParquet: compression must be 'zstd', 'gzip' or 'none', not ${String(options.compression)}`,
    );
  }
  if (options.compression !== 'none' && typeof options.compressPage !== 'function') {
    throw new TypeError(`encodeParquet: compression '${options.compression}' needs compressPage`);
  }
  for (const kv of options.keyValueMetadata ?? []) {
    if (kv.key === SCHEMA_VERSION_KEY)
      throw new TypeError(`encodeParquet: ${SCHEMA_VERSION_KEY} is written by the encoder`);
  }
}

/**
 * The Parquet file of the sealed columns.
 * @param {import('./sealed.js').SealedColumns} sealed
 * @param {EncodeOptions} options
 * @returns {Promise<Uint8Array>}
 */
export async function encodeParquet(sealed, options) {
  check(options);
  const p = plan(sealed);
  const scratch = new Scratch();
  const codec = CODEC_OF[options.compression];
  /** @type {Uint8Array[]} */
  const parts = [MAGIC];
  let offset = MAGIC.length;
  /** @type {{ rows: number, chunks: import('./footer.js').ChunkMeta[] }[]} */
  const groups = [];
  for (let from = 0; from < sealed.rows; from += ROW_GROUP_ROWS) {
    const rows = p.order.subarray(from, Math.min(sealed.rows, from + ROW_GROUP_ROWS));
    // All of a row group's pages are made, then compressed (calls overlap), then laid out.
    const chunks = LEAVES.map(([, write], leaf) => {
      const chunk = write(p, scratch, rows);
      const pages = chunk.pages.map((page) => ({ dictionary: false, ...page }));
      if (chunk.dictionary !== undefined) {
        const d = chunk.dictionary;
        pages.unshift({ dictionary: true, bytes: d.page, values: d.ids.length, encoding: 0 });
      }
      const raw = pages.reduce((n, page) => n + page.bytes.length, 0);
      const chunkCodec = raw < COMPRESS_FROM_BYTES ? CODEC.UNCOMPRESSED : codec;
      const compress = options.compressPage;
      const bodies = pages.map((page) =>
        chunkCodec === CODEC.UNCOMPRESSED || compress === undefined
          ? page.bytes
          : compress(page.bytes),
      );
      return { leaf, chunk, pages, codec: chunkCodec, bodies };
    });
    /** @type {import('./footer.js').ChunkMeta[]} */
    const metas = [];
    for (const c of chunks) {
      const bodies = await Promise.all(c.bodies);
      const start = offset;
      let rawSize = 0;
      let size = 0;
      let dataOffset = -1;
      c.pages.forEach((page, i) => {
        const body = /** @type {Uint8Array} */ (bodies[i]);
        const header = pageHeader({ ...page, rawSize: page.bytes.length, size: body.length });
        if (!page.dictionary && dataOffset < 0) dataOffset = offset;
        parts.push(header, body);
        offset += header.length + body.length;
        rawSize += header.length + page.bytes.length;
        size += header.length + body.length;
      });
      const leaf = /** @type {{ path: string[], type: string }} */ (SCHEMA_LEAVES[c.leaf]);
      const dictionary = c.chunk.dictionary !== undefined;
      metas.push({
        type: leaf.type,
        encodings: dictionary ? [0, 3, 8] : [0, 3],
        path: leaf.path,
        codec: c.codec,
        values: c.chunk.values,
        rawSize,
        size,
        start,
        dataOffset,
        dictionaryOffset: dictionary ? start : undefined,
        statistics: c.chunk.statistics,
      });
    }
    groups.push({ rows: rows.length, chunks: metas });
  }
  const keyValues = [
    { key: SCHEMA_VERSION_KEY, value: SCHEMA_VERSION },
    ...(options.keyValueMetadata ?? []),
  ];
  const meta = footer({
    schema: SCHEMA,
    rows: sealed.rows,
    groups,
    keyValues,
    createdBy: CREATED_BY,
    leaves: LEAVES.length,
  });
  const tail = new Uint8Array(8);
  new DataView(tail.buffer).setUint32(0, meta.length, true);
  tail.set(MAGIC, 4);
  parts.push(meta, tail);
  // One array that owns its memory: it is transferred to the main thread.
  const file = new Uint8Array(offset + meta.length + tail.length);
  let at = 0;
  for (const part of parts) {
    file.set(part, at);
    at += part.length;
  }
  return file;
}
