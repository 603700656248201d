// @ts-check
// A flat table of rows described by a list of columns (a FlatSpec): the Parquet files of spans
// and log records. One row per span (log record); scalar columns, string columns (each with its
// dictionary), MAP<STRING, STRING> columns (attribute sets, each with a dictionary of keys and one
// of values), and list columns that belong to a list group (a span's events, its links: the
// parallel arrays of the ClickHouse exporter's Nested columns, `Events.Timestamp`, `Events.Name`,
// `Events.Attributes`, ...). The batch's columns arrive sealed (SealedFlat: typed arrays, moved
// by transfer); flatTable() makes the ParquetTable the shared writer (src/parquet/file-writer.js)
// writes them with. Documented in docs/parquet.md.

import { keepShape } from '../../base/kept-shapes.js';
import {
  ENCODING,
  elementBytes,
  int32Chunk,
  int64Chunk,
  repeatedChunk,
  stringChunk,
} from '../../parquet/chunks.js';
import {
  byteAligned,
  byteOrder,
  compareBytes,
  dictionaryOfIds,
  StringPool,
} from '../../parquet/dictionaries.js';
import { TableFileWriter } from '../../parquet/file-writer.js';
import { grown } from '../../parquet/grown.js';
import { writeHybrid } from '../../parquet/hybrid.js';
import {
  listGroup,
  mapElements,
  SCHEMA_VERSION_KEY,
  stringElement,
} from '../../parquet/schema-elements.js';
import { compareInt64 } from '../../parquet/statistics.js';

/** @typedef {import('hyparquet').SchemaElement} SchemaElement */
/** @typedef {import('../../parquet/chunks.js').Scratch} Scratch */
/** @typedef {import('../../parquet/chunks.js').Chunk} Chunk */
/** @typedef {import('../../parquet/dictionaries.js').Dictionary} Dictionary */

/**
 * timestamp: INT64 nanoseconds since the epoch, UTC (two Int32 slots per value); int64: INT64
 * (two slots); int32: INT32; string: a string id of the batch (dictionary-encoded); text: a
 * string written PLAIN, for columns where nearly every value is its own (ids, bodies): the
 * column holds where each value's UTF-8 ends in its bytes (SealedFlat.texts); map: an attribute
 * set id. A text column is a STRING as a string column is: readers see no difference.
 * @typedef {'timestamp' | 'int64' | 'int32' | 'string' | 'text' | 'map'} ColumnKind
 */

/**
 * @typedef {object} FlatColumn
 * @property {string} name the column's name in the table
 * @property {ColumnKind} kind
 * @property {number} [list] the list group it is an element of (an index into FlatSpec.lists); none: one value per row
 */

/**
 * @typedef {object} FlatSpec
 * @property {string} signal 'spans', 'log records': names them in messages
 * @property {readonly FlatColumn[]} columns in table order
 * @property {readonly string[]} lists the list groups (their columns are named `<group>.<field>`)
 * @property {readonly string[]} sort the row columns rows are sorted by (strings by their bytes, then the next)
 * @property {string} version written as otel_s3.schema_version
 */

/**
 * A batch's columns, sealed. Per column of the spec, one typed array: per row, or (a list
 * column) per item of its list group, items row after row. Strings are ids into `strings`, maps
 * attribute set ids (set 0 is the empty set), 64-bit integers two Int32 slots (low word, high).
 * @typedef {object} SealedFlat
 * @property {number} rows
 * @property {(Int32Array | Uint32Array)[]} columns
 * @property {Uint32Array[]} lengths per list group: per row, its items
 * @property {number[]} items per list group: items in all
 * @property {number} stringCount
 * @property {Uint8Array} strings every string, UTF-8, one after another
 * @property {Uint32Array} stringOffsets string i is strings[offsets[i], offsets[i + 1])
 * @property {number} setCount
 * @property {Uint32Array} setOffsets set i is entries [offsets[i], offsets[i + 1])
 * @property {Int32Array} setEntries per entry 2 slots: key string id, value string id or -1 (no value)
 * @property {(Uint8Array | undefined)[]} texts per text column: its values' UTF-8, one after another (value k ends at columns[c][k], starts where k - 1 ends)
 * @property {ArrayBuffer[]} transfer every buffer above, for postMessage's transfer list
 * @property {string} [late] set when a time of the batch is past what a timestamp column holds
 *   (2^63 ns and later, kept as its uint64 bits): why no file is made of it
 */

/** Written into every file's key-value metadata, as the metrics' files have it. */
export { SCHEMA_VERSION_KEY };

/**
 * The bloom filters of every Parquet file of spans and log records, the exporter's and
 * compaction's (docs/parquet.md, "Bloom filters on TraceId"): TraceId, sized for each row group's
 * distinct ids at 1 % false positives. For the writer's options (FileWriterOptions.bloomFilters).
 * @type {import('../../parquet/file-writer.js').BloomFilterOptions}
 */
export const TRACE_ID_BLOOM_FILTERS = Object.freeze({
  columns: Object.freeze(['TraceId']),
  fpp: 0.01,
});

/** Rows per row group: a batch is one row group, but for the largest (each group planned apart). */
export const FLAT_ROW_GROUP_ROWS = 65_536;

/** Int32 slots a value of `kind` takes. @param {ColumnKind} kind */
export const slotsOf = (kind) => (kind === 'timestamp' || kind === 'int64' ? 2 : 1);

/** The elements of one value of `kind` named `name`. @param {string} name @param {ColumnKind} kind @returns {SchemaElement[]} */
function valueElements(name, kind) {
  switch (kind) {
    case 'timestamp':
      return [
        {
          name,
          type: 'INT64',
          repetition_type: 'REQUIRED',
          logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' },
        },
      ];
    case 'int64':
      return [{ name, type: 'INT64', repetition_type: 'REQUIRED' }];
    case 'int32':
      return [{ name, type: 'INT32', repetition_type: 'REQUIRED' }];
    case 'string':
    case 'text':
      return [stringElement(name)];
    case 'map':
      return mapElements(name);
  }
}

/** @type {WeakMap<FlatSpec, { version: string, schema: SchemaElement[] }>} */
const expected = new WeakMap();

/**
 * What a reader of a spec's files expects (src/parquet/read.ts, schemaMetadata).
 * @param {FlatSpec} spec
 */
export function expectedSchema(spec) {
  let e = expected.get(spec);
  if (e === undefined) {
    e = { version: spec.version, schema: schemaOf(spec) };
    expected.set(spec, e);
  }
  return e;
}

/** The schema of a spec: its columns in order, list columns as LIST<element>. @param {FlatSpec} spec @returns {SchemaElement[]} */
export function schemaOf(spec) {
  /** @type {SchemaElement[]} */
  const out = [{ name: 'root', num_children: spec.columns.length }];
  for (const c of spec.columns) {
    if (c.list === undefined) out.push(...valueElements(c.name, c.kind));
    else {
      out.push(...listGroup(c.name), ...valueElements('element', c.kind));
    }
  }
  return out;
}

/** Leaf paths of a column, as the writer joins them. @param {FlatColumn} c */
function leafPaths(c) {
  const base = c.list === undefined ? c.name : `${c.name}.list.element`;
  return c.kind === 'map' ? [`${base}.key_value.key`, `${base}.key_value.value`] : [base];
}

/**
 * A map column's dictionaries: of its sets' keys and of their values.
 * @typedef {{ keys: Dictionary, values: Dictionary }} MapPlan
 */

/**
 * @typedef {object} FlatPlan
 * @property {SealedFlat} s
 * @property {StringPool} pool
 * @property {(Dictionary | undefined)[]} dicts per string column
 * @property {(MapPlan | undefined)[]} maps per map column
 * @property {Uint8Array} full per set: 1 if every entry has a value (fullSets)
 * @property {Uint32Array[]} starts per list group: per row, where its items start (rows + 1)
 * @property {Uint32Array} order
 * @property {DictionarySpace} space the dictionaries' work arrays, taken again by each planGroup
 */

/** Values a column has in the batch. @param {FlatColumn} c @param {SealedFlat} s */
const countOf = (c, s) => (c.list === undefined ? s.rows : /** @type {number} */ (s.items[c.list]));

/**
 * Per list group of a batch: where each row's items start (rows + 1 entries).
 * @param {SealedFlat} s @returns {Uint32Array[]}
 */
export function itemStarts(s) {
  return s.lengths.map((lengths) => {
    const out = new Uint32Array(s.rows + 1);
    for (let r = 0; r < s.rows; r++)
      out[r + 1] = /** @type {number} */ (out[r]) + /** @type {number} */ (lengths[r]);
    return out;
  });
}

/**
 * A batch's plan. `grouped`: each row group will have a plan of its own (planGroup), so the
 * batch's dictionaries are made only for the columns its row order needs.
 * @param {FlatSpec} spec @param {SealedFlat} s @param {boolean} grouped @returns {FlatPlan}
 */
function plan(spec, s, grouped) {
  const pool = new StringPool(s.strings, s.stringOffsets, s.stringCount);
  const starts = itemStarts(s);
  const sorted = new Set(spec.sort);
  const space = new DictionarySpace(pool.size, s.setCount);
  const { dicts, maps } = dictionaries(
    spec,
    s,
    pool,
    (c) => allValues(countOf(c, s)),
    grouped ? (c) => c.list === undefined && sorted.has(c.name) : everyColumn,
    space,
  );
  const order = rowOrder(spec, s, dicts);
  return { s, pool, dicts, maps, full: fullSets(s), starts, order, space };
}

/**
 * The plan of one row group of a planned batch, `rows` (in their order): its dictionaries hold
 * only the values of those rows, as a batch of those rows alone would (a compaction's output
 * splits its one sorted batch into row groups so).
 * @param {FlatSpec} spec @param {FlatPlan} p @param {Uint32Array} rows @returns {FlatPlan}
 */
function planGroup(spec, p, rows) {
  // The batch's arrays, taken again by each row group (ParquetTable.planGroup).
  const space = p.space.again();
  const { dicts, maps } = dictionaries(
    spec,
    p.s,
    p.pool,
    (c) => {
      if (c.list === undefined) return rows;
      // A list column's values: the rows' items, in order.
      const lengths = /** @type {Uint32Array} */ (p.s.lengths[c.list]);
      const starts = /** @type {Uint32Array} */ (p.starts[c.list]);
      let n = 0;
      for (let k = 0; k < rows.length; k++) n += /** @type {number} */ (lengths[rows[k] ?? 0]);
      const out = new Uint32Array(n);
      let at = 0;
      for (let k = 0; k < rows.length; k++) {
        const r = /** @type {number} */ (rows[k]);
        const from = /** @type {number} */ (starts[r]);
        const to = from + /** @type {number} */ (lengths[r]);
        for (let j = from; j < to; j++) out[at++] = j;
      }
      return out;
    },
    everyColumn,
    space,
  );
  return { ...p, dicts, maps };
}

/** @param {FlatColumn} _c */
const everyColumn = (_c) => true;

/** The indices 0 to n - 1. @param {number} n */
function allValues(n) {
  const out = new Uint32Array(n);
  for (let k = 0; k < n; k++) out[k] = k;
  return out;
}

/**
 * The dictionaries of the string and map columns (those `wanted`), of the values `valuesOf` each
 * column names (indices into its values: rows, or a list column's items).
 * @param {FlatSpec} spec @param {SealedFlat} s @param {StringPool} pool
 * @param {(c: FlatColumn) => Uint32Array} valuesOf @param {(c: FlatColumn) => boolean} wanted
 * @param {DictionarySpace} space
 */
function dictionaries(spec, s, pool, valuesOf, wanted, space) {
  /** @type {(Dictionary | undefined)[]} */
  const dicts = [];
  /** @type {(MapPlan | undefined)[]} */
  const maps = [];
  spec.columns.forEach((c, i) => {
    if ((c.kind !== 'string' && c.kind !== 'map') || !wanted(c)) return;
    const values = /** @type {Uint32Array} */ (s.columns[i]);
    const which = valuesOf(c);
    if (c.kind === 'map') {
      maps[i] = mapPlan(pool, s, values, which, space);
      return;
    }
    const used = space.keys;
    /** @type {number[]} */
    const ids = [];
    for (let k = 0; k < which.length; k++) {
      const id = /** @type {number} */ (values[/** @type {number} */ (which[k])]);
      if (used[id] === 0) {
        used[id] = 1;
        ids.push(id);
      }
    }
    unmark(used, ids);
    dicts[i] = dictionaryOfIds(pool, ids, space.rank());
  });
  return { dicts, maps };
}

/** Sets used[i] back to 0 for each of `marked`. @param {Uint8Array} used @param {number[]} marked */
function unmark(used, marked) {
  for (let k = 0; k < marked.length; k++) used[/** @type {number} */ (marked[k])] = 0;
}

/**
 * The work arrays of a batch's dictionaries, sized by its string table and its sets, kept from
 * one row group's plan to the next (planGroup): a row group's dictionaries are read only until
 * the next one is planned, so its rank arrays are taken again. Made and dropped a dictionary at a
 * time, they were most of the memory outside the heap that had V8 collect in full every 80 ms
 * or so in a compaction.
 */
class DictionarySpace {
  /** @param {number} strings @param {number} sets */
  constructor(strings, sets) {
    this.strings = strings;
    /** Per pool id: 1 while marked (keys, or a string column's values). */
    this.keys = new Uint8Array(strings);
    /** Per pool id: 1 while marked (a map's values). */
    this.values = new Uint8Array(strings);
    /** Per set: 1 while marked. */
    this.sets = new Uint8Array(sets);
    /** @type {Int32Array[]} */
    this.ranks = [];
    this.taken = 0;
  }

  /** A rank array (-1 for every pool id), not taken since again(). */
  rank() {
    let rank = this.ranks[this.taken];
    if (rank === undefined) {
      rank = new Int32Array(this.strings);
      this.ranks.push(rank);
    }
    this.taken++;
    return rank.fill(-1);
  }

  /** Every rank array may be taken again: the dictionaries made with them are dropped. */
  again() {
    this.taken = 0;
    return this;
  }
}

/**
 * The dictionaries of a map column: of the keys and of the values of the sets it uses (visited
 * once each, whatever the number of rows that have them).
 * @param {StringPool} pool @param {SealedFlat} s @param {Uint32Array} sets per value: its set
 * @param {Uint32Array} which the values (indices into `sets`) to take
 * @param {DictionarySpace} space
 * @returns {MapPlan}
 */
function mapPlan(pool, s, sets, which, space) {
  const { sets: usedSets, keys: usedKeys, values: usedValues } = space;
  /** @type {number[]} */
  const keyIds = [];
  /** @type {number[]} */
  const valueIds = [];
  /** @type {number[]} */
  const setIds = [];
  const { setOffsets, setEntries } = s;
  for (let k = 0; k < which.length; k++) {
    const set = /** @type {number} */ (sets[/** @type {number} */ (which[k])]);
    if (usedSets[set] === 1) continue;
    usedSets[set] = 1;
    setIds.push(set);
    const end = /** @type {number} */ (setOffsets[set + 1]);
    for (let e = /** @type {number} */ (setOffsets[set]); e < end; e++) {
      const key = /** @type {number} */ (setEntries[2 * e]);
      if (usedKeys[key] === 0) {
        usedKeys[key] = 1;
        keyIds.push(key);
      }
      const v = /** @type {number} */ (setEntries[2 * e + 1]);
      if (v >= 0 && usedValues[v] === 0) {
        usedValues[v] = 1;
        valueIds.push(v);
      }
    }
  }
  unmark(usedSets, setIds);
  unmark(usedKeys, keyIds);
  unmark(usedValues, valueIds);
  return {
    keys: dictionaryOfIds(pool, keyIds, space.rank()),
    values: byteAligned(dictionaryOfIds(pool, valueIds, space.rank())),
  };
}

/**
 * Per set of the batch: 1 if every entry has a value (its value levels are one run).
 * @param {SealedFlat} s
 */
function fullSets(s) {
  const full = new Uint8Array(s.setCount);
  for (let set = 0; set < s.setCount; set++) {
    let all = 1;
    const end = /** @type {number} */ (s.setOffsets[set + 1]);
    for (let e = /** @type {number} */ (s.setOffsets[set]); e < end; e++) {
      if (/** @type {number} */ (s.setEntries[2 * e + 1]) < 0) {
        all = 0;
        break;
      }
    }
    full[set] = all;
  }
  return full;
}

/**
 * The rows in the order of spec.sort: string columns by their dictionary rank (the bytes' order),
 * text by its bytes, timestamps and integers as signed numbers; equal rows keep their order.
 * Where the sort has a text column (TraceId), the rows are first put in the order of the columns
 * up to it without comparing rows: the text radix-sorted (byteOrder), the string columns before
 * it by counting; only rows equal in all of those (a trace's spans) are compared on the rest.
 * @param {FlatSpec} spec @param {SealedFlat} s @param {(Dictionary | undefined)[]} dicts
 */
function rowOrder(spec, s, dicts) {
  const n = s.rows;
  const columns = spec.sort.map((name) =>
    spec.columns.findIndex((c) => c.name === name && c.list === undefined),
  );
  /** Per sort key of a string column: each row's rank. @type {(Int32Array | undefined)[]} */
  const ranks = columns.map((i) => {
    const dict = dicts[i];
    return dict === undefined
      ? undefined
      : ranksOf(dict, /** @type {Int32Array} */ (s.columns[i]), n);
  });
  /** @type {((a: number, b: number) => number)[]} */
  const keys = columns.map((i, k) => {
    const c = /** @type {FlatColumn} */ (spec.columns[i]);
    const values = /** @type {Int32Array} */ (s.columns[i]);
    const rank = ranks[k];
    if (c.kind === 'text') {
      const bytes = /** @type {Uint8Array} */ (s.texts[i]);
      const ends = /** @type {Uint32Array} */ (s.columns[i]);
      return (a, b) =>
        compareBytes(
          bytes,
          startOf(ends, a),
          /** @type {number} */ (ends[a]),
          bytes,
          startOf(ends, b),
          /** @type {number} */ (ends[b]),
        );
    }
    if (rank !== undefined) {
      return (a, b) => /** @type {number} */ (rank[a]) - /** @type {number} */ (rank[b]);
    }
    if (slotsOf(c.kind) === 2) return (a, b) => compareInt64(values, a, b);
    return (a, b) => /** @type {number} */ (values[a]) - /** @type {number} */ (values[b]);
  });
  /** @param {number} a @param {number} b @param {number} from the first key compared */
  const compare = (a, b, from) => {
    for (let k = from; k < keys.length; k++) {
      const d = /** @type {(a: number, b: number) => number} */ (keys[k])(a, b);
      if (d !== 0) return d;
    }
    return a - b;
  };
  const t = columns.findIndex((i) => spec.columns[i]?.kind === 'text');
  const leading = columns.slice(0, t);
  if (t < 0 || leading.some((i) => dicts[i] === undefined)) {
    const order = new Uint32Array(n);
    for (let r = 0; r < n; r++) order[r] = r;
    return order.sort((a, b) => compare(a, b, 0));
  }
  // The text column's order (ties by row), then each string column before it, last first, by
  // counting: stable, so the rows are in the order of the columns up to the text.
  const ends = /** @type {Uint32Array} */ (s.columns[/** @type {number} */ (columns[t])]).subarray(
    0,
    n,
  );
  const starts = new Uint32Array(n);
  for (let r = 1; r < n; r++) starts[r] = /** @type {number} */ (ends[r - 1]);
  const byText = byteOrder(
    /** @type {Uint8Array} */ (s.texts[/** @type {number} */ (columns[t])]),
    starts,
    ends,
  );
  /** @type {Uint32Array} */
  let order = new Uint32Array(byText.buffer, byText.byteOffset, byText.length);
  for (let k = t - 1; k >= 0; k--) {
    const i = /** @type {number} */ (columns[k]);
    const dict = /** @type {Dictionary} */ (dicts[i]);
    order = countingOrder(order, /** @type {Int32Array} */ (ranks[k]), dict.ids.length);
  }
  // Runs of rows equal up to the text (by its bytes and the ranks before it): by the rest.
  let runStart = 0;
  for (let j = 1; j <= n; j++) {
    if (j < n) {
      const a = /** @type {number} */ (order[j - 1]);
      const b = /** @type {number} */ (order[j]);
      let same = true;
      for (let k = 0; k <= t && same; k++)
        same = /** @type {(a: number, b: number) => number} */ (keys[k])(a, b) === 0;
      if (same) continue;
    }
    if (j - runStart > 1) {
      order.subarray(runStart, j).sort((a, b) => compare(a, b, t + 1));
    }
    runStart = j;
  }
  return order;
}

/** Per row: the dictionary rank of its string. @param {Dictionary} dict @param {Int32Array} values @param {number} n */
function ranksOf(dict, values, n) {
  const rank = new Int32Array(n);
  for (let r = 0; r < n; r++) rank[r] = /** @type {number} */ (dict.rank[values[r] ?? 0]);
  return rank;
}

/**
 * `order` stably sorted by `rank` (per row, below `size`): a counting sort.
 * @param {Uint32Array} order @param {Int32Array} rank @param {number} size
 */
function countingOrder(order, rank, size) {
  if (size <= 1) return order;
  const next = new Uint32Array(size + 1);
  for (let j = 0; j < order.length; j++) {
    const r = /** @type {number} */ (rank[/** @type {number} */ (order[j])]);
    next[r + 1] = /** @type {number} */ (next[r + 1]) + 1;
  }
  for (let r = 0; r < size; r++)
    next[r + 1] = /** @type {number} */ (next[r + 1]) + /** @type {number} */ (next[r]);
  const out = new Uint32Array(order.length);
  for (let j = 0; j < order.length; j++) {
    const row = /** @type {number} */ (order[j]);
    const r = /** @type {number} */ (rank[row]);
    out[/** @type {number} */ (next[r])] = row;
    next[r] = /** @type {number} */ (next[r]) + 1;
  }
  return out;
}

/** Where value k of a text column starts. @param {Uint32Array} ends @param {number} k */
const startOf = (ends, k) => (k === 0 ? 0 : /** @type {number} */ (ends[k - 1]));

/**
 * Text values `values[0, n)` (indices into a text column), PLAIN: each its 4-byte length, then
 * its bytes.
 * @param {import('../../parquet/byte-writer.js').ByteWriter} arena @param {Int32Array | Uint32Array} values @param {number} n
 * @param {Uint8Array} bytes @param {Uint32Array} ends
 */
function writeTexts(arena, values, n, bytes, ends) {
  for (let k = 0; k < n; k++) {
    const v = /** @type {number} */ (values[k]);
    const start = startOf(ends, v);
    const end = /** @type {number} */ (ends[v]);
    arena.uint32(end - start);
    arena.range(bytes, start, end);
  }
}

/**
 * A required text column, PLAIN, with its min and max (by bytes) as statistics.
 * @param {Scratch} scratch @param {Uint32Array} rows @param {Uint8Array} bytes @param {Uint32Array} ends
 * @returns {Chunk}
 */
function textChunk(scratch, rows, bytes, ends) {
  const n = rows.length;
  const start = scratch.arena.length;
  writeTexts(scratch.arena, rows, n, bytes, ends);
  /** @type {import('../../parquet/statistics.js').Statistics} */
  let statistics = { nulls: 0 };
  if (n > 0) {
    let lo = /** @type {number} */ (rows[0]);
    let hi = lo;
    for (let k = 1; k < n; k++) {
      const r = /** @type {number} */ (rows[k]);
      const r0 = startOf(ends, r);
      const r1 = /** @type {number} */ (ends[r]);
      if (
        compareBytes(bytes, r0, r1, bytes, startOf(ends, lo), /** @type {number} */ (ends[lo])) < 0
      )
        lo = r;
      else if (
        compareBytes(bytes, r0, r1, bytes, startOf(ends, hi), /** @type {number} */ (ends[hi])) > 0
      )
        hi = r;
    }
    statistics = {
      nulls: 0,
      min: bytes.slice(startOf(ends, lo), ends[lo]),
      max: bytes.slice(startOf(ends, hi), ends[hi]),
    };
  }
  return {
    pages: [
      {
        bytes: scratch.arena.buf.subarray(start, scratch.arena.length),
        values: n,
        encoding: ENCODING.PLAIN,
      },
    ],
    values: n,
    statistics,
  };
}

/** Dictionary indices (or Int32 slots) of a page, grown as they come. */
class Collected {
  values = new Int32Array(1024);
  length = 0;

  /** The values' array with room for `n` more after `length`. @param {number} n */
  room(n) {
    if (this.length + n > this.values.length)
      this.values = grown(this.values, this.length + n, this.length);
    return this.values;
  }

  /** @param {number} v */
  push(v) {
    if (this.length === this.values.length)
      this.values = grown(this.values, this.length + 1, this.length);
    this.values[this.length++] = v;
  }
}

/**
 * The page values of a list or map leaf: dictionary indices (RLE_DICTIONARY) or INT64s (PLAIN).
 * @param {Collected} got @param {Dictionary | undefined} dict
 */
const pageValues =
  (got, dict) => (/** @type {import('../../parquet/byte-writer.js').ByteWriter} */ arena) => {
    if (dict !== undefined) {
      arena.byte(dict.width);
      writeHybrid(arena, got.values, got.length, dict.width);
    } else arena.bytes(elementBytes(got.values, got.length));
    got.length = 0;
  };

/**
 * A map leaf (keys or values): per row its set's entries, or (a list of maps) per row its items'
 * sets. Levels of a row's map: key_value repeated (definition 1 with an entry, 0 for an empty
 * map), value optional (2 with a value). In a list, one more of each: the list's element
 * (definition 1) and its repetition (1 a new element, 2 the next entry of one).
 * @param {FlatColumn} c @param {number} i @param {boolean} isKey
 * @returns {(p: FlatPlan, scratch: Scratch, rows: Uint32Array) => Chunk}
 */
const mapLeaf = (c, i, isKey) => (p, scratch, rows) => {
  const { setOffsets, setEntries } = p.s;
  const m = /** @type {MapPlan} */ (p.maps[i]);
  const dict = isKey ? m.keys : m.values;
  const rank = dict.rank;
  const full = p.full;
  const sets = /** @type {Uint32Array} */ (p.s.columns[i]);
  const inList = c.list !== undefined;
  const lengths = inList
    ? /** @type {Uint32Array} */ (p.s.lengths[/** @type {number} */ (c.list)])
    : null;
  const starts = inList
    ? /** @type {Uint32Array} */ (p.starts[/** @type {number} */ (c.list)])
    : null;
  const got = new Collected();
  const base = inList ? 1 : 0;
  /** @param {number} set @param {number} firstRep @param {import('../../parquet/bit-packer.js').BitPacker} rep @param {import('../../parquet/bit-packer.js').BitPacker} def */
  const entries = (set, firstRep, rep, def) => {
    const a = /** @type {number} */ (setOffsets[set]);
    const n = /** @type {number} */ (setOffsets[set + 1]) - a;
    rep.value(firstRep);
    if (n === 0) {
      def.value(base);
      return 1;
    }
    if (n > 1) rep.repeat(base + 1, n - 1);
    const out = got.room(n);
    let at = got.length;
    if (isKey) {
      def.repeat(base + 1, n);
      for (let e = a; e < a + n; e++) {
        out[at++] = /** @type {number} */ (rank[/** @type {number} */ (setEntries[2 * e])]);
      }
    } else if (full[set] === 1) {
      def.repeat(base + 2, n);
      for (let e = a; e < a + n; e++) {
        out[at++] = /** @type {number} */ (rank[/** @type {number} */ (setEntries[2 * e + 1])]);
      }
    } else {
      for (let e = a; e < a + n; e++) {
        const v = /** @type {number} */ (setEntries[2 * e + 1]);
        if (v < 0) def.value(base + 1);
        else {
          def.value(base + 2);
          out[at++] = /** @type {number} */ (rank[v]);
        }
      }
    }
    got.length = at;
    return n;
  };
  const chunk = repeatedChunk(
    scratch,
    rows.length,
    inList || !isKey ? 2 : 1,
    {
      row: (k, rep, def) => {
        const row = /** @type {number} */ (rows[k]);
        if (lengths === null || starts === null)
          return entries(/** @type {number} */ (sets[row]), 0, rep, def);
        const n = /** @type {number} */ (lengths[row]);
        if (n === 0) {
          rep.value(0);
          def.value(0);
          return 1;
        }
        const start = /** @type {number} */ (starts[row]);
        let total = 0;
        for (let j = 0; j < n; j++)
          total += entries(/** @type {number} */ (sets[start + j]), j === 0 ? 0 : 1, rep, def);
        return total;
      },
      values: pageValues(got, dict),
    },
    ENCODING.RLE_DICTIONARY,
    inList ? 2 : 1,
  );
  return { ...chunk, dictionary: dict };
};

/**
 * A list of scalars: per row its items' values (strings as dictionary indices, 64-bit integers
 * PLAIN). An empty list is one entry at definition level 0.
 * @param {FlatColumn} c @param {number} i
 * @returns {(p: FlatPlan, scratch: Scratch, rows: Uint32Array) => Chunk}
 */
const listLeaf = (c, i) => (p, scratch, rows) => {
  const group = /** @type {number} */ (c.list);
  const lengths = /** @type {Uint32Array} */ (p.s.lengths[group]);
  const starts = /** @type {Uint32Array} */ (p.starts[group]);
  const values = /** @type {Int32Array} */ (p.s.columns[i]);
  const dict = p.dicts[i];
  const text = c.kind === 'text';
  const slots = slotsOf(c.kind);
  const got = new Collected();
  const bytes = /** @type {Uint8Array} */ (p.s.texts[i]);
  /** @param {import('../../parquet/byte-writer.js').ByteWriter} arena */
  const textValues = (arena) => {
    writeTexts(arena, got.values, got.length, bytes, /** @type {Uint32Array} */ (p.s.columns[i]));
    got.length = 0;
  };
  const chunk = repeatedChunk(
    scratch,
    rows.length,
    1,
    {
      row: (k, rep, def) => {
        const row = /** @type {number} */ (rows[k]);
        const n = /** @type {number} */ (lengths[row]);
        rep.value(0);
        if (n === 0) {
          def.value(0);
          return 1;
        }
        if (n > 1) rep.repeat(1, n - 1);
        def.repeat(1, n);
        const start = /** @type {number} */ (starts[row]);
        for (let j = start; j < start + n; j++) {
          if (text) got.push(j);
          else if (dict !== undefined)
            got.push(/** @type {number} */ (dict.rank[/** @type {number} */ (values[j])]));
          else
            for (let w = 0; w < slots; w++) got.push(/** @type {number} */ (values[slots * j + w]));
        }
        return n;
      },
      values: text ? textValues : pageValues(got, dict),
    },
    dict !== undefined ? ENCODING.RLE_DICTIONARY : ENCODING.PLAIN,
  );
  return dict === undefined ? chunk : { ...chunk, dictionary: dict };
};

/**
 * The leaf writers of a spec, in schema order.
 * @param {FlatSpec} spec
 * @returns {[string, (p: FlatPlan, scratch: Scratch, rows: Uint32Array) => Chunk][]}
 */
function leavesOf(spec) {
  /** @type {[string, (p: FlatPlan, scratch: Scratch, rows: Uint32Array) => Chunk][]} */
  const out = [];
  spec.columns.forEach((c, i) => {
    const paths = leafPaths(c);
    if (c.kind === 'map') {
      out.push([/** @type {string} */ (paths[0]), mapLeaf(c, i, true)]);
      out.push([/** @type {string} */ (paths[1]), mapLeaf(c, i, false)]);
      return;
    }
    const path = /** @type {string} */ (paths[0]);
    if (c.list !== undefined) {
      out.push([path, listLeaf(c, i)]);
      return;
    }
    switch (c.kind) {
      case 'string':
        out.push([
          path,
          (p, scratch, rows) => {
            const dict = /** @type {Dictionary} */ (p.dicts[i]);
            const ids = /** @type {Uint32Array} */ (p.s.columns[i]);
            return stringChunk(scratch, rows, dict, p.pool, ids, dict.rank);
          },
        ]);
        return;
      case 'text':
        out.push([
          path,
          (p, scratch, rows) =>
            textChunk(
              scratch,
              rows,
              /** @type {Uint8Array} */ (p.s.texts[i]),
              /** @type {Uint32Array} */ (p.s.columns[i]),
            ),
        ]);
        return;
      case 'int32':
        out.push([
          path,
          (p, scratch, rows) =>
            int32Chunk(scratch, rows, null, /** @type {Int32Array} */ (p.s.columns[i])),
        ]);
        return;
      default:
        out.push([
          path,
          (p, scratch, rows) =>
            int64Chunk(scratch, rows, /** @type {Int32Array} */ (p.s.columns[i])),
        ]);
    }
  });
  return out;
}

/**
 * The ParquetTable of a spec, for the shared writer.
 * @param {FlatSpec} spec
 * @returns {import('../../parquet/file-writer.js').ParquetTable<SealedFlat, FlatPlan>}
 */
export function flatTable(spec) {
  return {
    schema: schemaOf(spec),
    leaves: leavesOf(spec),
    plan: (s, grouped) => plan(spec, s, grouped),
    planGroup: (p, rows) => planGroup(spec, p, rows),
    rowGroupRows: FLAT_ROW_GROUP_ROWS,
    versionKey: SCHEMA_VERSION_KEY,
    version: spec.version,
  };
}

/**
 * The encoder of a spec's sealed columns: one Parquet file, its rows sorted (one run of the
 * shared writer), with TRACE_ID_BLOOM_FILTERS unless `options` names its own.
 * @param {FlatSpec} spec
 * @returns {(sealed: SealedFlat, options: import('../../parquet/file-writer.js').EncodeOptions) => Promise<Uint8Array>}
 */
export function flatEncoder(spec) {
  const table = flatTable(spec);
  return async (sealed, options) => {
    // Never a wrapped time: the batch goes to its fallback (OTLP/JSON, which holds it) instead.
    if (sealed.late !== undefined) throw new Error(sealed.late);
    const writer = new TableFileWriter(table, {
      ...options,
      bloomFilters: options.bloomFilters ?? TRACE_ID_BLOOM_FILTERS,
    });
    await writer.writeRun(sealed);
    return writer.finish(options.keyValueMetadata).slice();
  };
}

// A file's work space is gone after it: its shape is kept (kept-shapes.js).
keepShape(new Collected()).values = new Int32Array(0);
