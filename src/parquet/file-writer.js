// @ts-check
// ParquetFileWriter: one Parquet file of a table's schema, written as a sequence of runs. Each
// run is one batch's sealed columns: the table's plan sorts its rows, they are cut into row groups
// of rowGroupRows, and each leaf column's chunk is written as a dictionary page (strings) and data
// pages (chunks.js), each compressed by the caller's compressPage. The footer comes last. A run's
// dictionaries are its own (row groups do not share them), so a run can be dropped once written:
// the compactor bounds its memory this way. A signal's encodeParquet is one run. The choices the
// Parquet spec leaves open are listed in docs/parquet.md ("The writer"). What is the signal's
// (schema, leaf writers, plan) comes in a ParquetTable: metrics (signals/metrics/parquet),
// spans and log records (signals/flat-parquet.js) each have one.
import { bloomable, chunkBloomFilter } from './bloom-chunks.js';
import { MAX_BLOOM_BYTES, MIN_BLOOM_BYTES } from './bloom-filter.js';
import { xxHash64 } from './bloom-hash.js';
import { ByteWriter } from './byte-writer.js';
import { ENCODING, Scratch } from './chunks.js';
import { CODEC, footer, pageHeader } from './footer.js';
import { isSteps, run } from './steps.js';
import { STORE_BELOW, storedPage } from './stored-pages.js';

/** @typedef {import('hyparquet').SchemaElement} SchemaElement */

/**
 * What a signal's files are: their schema, its leaf columns' writers in schema order, and the
 * plan each run is written from (its row order is `order`).
 * @template S, P
 * @typedef {object} ParquetTable
 * @property {SchemaElement[]} schema
 * @property {[string, (p: P, scratch: Scratch, rows: Uint32Array) => import('./chunks.js').Chunk | import('./steps.js').Steps<import('./chunks.js').Chunk>][]} leaves
 *   a leaf writer may return its chunk as steps (steps.js)
 * @property {(sealed: S, grouped: boolean) => (P & { order: Uint32Array }) | import('./steps.js').Steps<P & { order: Uint32Array }>} plan
 *   the plan, or the steps that make it; `grouped`: the run is several row groups, each planned
 *   by planGroup (what only those need can be left out)
 * @property {(p: P, rows: Uint32Array) => P} [planGroup] where a run is several row groups:
 *   the plan of one, `rows` of the run's order (its dictionaries only its rows' values); without
 *   it, every row group of the run is written with the run's plan. A group's plan is read only
 *   until the next call, and the run's own plan (but for its order) not after the first: their
 *   work arrays may be taken again
 * @property {number} rowGroupRows the most rows of a row group (and its default)
 * @property {string} versionKey key-value metadata key of the schema version
 * @property {string} version
 */

/**
 * @typedef {object} FileWriterOptions
 * @property {import('../layout/formats.js').Compression} compression the codec of the
 *   column chunks
 * @property {(page: Uint8Array) => Uint8Array | Promise<Uint8Array>} [compressPage] compresses
 *   one page for `compression` into a frame of its own (required unless 'none';
 *   src/compression/compressors.js createPageCompressor makes it); calls may overlap: results
 *   must come back for the page given
 * @property {number} [rowGroupRows] rows per row group, at most ROW_GROUP_ROWS (the default);
 *   smaller for tests of many row groups
 * @property {number} [pageValues] level entries after which a map's or list's page ends
 *   (PAGE_VALUES by default); smaller for tests of many pages
 * @property {number} [dictionaryMinUses] uses per distinct value from which a chunk of INT64
 *   list values gets a dictionary (DICTIONARY_MIN_USES by default); smaller for tests of both
 *   encodings
 * @property {number} [capacity] bytes the file's buffer starts with (the file's expected size
 *   saves copies as it grows; pages of it never written are never touched)
 * @property {() => Promise<void> | undefined} [pause] asked between steps of the plan and of
 *   the leaf writers, and between leaves: a promise to wait for (the event loop runs meanwhile)
 *   or undefined to go on. Without it the steps run back to back (the body worker).
 * @property {BloomFilterOptions} [bloomFilters] columns whose chunks get a bloom filter (none
 *   by default: then the file's bytes are those of a writer without the option)
 */
/**
 * Split-block bloom filters (bloom-filter.js), one per chunk of each column named, sized for the
 * chunk's distinct values (a dictionary's values, else its rows' distinct hashes), written after
 * the last row group, before the footer; the column's metadata has their offset and length.
 * @typedef {object} BloomFilterOptions
 * @property {readonly string[]} columns leaf columns by their path joined with '.' (`TraceId`):
 *   required top-level columns of type BYTE_ARRAY, INT32, INT64, FLOAT or DOUBLE
 * @property {number} [fpp] the false-positive probability a filter is sized for (0.01 by default)
 * @property {number} [maxBytes] the largest bitset, a power of two (1 MiB by default): a chunk of
 *   more distinct values than that holds at `fpp` gets a filter with more false positives
 */
/** @typedef {{ key: string, value: string }} KeyValue */
/**
 * @typedef {FileWriterOptions & { keyValueMetadata?: KeyValue[] }} EncodeOptions what a
 *   signal's encodeParquet takes: `keyValueMetadata` is written after otel_s3.schema_version
 */

/** The defaults of BloomFilterOptions. */
export const BLOOM_FPP = 0.01;
export const BLOOM_MAX_BYTES = 1 << 20;

/** Written as the file's created_by. */
export const CREATED_BY = 'otel-s3-exporter';

const CODEC_OF = { zstd: CODEC.ZSTD, gzip: CODEC.GZIP, none: CODEC.UNCOMPRESSED };
const MAGIC = Buffer.from('PAR1');
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A leaf column: its path, physical type, and whether it and its groups are all REQUIRED. @typedef {{ path: string[], type: string, required: boolean }} Leaf */

/** @type {WeakMap<object, Leaf[]>} */
const schemaLeaves = new WeakMap();

/**
 * Leaf columns of a table's schema; checked once against its leaf writers.
 * @param {ParquetTable<any, any>} table
 */
function leavesOf(table) {
  const known = schemaLeaves.get(table);
  if (known !== undefined) return known;
  const { schema, leaves } = table;
  /** @type {Leaf[]} */
  const out = [];
  let i = 1;
  /** @param {string[]} prefix @param {boolean} requiredAbove */
  const walk = (prefix, requiredAbove) => {
    const e = /** @type {SchemaElement} */ (schema[i++]);
    const path = [...prefix, e.name];
    const required = requiredAbove && e.repetition_type === 'REQUIRED';
    if (e.type !== undefined) out.push({ path, type: e.type, required });
    for (let c = 0; c < (e.num_children ?? 0); c++) walk(path, required);
  };
  while (i < schema.length) walk([], true);
  if (out.map((l) => l.path.join('.')).join() !== leaves.map(([p]) => p).join()) {
    throw new Error('Parquet: the leaf writers do not match the schema');
  }
  schemaLeaves.set(table, out);
  return out;
}

/** @param {FileWriterOptions} options @param {number} ROW_GROUP_ROWS the table's most */
function check(options, ROW_GROUP_ROWS) {
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
  const minUses = options.dictionaryMinUses ?? 1;
  if (!Number.isInteger(minUses) || minUses < 1) {
    throw new TypeError('encodeParquet: dictionaryMinUses must be a positive integer');
  }
}

/**
 * Per leaf, whether its chunks get a bloom filter (undefined: none does).
 * @param {BloomFilterOptions | undefined} options @param {Leaf[]} leaves
 * @returns {{ leaves: boolean[], fpp: number, maxBytes: number } | undefined}
 */
function bloomOf(options, leaves) {
  if (options === undefined || options.columns.length === 0) return undefined;
  const fpp = options.fpp ?? BLOOM_FPP;
  if (!(fpp > 0 && fpp < 1)) {
    throw new TypeError(`encodeParquet: bloomFilters.fpp must be between 0 and 1, not ${fpp}`);
  }
  const maxBytes = options.maxBytes ?? BLOOM_MAX_BYTES;
  if (
    !Number.isInteger(maxBytes) ||
    maxBytes < MIN_BLOOM_BYTES ||
    maxBytes > MAX_BLOOM_BYTES ||
    (maxBytes & (maxBytes - 1)) !== 0
  ) {
    throw new TypeError(
      `encodeParquet: bloomFilters.maxBytes must be a power of two from ${MIN_BLOOM_BYTES} to ${MAX_BLOOM_BYTES}, not ${maxBytes}`,
    );
  }
  const names = leaves.map((l) => l.path.join('.'));
  for (const column of options.columns) {
    const leaf = leaves[names.indexOf(column)];
    if (leaf === undefined) {
      throw new TypeError(`encodeParquet: bloomFilters: no leaf column ${column}`);
    }
    if (!leaf.required || !bloomable(leaf.type)) {
      throw new TypeError(
        `encodeParquet: bloomFilters: ${column} is not a required column of type BYTE_ARRAY, INT32, INT64, FLOAT or DOUBLE`,
      );
    }
  }
  return { leaves: names.map((n) => options.columns.includes(n)), fpp, maxBytes };
}

/** @param {KeyValue[]} keyValueMetadata @param {string} SCHEMA_VERSION_KEY */
function checkKeyValues(keyValueMetadata, SCHEMA_VERSION_KEY) {
  for (const kv of keyValueMetadata) {
    if (kv.key === SCHEMA_VERSION_KEY)
      throw new TypeError(`encodeParquet: ${SCHEMA_VERSION_KEY} is written by the encoder`);
  }
}

/** @template S, P */
export class TableFileWriter {
  #table;
  #leaves;
  #options;
  #codec;
  #scratch;
  #file;
  #bloom;
  /** @type {import('./bloom-hash.js').Hash64 | undefined} */
  #hash;
  /** @type {{ rows: number, chunks: import('./footer.js').ChunkMeta[] }[]} */
  #groups = [];
  #rows = 0;
  #finished = false;

  /** @param {ParquetTable<S, P>} table @param {FileWriterOptions} options */
  constructor(table, options) {
    check(options, table.rowGroupRows);
    this.#table = table;
    this.#leaves = leavesOf(table);
    this.#bloom = bloomOf(options.bloomFilters, this.#leaves);
    this.#options = options;
    this.#codec = CODEC_OF[options.compression];
    this.#scratch = new Scratch(options.pageValues, options.dictionaryMinUses);
    this.#file = new ByteWriter(Math.max(1 << 16, Math.ceil(options.capacity ?? 0)));
    this.#file.bytes(MAGIC);
  }

  /** Rows written so far. */
  get rows() {
    return this.#rows;
  }

  /** Bytes of the file so far (without the footer). */
  get bytes() {
    return this.#file.length;
  }

  /**
   * Sorts the run's rows and appends them as row groups. `sealed` is not changed: the same
   * columns can be written again.
   * @param {S & { rows: number }} sealed
   */
  async writeRun(sealed) {
    if (this.#finished) throw new Error('the Parquet file is finished');
    if (sealed.rows === 0) return;
    if (this.#bloom !== undefined) this.#hash ??= await xxHash64();
    const groupRows = this.#options.rowGroupRows ?? this.#table.rowGroupRows;
    const grouped = sealed.rows > groupRows && this.#table.planGroup !== undefined;
    const planned = this.#table.plan(sealed, grouped);
    const p = isSteps(planned) ? await this.#steps(planned) : planned;
    for (let from = 0; from < sealed.rows; from += groupRows) {
      const rows = p.order.subarray(from, Math.min(sealed.rows, from + groupRows));
      const group = rows.length < sealed.rows ? (this.#table.planGroup?.(p, rows) ?? p) : p;
      /** @type {import('./footer.js').ChunkMeta[]} */
      const chunks = [];
      for (let leaf = 0; leaf < this.#leaves.length; leaf++) {
        const wait = this.#options.pause?.();
        if (wait !== undefined) await wait;
        chunks.push(await this.#chunk(group, rows, leaf));
      }
      this.#groups.push({ rows: rows.length, chunks });
      this.#rows += rows.length;
    }
  }

  /**
   * The result of steps: run back to back, or with the pauses FileWriterOptions.pause asks for.
   * @template T @param {import('./steps.js').Steps<T>} steps @returns {Promise<T>}
   */
  async #steps(steps) {
    const pause = this.#options.pause;
    if (pause === undefined) return run(steps);
    for (;;) {
      const next = steps.next();
      if (next.done === true) return next.value;
      const wait = pause();
      if (wait !== undefined) await wait;
    }
  }

  /**
   * Writes the footer; the file's bytes, a view of the writer's buffer (no copy). The key-value
   * metadata follows otel_s3.schema_version.
   * @param {KeyValue[]} [keyValueMetadata]
   * @returns {Uint8Array}
   */
  finish(keyValueMetadata = []) {
    if (this.#finished) throw new Error('the Parquet file is finished');
    const table = this.#table;
    checkKeyValues(keyValueMetadata, table.versionKey);
    this.#finished = true;
    const file = this.#file;
    // The bloom filters, column after column of each row group, before the footer.
    for (const group of this.#groups) {
      for (const chunk of group.chunks) {
        const filter = chunk.bloomFilter;
        if (filter === undefined || !('bytes' in filter)) continue;
        chunk.bloomFilter = { offset: file.length, length: filter.bytes.length };
        file.bytes(filter.bytes);
      }
    }
    const meta = footer({
      schema: table.schema,
      rows: this.#rows,
      groups: this.#groups,
      keyValues: [{ key: table.versionKey, value: table.version }, ...keyValueMetadata],
      createdBy: CREATED_BY,
      leaves: this.#leaves.length,
    });
    file.bytes(meta);
    file.uint32(meta.length);
    file.bytes(MAGIC);
    return file.result();
  }

  /**
   * One leaf's column chunk of a row group: its pages compressed together (calls overlap), then
   * written in order; a page too small to gain from a call is stored in its codec's frame.
   * @param {P} p @param {Uint32Array} rows @param {number} leaf
   * @returns {Promise<import('./footer.js').ChunkMeta>}
   */
  async #chunk(p, rows, leaf) {
    const file = this.#file;
    const codec = this.#codec;
    const [, write] = /** @type {ParquetTable<S, P>['leaves'][number]} */ (
      this.#table.leaves[leaf]
    );
    this.#scratch.arena.length = 0; // the last chunk's pages are in the file
    const written = write(p, this.#scratch, rows);
    const chunk = isSteps(written) ? await this.#steps(written) : written;
    const dictionary = chunk.dictionary;
    const { path, type } = /** @type {Leaf} */ (this.#leaves[leaf]);
    // Hashed from the pages before they are compressed (the arena holds them until the next chunk).
    const bloom = this.#bloom;
    const filter =
      bloom?.leaves[leaf] === true
        ? chunkBloomFilter(
            chunk,
            type,
            /** @type {import('./bloom-hash.js').Hash64} */ (this.#hash),
            bloom.fpp,
            bloom.maxBytes,
          )
        : undefined;
    const pages = chunk.pages.map((page) => ({ dictionary: false, sorted: false, ...page }));
    if (dictionary !== undefined) {
      pages.unshift({
        dictionary: true,
        bytes: dictionary.page,
        values: dictionary.ids.length,
        encoding: 0,
        sorted: dictionary.sorted,
      });
    }
    const compress = codec === CODEC.UNCOMPRESSED ? undefined : this.#options.compressPage;
    // Each page to the compressor in turn, with a pause between (handing over many pages is
    // itself work for this thread); the calls overlap all the same.
    /** @type {(Uint8Array | Promise<Uint8Array>)[]} */
    const made = [];
    for (const page of pages) {
      if (compress === undefined) made.push(page.bytes);
      else if (page.bytes.length < STORE_BELOW) made.push(storedPage(codec, page.bytes));
      else {
        const frame = compress(page.bytes);
        // Handled here too: a pause that throws (the maker closed) leaves it unawaited.
        if (frame instanceof Promise) frame.catch(() => {});
        made.push(frame);
      }
      if (made.length < pages.length) {
        const wait = this.#options.pause?.();
        if (wait !== undefined) await wait;
      }
    }
    const bodies = await Promise.all(made);
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
    return {
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
      ...(filter === undefined ? {} : { bloomFilter: { bytes: filter.bytes() } }),
    };
  }
}
