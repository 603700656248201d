// @ts-check
// encodeParquet: sealed columns (sealed.js) → one Parquet file of the schema in schema.js. Rows
// are sorted (row-order.js), cut into row groups of ROW_GROUP_ROWS, and each leaf column's chunk
// is written as a dictionary page (strings) and data pages (chunks.js), each compressed by the
// caller's compressPage. The choices the Parquet spec leaves open are listed in docs/parquet.md
// ("The writer").
import { ByteWriter } from './byte-writer.js';
import { ENCODING, Scratch } from './chunks.js';
import { CODEC, footer, pageHeader } from './footer.js';
import { LEAVES } from './leaves.js';
import { plan } from './plan.js';
import { ROW_GROUP_ROWS, SCHEMA, SCHEMA_VERSION, SCHEMA_VERSION_KEY } from './schema.js';
import { STORE_BELOW, storedPage } from './stored-pages.js';

/**
 * @typedef {object} EncodeOptions
 * @property {'zstd' | 'gzip' | 'none'} compression the codec of the column chunks
 * @property {(page: Uint8Array) => Uint8Array | Promise<Uint8Array>} [compressPage] compresses
 *   one page for `compression` into a frame of its own (required unless 'none';
 *   src/compression/compressors.js createPageCompressor makes it); calls may overlap: results
 *   must come back for the page given
 * @property {{ key: string, value: string }[]} [keyValueMetadata] beside otel_s3.schema_version
 * @property {number} [rowGroupRows] rows per row group, at most ROW_GROUP_ROWS (the default);
 *   smaller for tests of many row groups
 * @property {number} [pageValues] level entries after which a map's or list's page ends
 *   (PAGE_VALUES by default); smaller for tests of many pages
 */

/** Written as the file's created_by. */
export const CREATED_BY = 'otel-s3-exporter';

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
  const rowGroupRows = options.rowGroupRows ?? ROW_GROUP_ROWS;
  if (!Number.isInteger(rowGroupRows) || rowGroupRows < 1 || rowGroupRows > ROW_GROUP_ROWS) {
    throw new TypeError(
      `encodeParquet: rowGroupRows must be an integer from 1 to ${ROW_GROUP_ROWS}`,
    );
  }
  const pageValues = options.pageValues ?? 1;
  if (!Number.isInteger(pageValues) || pageValues < 1) {
    throw new TypeError('encodeParquet: pageValues must be a positive integer');
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
  const scratch = new Scratch(options.pageValues);
  const groupRows = options.rowGroupRows ?? ROW_GROUP_ROWS;
  const codec = CODEC_OF[options.compression];
  const file = new ByteWriter(1 << 16);
  file.bytes(MAGIC);
  /** @type {{ rows: number, chunks: import('./footer.js').ChunkMeta[] }[]} */
  const groups = [];
  for (let from = 0; from < sealed.rows; from += groupRows) {
    const rows = p.order.subarray(from, Math.min(sealed.rows, from + groupRows));
    /** @type {import('./footer.js').ChunkMeta[]} */
    const chunks = [];
    for (let leaf = 0; leaf < LEAVES.length; leaf++) {
      const [, write] = /** @type {(typeof LEAVES)[number]} */ (LEAVES[leaf]);
      scratch.arena.length = 0; // the last chunk's pages are in the file
      const chunk = write(p, scratch, rows);
      const dictionary = chunk.dictionary;
      const pages = chunk.pages.map((page) => ({ dictionary: false, ...page }));
      if (dictionary !== undefined) {
        pages.unshift({
          dictionary: true,
          bytes: dictionary.page,
          values: dictionary.ids.length,
          encoding: 0,
        });
      }
      const compress = codec === CODEC.UNCOMPRESSED ? undefined : options.compressPage;
      // The chunk's pages are compressed together (calls overlap), then written in order; a page
      // too small to gain from a call is stored in its codec's frame.
      const bodies = await Promise.all(
        pages.map((page) => {
          if (compress === undefined) return page.bytes;
          return page.bytes.length < STORE_BELOW
            ? storedPage(codec, page.bytes)
            : compress(page.bytes);
        }),
      );
      const start = file.length;
      let rawSize = 0;
      let dataOffset = -1;
      pages.forEach((page, i) => {
        const body = /** @type {Uint8Array} */ (bodies[i]);
        const header = pageHeader({ ...page, rawSize: page.bytes.length, size: body.length });
        if (!page.dictionary && dataOffset < 0) dataOffset = file.length;
        file.bytes(header);
        file.bytes(body);
        rawSize += header.length + page.bytes.length;
      });
      const { path, type } = /** @type {{ path: string[], type: string }} */ (SCHEMA_LEAVES[leaf]);
      chunks.push({
        type,
        encodings: [
          ...(dictionary !== undefined ? [ENCODING.PLAIN] : []),
          ENCODING.RLE,
          ...new Set(chunk.pages.map((page) => page.encoding)),
        ],
        path,
        codec,
        values: chunk.values,
        rawSize,
        size: file.length - start,
        start,
        dataOffset,
        dictionaryOffset: dictionary !== undefined ? start : undefined,
        statistics: chunk.statistics,
      });
    }
    groups.push({ rows: rows.length, chunks });
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
  file.bytes(meta);
  file.uint32(meta.length);
  file.bytes(MAGIC);
  // A copy of its own size and buffer: it is transferred to the main thread.
  return file.result().slice();
}
