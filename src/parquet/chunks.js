// @ts-check
// Column chunks of one row group: the pages of a leaf column for the rows given in write order.
// Data pages are version 1: repetition and definition levels (each after its 4-byte length, in
// the hybrid encoding) then the values, compressed together by the caller. Values are PLAIN,
// strings dictionary indices. A map's or list's page ends after the row where it reaches
// PAGE_VALUES level entries; other columns have one page per chunk (ROW_GROUP_ROWS rows at most).
import { BitPacker } from './bit-packer.js';
import { ByteWriter } from './byte-writer.js';
import { DeltaWriter } from './delta.js';
import { grown } from './grown.js';
import { LevelWriter, writeHybrid } from './hybrid.js';
import { DICTIONARY_MIN_USES, Int64Dictionary } from './int64-dictionary.js';
import { doubleStatistics, int32Statistics, int64Statistics } from './statistics.js';
import { run, STEP_ROWS, STEP_VALUES } from './steps.js';

/** @typedef {import('./statistics.js').Statistics} Statistics */
/** @typedef {import('./dictionaries.js').Dictionary} Dictionary */
/** @typedef {{ bytes: Uint8Array, values: number, encoding: number }} DataPage */
/** @typedef {{ pages: DataPage[], values: number, dictionary?: Dictionary, statistics?: Statistics }} Chunk */

export const ENCODING = /** @type {const} */ ({
  PLAIN: 0,
  RLE: 3,
  DELTA_BINARY_PACKED: 5,
  RLE_DICTIONARY: 8,
});

/** A map's or list's data page ends after the row where it reaches this many level entries. */
export const PAGE_VALUES = 1 << 17;

/**
 * Work space of one encodeParquet call, reused from chunk to chunk: value arrays, the level
 * packers, and the arena the current chunk's pages are written into (its pages stay valid until
 * the next chunk starts).
 */
export class Scratch {
  /**
   * @param {number} [pageValues] where a map's or list's page ends (PAGE_VALUES)
   * @param {number} [dictionaryMinUses] uses per distinct value from which an INT64 list chunk
   *   gets a dictionary (int64-dictionary.js, DICTIONARY_MIN_USES)
   */
  constructor(pageValues = PAGE_VALUES, dictionaryMinUses = DICTIONARY_MIN_USES) {
    this.pageValues = pageValues;
    this.dictionaryMinUses = dictionaryMinUses;
  }

  ints = new Int32Array(1024);
  doubles = new Float64Array(1024);
  arena = new ByteWriter(1 << 16);
  rep = new BitPacker(1);
  /** Repetition levels of a list of maps (0 to 2). */
  rep2 = new BitPacker(2);
  def1 = new BitPacker(1);
  def2 = new BitPacker(2);
  indices = new BitPacker(1);
  delta = new DeltaWriter();
  /** @type {Int64Dictionary | undefined} */
  #int64Dictionary;

  /** The dictionary of INT64 list chunks, made at the first (tables without such lists never do). */
  get int64Dictionary() {
    this.#int64Dictionary ??= new Int64Dictionary();
    return this.#int64Dictionary;
  }

  /** An Int32Array of at least n, holding the first `keep` of the last one. @param {number} n @param {number} [keep] */
  int32(n, keep = 0) {
    this.ints = grown(this.ints, n, keep);
    return this.ints;
  }

  /** A Float64Array of at least n, holding the first `keep` of the last one. @param {number} n @param {number} [keep] */
  float64(n, keep = 0) {
    this.doubles = grown(this.doubles, n, keep);
    return this.doubles;
  }
}

/** @param {Int32Array | Float64Array} array @param {number} n */
export const elementBytes = (array, n) =>
  new Uint8Array(array.buffer, array.byteOffset, n * array.BYTES_PER_ELEMENT);

/**
 * Writes a level stream into the arena after its 4-byte length.
 * @param {ByteWriter} arena @param {(w: ByteWriter) => void} write
 */
export function levels(arena, write) {
  const at = arena.reserve(4);
  write(arena);
  arena.patchUint32(at, arena.length - at - 4);
}

/** The arena's bytes from `start` on: a page just written. @param {ByteWriter} arena @param {number} start */
export const pageFrom = (arena, start) => arena.buf.subarray(start, arena.length);

/**
 * A chunk of one data page: `write` writes the page into the arena.
 * @param {Scratch} scratch @param {number} n level entries @param {number} encoding
 * @param {(arena: ByteWriter) => void} write @param {Dictionary} [dictionary] @param {Statistics} [statistics]
 * @returns {Chunk}
 */
function single(scratch, n, encoding, write, dictionary, statistics) {
  const start = scratch.arena.length;
  write(scratch.arena);
  return {
    pages: [{ bytes: pageFrom(scratch.arena, start), values: n, encoding }],
    values: n,
    ...(dictionary === undefined ? {} : { dictionary }),
    ...(statistics === undefined ? {} : { statistics }),
  };
}

/**
 * A required string column: per row, dictionary index[group[row]].
 * @param {Scratch} scratch @param {Uint32Array} rows @param {Dictionary} dict @param {(id: number) => Uint8Array} bytesOf
 * @param {Uint32Array} group per row @param {Int32Array} index per group
 */
export function stringChunk(scratch, rows, dict, bytesOf, group, index) {
  const n = rows.length;
  const idx = scratch.int32(n);
  let lo = Number.POSITIVE_INFINITY;
  let hi = -1;
  for (let k = 0; k < n; k++) {
    const i = /** @type {number} */ (
      index[/** @type {number} */ (group[/** @type {number} */ (rows[k])])]
    );
    idx[k] = i;
    if (i < lo) lo = i;
    if (i > hi) hi = i;
  }
  /** @type {Statistics} */
  const statistics =
    n === 0
      ? { nulls: 0 }
      : {
          nulls: 0,
          min: bytesOf(/** @type {number} */ (dict.ids[lo])),
          max: bytesOf(/** @type {number} */ (dict.ids[hi])),
        };
  return single(
    scratch,
    n,
    ENCODING.RLE_DICTIONARY,
    (arena) => {
      arena.byte(dict.width);
      writeHybrid(arena, idx, n, dict.width);
    },
    dict,
    statistics,
  );
}

/** A required INT64 column (two Int32 slots per row). @param {Scratch} scratch @param {Uint32Array} rows @param {Int32Array} pairs */
export function int64Chunk(scratch, rows, pairs) {
  const n = rows.length;
  const out = scratch.int32(2 * n);
  for (let k = 0; k < n; k++) {
    const row = /** @type {number} */ (rows[k]);
    out[2 * k] = /** @type {number} */ (pairs[2 * row]);
    out[2 * k + 1] = /** @type {number} */ (pairs[2 * row + 1]);
  }
  const statistics = int64Statistics(out, n, 0);
  return single(
    scratch,
    n,
    ENCODING.PLAIN,
    (a) => a.bytes(elementBytes(out, 2 * n)),
    undefined,
    statistics,
  );
}

/**
 * A required INT32 column: per row perGroup[group[row]], or perGroup[row] without a group.
 * @param {Scratch} scratch @param {Uint32Array} rows @param {Uint32Array | null} group @param {Int32Array | Uint32Array} perGroup
 */
export function int32Chunk(scratch, rows, group, perGroup) {
  const n = rows.length;
  const out = scratch.int32(n);
  for (let k = 0; k < n; k++) {
    const row = /** @type {number} */ (rows[k]);
    out[k] = /** @type {number} */ (
      perGroup[group === null ? row : /** @type {number} */ (group[row])]
    );
  }
  const statistics = int32Statistics(out, n, 0);
  return single(
    scratch,
    n,
    ENCODING.PLAIN,
    (a) => a.bytes(elementBytes(out, n)),
    undefined,
    statistics,
  );
}

/**
 * A required BOOLEAN column, per row perGroup[group[row]] !== 0: PLAIN, one bit per value,
 * least significant first.
 * @param {Scratch} scratch @param {Uint32Array} rows @param {Uint32Array} group @param {Int32Array} perGroup
 */
export function booleanChunk(scratch, rows, group, perGroup) {
  const n = rows.length;
  const start = scratch.arena.length;
  scratch.arena.reserve(Math.ceil(n / 8)); // zeros: the arena is written once per chunk
  const bits = scratch.arena.buf.subarray(start);
  bits.fill(0);
  let any = 0;
  let all = 1;
  for (let k = 0; k < n; k++) {
    const v =
      perGroup[/** @type {number} */ (group[/** @type {number} */ (rows[k])])] === 0 ? 0 : 1;
    bits[k >> 3] = /** @type {number} */ (bits[k >> 3]) | (v << (k & 7));
    any |= v;
    all &= v;
  }
  /** @type {Statistics} */
  const statistics =
    n === 0 ? { nulls: 0 } : { nulls: 0, min: Uint8Array.of(all), max: Uint8Array.of(any) };
  return {
    pages: [{ bytes: pageFrom(scratch.arena, start), values: n, encoding: ENCODING.PLAIN }],
    values: n,
    statistics,
  };
}

/**
 * An optional column: a definition level per row (1 present, 0 null), then the present values:
 * rows whose `nonNull` has `bit`, their values from `source` (int64: two slots per row), in
 * `encoding`: PLAIN, or DELTA_BINARY_PACKED for int64 values that move by small steps from row
 * to row.
 * @param {Scratch} scratch @param {Uint32Array} rows @param {'double' | 'int64' | 'int32'} kind
 * @param {Uint8Array} nonNull @param {number} bit @param {Float64Array | Int32Array} source
 * @param {number} [encoding] ENCODING.PLAIN (the default) or, for int64, DELTA_BINARY_PACKED
 */
export function optionalChunk(
  scratch,
  rows,
  kind,
  nonNull,
  bit,
  source,
  encoding = ENCODING.PLAIN,
) {
  const n = rows.length;
  const slots = kind === 'int64' ? 2 : 1;
  const out = kind === 'double' ? scratch.float64(n) : scratch.int32(slots * n);
  const start = scratch.arena.length;
  let j = 0;
  levels(scratch.arena, (w) => {
    const def = new LevelWriter(w, 1);
    for (let k = 0; k < n; k++) {
      const row = /** @type {number} */ (rows[k]);
      const has = /** @type {number} */ (nonNull[row]);
      if ((has & bit) === 0) {
        def.run(0, 1);
        continue;
      }
      def.run(1, 1);
      if (slots === 2) {
        out[2 * j] = /** @type {number} */ (source[2 * row]);
        out[2 * j + 1] = /** @type {number} */ (source[2 * row + 1]);
      } else out[j] = /** @type {number} */ (source[row]);
      j++;
    }
    def.finish();
  });
  // No values: PLAIN (nothing), which every reader takes for an all-null page.
  const used = j === 0 ? ENCODING.PLAIN : encoding;
  if (used === ENCODING.DELTA_BINARY_PACKED && slots === 2) {
    const { delta } = scratch;
    for (let i = 0; i < j; i++) {
      delta.add(/** @type {number} */ (out[2 * i]), /** @type {number} */ (out[2 * i + 1]));
    }
    delta.finish(scratch.arena);
  } else if (used === ENCODING.PLAIN) {
    scratch.arena.bytes(elementBytes(out, slots * j));
  } else {
    throw new Error(`optionalChunk: encoding ${encoding} is not written for ${kind} values`);
  }
  const nulls = n - j;
  const statistics =
    out instanceof Float64Array
      ? doubleStatistics(out, j, nulls)
      : slots === 2
        ? int64Statistics(out, j, nulls)
        : int32Statistics(out, j, nulls);
  return {
    pages: [{ bytes: pageFrom(scratch.arena, start), values: n, encoding: used }],
    values: n,
    statistics,
  };
}

/**
 * Pages of a repeated leaf (a map's keys or values, a list's elements), split at PAGE_VALUES.
 * Levels are bit-packed (one run per page). `row(k)` adds row k's levels to `rep` and `def` and
 * keeps its values; returns its level entries. `values(arena)` writes the page's values and
 * starts the next page's.
 * @param {Scratch} scratch @param {number} n rows @param {number} defWidth
 * @param {(k: number, rep: BitPacker, def: BitPacker) => number} row
 * @param {(arena: ByteWriter) => void} values
 * @param {number} encoding of the values
 * @param {number} [repWidth] bits of a repetition level: 2 for a list of maps
 * @returns {Chunk}
 */
export function repeatedChunk(scratch, n, defWidth, row, values, encoding, repWidth = 1) {
  return run(repeatedChunkSteps(scratch, n, defWidth, row, values, encoding, repWidth));
}

/**
 * repeatedChunk() as steps (steps.js): it yields every STEP_ROWS rows or STEP_VALUES level
 * entries, within a page too (the
 * packers keep their state), and after each page's values. The same bytes either way.
 * @param {Parameters<typeof repeatedChunk>} args
 * @returns {import('./steps.js').Steps<Chunk>}
 */
export function* repeatedChunkSteps(...args) {
  const [scratch, n, defWidth, row, values, encoding, repWidth = 1] = args;
  /** @type {DataPage[]} */
  const pages = [];
  const { arena, pageValues } = scratch;
  const rep = repWidth === 1 ? scratch.rep : scratch.rep2;
  const def = defWidth === 1 ? scratch.def1 : scratch.def2;
  let total = 0;
  let k = 0;
  // A step ends after STEP_ROWS rows or STEP_VALUES level entries, whichever comes first.
  let stepRows = 0;
  let stepValues = 0;
  while (k < n) {
    let entries = 0;
    while (k < n && entries < pageValues) {
      const e = row(k++, rep, def);
      entries += e;
      stepValues += e;
      if (++stepRows === STEP_ROWS || stepValues >= STEP_VALUES) {
        yield;
        stepRows = 0;
        stepValues = 0;
      }
    }
    const start = arena.length;
    levels(arena, (w) => rep.finish(w));
    levels(arena, (w) => def.finish(w));
    values(arena);
    pages.push({ bytes: pageFrom(arena, start), values: entries, encoding });
    total += entries;
    yield;
  }
  return { pages, values: total };
}
