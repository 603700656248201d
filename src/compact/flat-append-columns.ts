import { type LeafValues, Utf8Values } from '../parquet/flat-columns.js';
import type { ColumnsRead } from '../parquet/read.js';
import { KeyValues } from '../parquet/tables.js';
import { disagreeingLists } from '../signals/flat-parquet/read.js';
import type { FlatStore } from '../signals/flat-parquet/store.js';
import type { FlatSpec } from '../signals/flat-parquet/table.js';
import { DamagedPartError } from './signal-rows.js';

/**
 * A row group of a flat table (spans, log records: src/signals/flat-parquet/), read flat and
 * coded (src/parquet/flat-columns.ts), appended to a compaction's builders (a FlatStore): the
 * counterpart of the metrics' append-columns.ts.
 */

type Column = FlatSpec['columns'][number];

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A bigint (or an integer number) as the bigint an INT64 column holds; 0 for anything else. */
function int64(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.trunc(v));
  return 0n;
}

/**
 * Appends every row of a row group of the table `spec`, read flat (flat-columns.ts: INT64s and
 * timestamps as bigints, a map or list column as its elements with each row's offsets, a list
 * of maps with each item's too; strings coded, as dictionary indices, where the chunk allows),
 * to `store`; returns how many. A dictionary's strings are looked up in the batch once each. A
 * map equal to the row before's (a resource's attributes, mostly) is one set. Throws for a
 * missing column, DamagedPartError for a row whose parallel lists disagree (nothing appended).
 */
export function appendFlatColumns(store: FlatStore, spec: FlatSpec, read: ColumnsRead): number {
  const missing = (c: Column) => new Error(`the Parquet input has no column ${c.name}`);
  const leaves = spec.columns.map((c) => {
    if (c.list === undefined && c.kind !== 'map') {
      const values = read.columns.get(c.name);
      if (values === undefined) throw missing(c);
      return { values: new Leaf(values, read.dictionaries.get(c.name)), keys: undefined };
    }
    const m = read.flat.get(c.name);
    if (m === undefined) throw missing(c);
    return {
      values: new Leaf(m.values, m.valueDictionary),
      keys: new Leaf(m.keys ?? [], m.keyDictionary),
      offsets: m.offsets,
      items: m.items,
    };
  });
  const rowColumns = spec.columns.flatMap((c, i) => (c.list === undefined ? [i] : []));
  const groups = spec.lists.map((_, g) =>
    spec.columns.flatMap((c, i) => (c.list === g ? [i] : [])),
  );
  for (const group of groups) checkParallel(spec, group, leaves, read.rows);
  const maps = new MapSets(store);
  /** Per map column of the rows: its last row's set and where that row's entries are. */
  const lastSet = new Int32Array(spec.columns.length).fill(-1);
  const lastStart = new Int32Array(spec.columns.length);
  const lastEnd = new Int32Array(spec.columns.length);
  for (let row = 0; row < read.rows; row++) {
    const r = store.addRow();
    // Indexed loops: a for-of here made an iterator a row (a tenth of an hour's garbage).
    for (let c = 0; c < rowColumns.length; c++) {
      const i = rowColumns[c] as number;
      const kind = (spec.columns[i] as Column).kind;
      const leaf = leaves[i] as (typeof leaves)[number];
      if (kind !== 'map') {
        setValue(store, kind, i, r, leaf.values, row);
        continue;
      }
      const offsets = leaf.offsets as Int32Array;
      const keys = leaf.keys as Leaf;
      const start = offsets[row] as number;
      const end = offsets[row + 1] as number;
      const last = lastSet[i] as number;
      if (
        last >= 0 &&
        end - start === (lastEnd[i] as number) - (lastStart[i] as number) &&
        keys.same(start, end, lastStart[i] as number) &&
        leaf.values.same(start, end, lastStart[i] as number)
      ) {
        store.set(i, r, last);
      } else {
        const id = maps.add(keys, leaf.values, start, end);
        store.set(i, r, id);
        lastSet[i] = id;
        lastStart[i] = start;
        lastEnd[i] = end;
      }
    }
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g] as number[];
      const first = (leaves[group[0] as number] as (typeof leaves)[number]).offsets as Int32Array;
      const n = (first[row + 1] as number) - (first[row] as number);
      for (let j = 0; j < n; j++) {
        const item = store.addItem(g, r);
        for (let c = 0; c < group.length; c++) {
          const i = group[c] as number;
          const leaf = leaves[i] as (typeof leaves)[number];
          const offsets = leaf.offsets as Int32Array;
          // Every list of the group holds n elements in this row (checkParallel).
          const k = (offsets[row] as number) + j;
          const kind = (spec.columns[i] as Column).kind;
          if (kind !== 'map') setValue(store, kind, i, item, leaf.values, k);
          else if (leaf.items === undefined) store.set(i, item, 0);
          else {
            const from = leaf.items[k] as number;
            store.set(
              i,
              item,
              maps.add(leaf.keys as Leaf, leaf.values, from, leaf.items[k + 1] as number),
            );
          }
        }
      }
    }
  }
  return read.rows;
}

/**
 * Throws DamagedPartError unless the list columns `group` (a span's Events.*) hold as many
 * elements each in every row, as this package writes them: pairing unequal lists up by index
 * would make values up or drop some, and the input would then be deleted as merged. Checked
 * before any row is appended, and refused as the reader refuses it (parallelElements).
 */
function checkParallel(
  spec: FlatSpec,
  group: readonly number[],
  leaves: readonly { offsets?: Int32Array }[],
  rows: number,
): void {
  const offsets = group.map((i) => leaves[i]?.offsets as Int32Array);
  const first = offsets[0];
  if (first === undefined) return;
  for (let row = 0; row < rows; row++) {
    const n = (first[row + 1] as number) - (first[row] as number);
    for (let c = 1; c < offsets.length; c++) {
      const o = offsets[c] as Int32Array;
      if ((o[row + 1] as number) - (o[row] as number) === n) continue;
      const names = group.map((i) => (spec.columns[i] as Column).name);
      const lengths = offsets.map((x) => (x[row + 1] as number) - (x[row] as number));
      throw new DamagedPartError(disagreeingLists(names, lengths));
    }
  }
}

/**
 * A leaf column's values as read: each value as a reader gives it, or (coded) as an index into
 * its chunk's dictionary, -1 for null, or as UTF-8 bytes. A string's id in the batch is looked up
 * once an entry.
 */
class Leaf {
  #ids: Int32Array | undefined;
  readonly values: ArrayLike<unknown>;
  readonly utf8: Utf8Values | undefined;
  /**
   * INT64 values as read (a BigInt64Array): their 32-bit halves, low first, as a store's slots
   * (the machine's order: little-endian, which the Parquet writer requires, file-writer.js).
   */
  readonly words: Int32Array | undefined;

  constructor(
    values: LeafValues,
    readonly dictionary: ArrayLike<unknown> | undefined,
  ) {
    this.utf8 = values instanceof Utf8Values ? values : undefined;
    this.values = values instanceof Utf8Values ? values.starts : values;
    this.words =
      values instanceof BigInt64Array && dictionary === undefined
        ? new Int32Array(values.buffer, values.byteOffset, 2 * values.length)
        : undefined;
  }

  /** Value `k`; undefined past the values. */
  value(k: number): unknown {
    const { dictionary, utf8 } = this;
    if (utf8 !== undefined) return k < utf8.length ? utf8.text(k) : undefined;
    if (dictionary === undefined) return this.values[k];
    const code = this.values[k] as number | undefined;
    return code === undefined || code < 0 ? null : dictionary[code];
  }

  isNull(k: number): boolean {
    const v = this.value(k);
    return v === null || v === undefined;
  }

  /** The batch's id of value `k`'s text (null's: ''), looked up. */
  stringId(store: FlatStore, k: number): number {
    return this.#batchId(store, k, false);
  }

  /** Whether value `k`'s batch id is known already (its dictionary entry was looked up). */
  known(k: number): boolean {
    const code = this.values[k] as number;
    return (
      this.dictionary !== undefined &&
      this.utf8 === undefined &&
      code >= 0 &&
      (this.#ids?.[code] ?? -1) >= 0
    );
  }

  /** A new batch id for value `k`'s text (null's: ''), not looked up (Strings.fresh). */
  freshId(store: FlatStore, k: number): number {
    return this.#batchId(store, k, true);
  }

  /**
   * Value `k`'s batch id, made from its text (`fresh`: Strings.fresh, else looked up): once a
   * dictionary entry. A flag, not a function: a closure a value was half an hour's garbage.
   */
  #batchId(store: FlatStore, k: number, fresh: boolean): number {
    const code = this.values[k] as number;
    const { dictionary } = this;
    if (
      dictionary === undefined ||
      this.utf8 !== undefined ||
      !(code >= 0 && code < dictionary.length)
    ) {
      return idOf(store, text(this.value(k)), fresh);
    }
    this.#ids ??= new Int32Array(dictionary.length).fill(-1);
    let id = this.#ids[code] as number;
    if (id < 0) {
      id = idOf(store, text(dictionary[code]), fresh);
      this.#ids[code] = id;
    }
    return id;
  }

  /** Values [a, end) are values [b, b + end - a) (strings, codes of one dictionary, or bytes). */
  same(a: number, end: number, b: number): boolean {
    const { values, utf8 } = this;
    if (utf8 !== undefined) {
      for (let k = 0; k < end - a; k++) if (utf8.text(a + k) !== utf8.text(b + k)) return false;
      return true;
    }
    for (let k = 0; k < end - a; k++) if (values[a + k] !== values[b + k]) return false;
    return true;
  }
}

/** The batch's id of `t`: new without a lookup (`fresh`, Strings.fresh) or looked up. */
const idOf = (store: FlatStore, t: string, fresh: boolean): number =>
  fresh ? store.strings.fresh(t) : store.strings.id(t);

/** Value `k` of `leaf` (as a Parquet reader gives it) into a column of `kind` other than a map. */
function setValue(
  store: FlatStore,
  kind: Column['kind'],
  i: number,
  at: number,
  leaf: Leaf,
  k: number,
): void {
  switch (kind) {
    case 'timestamp':
    case 'int64': {
      // Copied as two halves: reading a BigInt64Array makes a bigint a value.
      const { words } = leaf;
      if (words !== undefined && k < leaf.values.length) store.copySlots(i, at, words, k);
      else store.int64Big(i, at, int64(leaf.value(k)));
      return;
    }
    case 'int32': {
      const v = leaf.value(k);
      store.int32(i, at, typeof v === 'number' ? v : 0);
      return;
    }
    case 'string':
      store.int32(i, at, leaf.stringId(store, k));
      return;
    case 'text': {
      const { utf8 } = leaf;
      if (utf8 !== undefined && k < utf8.length) {
        store.textBytes(i, at, utf8.bytes, utf8.starts[k] as number, utf8.ends[k] as number);
      } else store.text(i, at, text(leaf.value(k)));
    }
  }
}

/**
 * Per batch (its store), per key (its string id): what the key's values have been. A key whose
 * values are nearly all new in the batch (a path, an address) has them given ids without a
 * lookup, as the exporter does (tables.ts, KeyValues): inserting each into the batch's table of
 * strings was the largest cost of appending an hour of spans, and its garbage.
 */
const learnedKeys = new WeakMap<FlatStore, KeyValues[]>();

/** The sets of maps read into a batch, made from their entries' string ids. */
class MapSets {
  #pairs = new Int32Array(64);
  readonly #learned: KeyValues[];

  constructor(readonly store: FlatStore) {
    let learned = learnedKeys.get(store);
    if (learned === undefined) {
      learned = [];
      learnedKeys.set(store, learned);
    }
    this.#learned = learned;
  }

  /** The batch's id of value `k` of `values`, the value of key `key` (a batch string id). */
  #valueId(values: Leaf, key: number, k: number): number {
    const { store } = this;
    let learned = this.#learned[key];
    if (learned === undefined) {
      learned = new KeyValues();
      this.#learned[key] = learned;
    }
    if (learned.unique) return values.freshId(store, k);
    // An entry of the chunk's dictionary seen before is not a lookup of the batch's.
    if (values.known(k)) return values.stringId(store, k);
    const next = store.strings.count;
    const id = values.stringId(store, k);
    learned.learn(id === next);
    return id;
  }

  /**
   * A new set of a map's entries [start, end) (a null value: an empty one); the empty set 0. A
   * key given twice keeps its first place and its last value, as a reader's map object does.
   */
  add(keys: Leaf, values: Leaf, start: number, end: number): number {
    const n = end - start;
    if (n <= 0) return 0;
    const { store } = this;
    if (this.#pairs.length < 2 * n) this.#pairs = new Int32Array(4 * n);
    const pairs = this.#pairs;
    for (let k = 0; k < n; k++) {
      const key = keys.stringId(store, start + k);
      pairs[2 * k] = key;
      pairs[2 * k + 1] = values.isNull(start + k) ? -1 : this.#valueId(values, key, start + k);
    }
    if (!distinctKeys(pairs, n)) {
      const texts = Array.from({ length: n }, (_, k) =>
        values.isNull(start + k) ? null : String(values.value(start + k)),
      );
      return store.newSet(
        Array.from({ length: n }, (_, k) => String(keys.value(start + k))),
        texts,
      );
    }
    return store.sets.copy(pairs, 0, n, same);
  }
}

const same = (id: number) => id;

/** The keys of pairs [0, n) (key id, value id) are distinct ids. */
function distinctKeys(pairs: Int32Array, n: number): boolean {
  if (n > 32) return new Set(Array.from({ length: n }, (_, k) => pairs[2 * k])).size === n;
  for (let a = 1; a < n; a++) {
    for (let b = 0; b < a; b++) if (pairs[2 * a] === pairs[2 * b]) return false;
  }
  return true;
}
