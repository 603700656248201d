import { keepShape } from '../../base/kept-shapes.js';
import { checkOtlpTime, hrTimeToNanosString } from '../../encoding/hrtime.js';
import type { ExportTally } from '../../encoding/records.js';
import { jsValueText } from '../../parquet/attribute-text.js';
import { grown } from '../../parquet/grown.js';
import {
  AttributeSets,
  addObjectSet,
  MAP_ENTRY_BYTES,
  SetShape,
  Strings,
  sealedTables,
} from '../../parquet/tables.js';
import { TextBytes } from '../../parquet/text-bytes.js';
import { nanosToIso } from '../plain-values.js';
import { StoreBuilders } from '../store-builders.js';
import { type FlatSpec, type SealedFlat, slotsOf } from './table.js';

/**
 * The open Parquet batch of a flat table (spans, log records): one typed array per column, per
 * row or per item of its list group, strings and attribute sets interned once per batch (the
 * layout: SealedFlat in table.js). An appender (the signal's) adds rows and items and sets their
 * values; seal() hands the arrays over for a transfer to the worker, which sorts and encodes them.
 */

const INITIAL = 256;
const TWO_32 = 2 ** 32;
const TWO_16 = 2 ** 16;
const TWO_31 = 2 ** 31;

/** An attributes object as the SDK's: its keys and their values. */
export type AttributeMap = Readonly<Record<string, unknown>>;

/** An HrTime: [seconds, nanoseconds]. */
export type HrTimeLike = readonly [number, number];

/** Where the rows and items of a store end, to take back what was added after. */
export interface FlatMark {
  readonly rows: number;
  readonly items: readonly number[];
  /** The store's late time then (FlatStore.late). */
  readonly late?: string;
}

/** The latest time a Parquet timestamp (a signed INT64 of nanoseconds) holds. */
export const INT64_MAX = 2n ** 63n - 1n;

/**
 * A time OTLP holds (uint64 nanoseconds) and a Parquet timestamp does not: a timestamp column's
 * INT64 ends at 2^63 - 1 ns (2262-04-11).
 */
export class TimeOutOfRangeError extends Error {
  constructor(field: string, text: string) {
    super(
      `${field} ${text} is past the latest time a Parquet timestamp holds (${INT64_MAX} ns, ${nanosToIso(`${INT64_MAX}`)})`,
    );
    this.name = 'TimeOutOfRangeError';
  }
}

/** Stores an integer (a double holding one exactly) as its two's-complement 64 bits. */
function setInt64(slots: Int32Array, at: number, v: number): void {
  const hi = Math.floor(v / TWO_32);
  slots[2 * at] = v - hi * TWO_32; // typed-array stores wrap to 32 bits
  slots[2 * at + 1] = hi;
}

/**
 * Stores an HrTime as int64 nanoseconds, exactly: seconds * 1e9 does not fit a double's 53 bits,
 * so it is made of two products that do (each below 2^46).
 */
function setNanos(slots: Int32Array, at: number, t: HrTimeLike): number {
  // Each part cut to an integer first, as the official serializers read an HrTime.
  const seconds = Math.trunc(t[0]);
  const high = Math.floor(seconds / TWO_16) * 1e9; // × 2^16
  const low = (seconds % TWO_16) * 1e9 + Math.trunc(t[1]);
  const highWords = Math.floor(high / TWO_16); // (high × 2^16) / 2^32
  let lo = (high % TWO_16) * TWO_16 + low;
  const carry = Math.floor(lo / TWO_32);
  lo -= carry * TWO_32;
  slots[2 * at] = lo;
  slots[2 * at + 1] = highWords + carry;
  return highWords + carry;
}

/** For checkNanos(): the words of a time no column stores. */
const SCRATCH = new Int32Array(2);

/** A part of a table: the columns of its rows, or of one list group's items. */
class Part {
  count = 0;
  capacity = INITIAL;
  readonly arrays: (Int32Array | Uint32Array)[];

  constructor(
    readonly columns: readonly number[],
    readonly slots: readonly number[],
    kinds: readonly string[],
  ) {
    this.arrays = columns.map((_, i) => {
      const n = INITIAL * (slots[i] as number);
      const k = kinds[i];
      return k === 'string' || k === 'map' || k === 'text' ? new Uint32Array(n) : new Int32Array(n);
    });
  }

  /** Room for one more; returns its index. */
  add(): number {
    if (this.count === this.capacity) {
      const next = this.capacity * 2;
      for (let i = 0; i < this.arrays.length; i++) {
        const per = this.slots[i] as number;
        this.arrays[i] = grown(this.arrays[i] as Int32Array, next * per, this.count * per);
      }
      this.capacity = next;
    }
    return this.count++;
  }

  get bytes(): number {
    let b = 0;
    for (const a of this.arrays) b += a.byteLength;
    return b;
  }
}

export class FlatStore {
  readonly strings = new Strings();
  readonly sets = new AttributeSets();
  /** Per column: the part it is in, and its place there. */
  readonly #where: { part: Part; at: number }[] = [];
  /** Per text column: its bytes. */
  readonly #texts: (TextBytes | undefined)[];
  readonly #rows: Part;
  readonly #lists: Part[];
  /** Per list group: per row, its items. */
  #lengths: Uint32Array[];
  /** Estimated bytes an appender holds for this batch beside the arrays. */
  #extraBytes = 0;
  /** The batch's first time past INT64, described (late). */
  #late: string | undefined;

  constructor(readonly spec: FlatSpec) {
    const partOf = (list: number | undefined) => {
      const columns = spec.columns.flatMap((c, i) => (c.list === list ? [i] : []));
      const part = new Part(
        columns,
        columns.map((i) => slotsOf((spec.columns[i] as FlatSpec['columns'][number]).kind)),
        columns.map((i) => (spec.columns[i] as FlatSpec['columns'][number]).kind),
      );
      columns.forEach((c, at) => {
        this.#where[c] = { part, at };
      });
      return part;
    };
    this.#rows = partOf(undefined);
    this.#lists = spec.lists.map((_, g) => partOf(g));
    this.#lengths = spec.lists.map(() => new Uint32Array(INITIAL));
    this.#texts = spec.columns.map((c) =>
      c.kind === 'text' ? new TextBytes(INITIAL * 32) : undefined,
    );
  }

  get rows(): number {
    return this.#rows.count;
  }

  /** Adds a row (its lists empty); returns its index. Every column of it must then be set. */
  addRow(): number {
    const r = this.#rows.add();
    for (let g = 0; g < this.#lengths.length; g++) {
      const lengths = grown(this.#lengths[g] as Uint32Array, r + 1, r);
      lengths[r] = 0;
      this.#lengths[g] = lengths;
    }
    return r;
  }

  /** Adds an item to list group `g` of row `r` (its last row); returns its index. */
  addItem(g: number, r: number): number {
    const lengths = this.#lengths[g] as Uint32Array;
    lengths[r] = (lengths[r] as number) + 1;
    return (this.#lists[g] as Part).add();
  }

  #array(column: number): Int32Array | Uint32Array {
    const w = this.#where[column] as { part: Part; at: number };
    return w.part.arrays[w.at] as Int32Array | Uint32Array;
  }

  string(column: number, at: number, text: string): void {
    // The last value of the column again (a kind, a status, a service: most rows): its id.
    let id: number;
    if (text === this.#lastText[column]) id = this.#lastId[column] as number;
    else {
      id = this.strings.id(text);
      this.#lastText[column] = text;
      this.#lastId[column] = id;
    }
    this.#array(column)[at] = id;
  }

  /** A text column's value (written PLAIN: no interning). */
  text(column: number, at: number, text: string): void {
    (this.#texts[column] as TextBytes).set(this.#array(column) as Uint32Array, at, text);
  }

  int32(column: number, at: number, v: number): void {
    this.#array(column)[at] = v;
  }

  int64(column: number, at: number, v: number): void {
    setInt64(this.#array(column) as Int32Array, at, v);
  }

  /** An INT64 (or timestamp) value given as a bigint (as a Parquet reader gives it). */
  int64Big(column: number, at: number, v: bigint): void {
    const slots = this.#array(column) as Int32Array;
    slots[2 * at] = Number(BigInt.asIntN(32, v));
    slots[2 * at + 1] = Number(BigInt.asIntN(32, v >> 32n));
  }

  /** Copies value `from` of another batch's column of this kind: its Int32 slots as they are. */
  copySlots(column: number, at: number, source: Int32Array | Uint32Array, from: number): void {
    const slots = this.#array(column);
    if (slotsOf((this.spec.columns[column] as FlatSpec['columns'][number]).kind) === 2) {
      slots[2 * at] = source[2 * from] as number;
      slots[2 * at + 1] = source[2 * from + 1] as number;
    } else slots[at] = source[from] as number;
  }

  /** A text column's value given as UTF-8 bytes, `bytes[start, end)`. */
  textBytes(column: number, at: number, bytes: Uint8Array, start: number, end: number): void {
    (this.#texts[column] as TextBytes).setBytes(
      this.#array(column) as Uint32Array,
      at,
      bytes,
      start,
      end,
    );
  }

  /**
   * A new attribute set of `keys` and value texts (null: an empty value), not looked up: the id to
   * set (set()) on each row or item that has it. The empty set is 0.
   */
  newSet(keys: string[], texts: (string | null)[]): number {
    return keys.length === 0 ? 0 : this.sets.add(this.strings, keys, texts);
  }

  /**
   * A timestamp column's value, int64 nanoseconds. A time past INT64 (OTLP's uint64 holds it) is
   * kept as its uint64 bits and makes the batch late (late): no Parquet file is made of it.
   */
  nanos(column: number, at: number, t: HrTimeLike): void {
    const high = setNanos(this.#array(column) as Int32Array, at, t);
    if (!(high < TWO_31 && high >= 0)) {
      this.#past((this.spec.columns[column] as FlatSpec['columns'][number]).name, t);
    }
  }

  /**
   * Checks a time no column stores but a reader makes of two (a span's end: Timestamp +
   * Duration) as nanos() checks a stored one.
   */
  checkNanos(field: string, t: HrTimeLike): void {
    const high = setNanos(SCRATCH, 0, t);
    if (!(high < TWO_31 && high >= 0)) this.#past(field, t);
  }

  /**
   * Why no Parquet file can be made of this batch: its first time past what a timestamp column
   * holds (TimeOutOfRangeError's message); none while every time fits.
   */
  get late(): string | undefined {
    return this.#late;
  }

  /**
   * A time past INT64: the batch is late; before 1970, past what a uint64 holds, or no time (NaN,
   * an infinity), the item is refused, as the OTLP formats refuse it (checkOtlpTime).
   */
  #past(field: string, t: HrTimeLike): void {
    checkOtlpTime(t);
    this.#late ??= new TimeOutOfRangeError(field, hrTimeToNanosString(t)).message;
  }

  /**
   * An item's attribute set: `attrs`' keys and their values as text (an empty value: none). Not
   * interned: a span's or record's attributes are nearly always a set of their own, and the
   * lookup key would cost more memory than the set.
   */
  attributes(column: number, at: number, attrs: AttributeMap | undefined): void {
    const keys = attrs === undefined || attrs === null ? [] : Object.keys(attrs);
    this.#array(column)[at] =
      keys.length === 0
        ? 0
        : addObjectSet(this.sets, this.strings, attrs as AttributeMap, keys, this.#shape(column));
  }

  /** Per string column: its last value and that value's id. */
  readonly #lastText: (string | undefined)[] = [];
  readonly #lastId: number[] = [];
  /** Per map column: the keys and values of its last attributes object (addObjectSet). */
  readonly #shapes: (SetShape | undefined)[] = [];

  #shape(column: number): SetShape {
    let shape = this.#shapes[column];
    if (shape === undefined) {
      shape = new SetShape();
      this.#shapes[column] = shape;
    }
    return shape;
  }

  /** A shared attribute set's id in this batch (a resource's, a scope's): interned once. */
  setOf(attrs: AttributeMap | undefined): number {
    if (attrs === undefined || attrs === null) return 0;
    const keys = Object.keys(attrs);
    if (keys.length === 0) return 0;
    const texts = keys.map((key) => jsValueText(attrs[key]));
    return this.sets.intern(this.strings, keys, texts);
  }

  /** Sets a column to a set id got from setOf (a resource's, kept by the appender). */
  set(column: number, at: number, id: number): void {
    this.#array(column)[at] = id;
  }

  holdExtraBytes(bytes: number): void {
    this.#extraBytes += bytes;
  }

  mark(): FlatMark {
    return { rows: this.#rows.count, items: this.#lists.map((p) => p.count), late: this.#late };
  }

  rollback(mark: FlatMark): void {
    this.#late = mark.late;
    this.#rows.count = mark.rows;
    this.#lists.forEach((p, g) => {
      p.count = mark.items[g] as number;
    });
  }

  /** Memory held now: every array's capacity and the tables' entries. */
  get bytes(): number {
    let b = this.#rows.bytes + this.#extraBytes + this.strings.bytes;
    for (const p of this.#lists) b += p.bytes;
    for (const l of this.#lengths) b += l.byteLength;
    for (const t of this.#texts) b += t?.bytes.byteLength ?? 0;
    const sets = this.sets;
    return b + sets.bytes + sets.offsets.byteLength + sets.entries.byteLength;
  }

  /** The columns, handed over: the store is not used after this. */
  seal(): SealedFlat {
    const tables = sealedTables(this.strings, this.sets);
    const columns = this.spec.columns.map((_, c) => this.#array(c));
    const sealed: Omit<SealedFlat, 'transfer'> = {
      rows: this.#rows.count,
      columns,
      lengths: this.#lengths,
      items: this.#lists.map((p) => p.count),
      ...tables,
      texts: this.#texts.map((t) => t?.bytes),
      ...(this.#late === undefined ? {} : { late: this.#late }),
    };
    const { strings, stringOffsets, setOffsets, setEntries } = tables;
    const transfer = new Set<ArrayBuffer>();
    for (const a of [
      ...columns,
      ...this.#lengths,
      strings,
      stringOffsets,
      setOffsets,
      setEntries,
    ]) {
      transfer.add(a.buffer as ArrayBuffer);
    }
    for (const t of this.#texts) if (t !== undefined) transfer.add(t.bytes.buffer as ArrayBuffer);
    return { ...sealed, transfer: [...transfer] };
  }
}

/** What a signal's appender does: adds an export's items as rows; returns how many. */
export type FlatAppend<Item> = (store: FlatStore, item: Item, tally: ExportTally) => void;

/**
 * The builders of a flat table: a FlatStore per batch (none while empty, so an idle exporter
 * holds no memory), appends all or nothing.
 */
export class FlatColumnBuilders<Item> extends StoreBuilders<Item, FlatMark, SealedFlat, FlatStore> {
  constructor(
    readonly spec: FlatSpec,
    readonly appendTo: FlatAppend<Item>,
  ) {
    super(() => new FlatStore(spec), EMPTY);
  }

  append(item: Item, tally: ExportTally): void {
    const items = tally.items;
    this.atomically(
      (store) => this.appendTo(store, item, tally),
      () => {
        tally.items = items;
      },
    );
  }
}

const EMPTY: FlatMark = { rows: 0, items: [] };

/** Estimated bytes of a cached resource or scope (its set's keys and texts), as metrics count theirs. */
export const cachedSetBytes = (keys: number): number => 160 + keys * MAP_ENTRY_BYTES;

// A batch's store is gone after its seal: its shapes are kept (kept-shapes.js).
keepShape(new FlatStore({ signal: '', version: '', lists: [], columns: [], sort: [] }));
keepShape(new Part([], [], []));
