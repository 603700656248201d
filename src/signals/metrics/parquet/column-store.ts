import { keepShape } from '../../../base/kept-shapes.js';
import { grown } from '../../../parquet/grown.js';
import {
  AttributeSets,
  BoundLists,
  IdTable,
  Strings,
  sealedTables,
} from '../../../parquet/tables.js';
import {
  LIST_STRIDE,
  LISTS,
  METRIC_STRIDE,
  PRESENT,
  RESOURCE_STRIDE,
  type SealedColumns,
} from './sealed.js';

/** Rows the arrays are first made for; they double as they fill. */
const INITIAL_ROWS = 256;
const TWO_32 = 2 ** 32;

/**
 * Stores an integer (a double holding one exactly, up to ±2^64) as its two's-complement 64 bits
 * in two Int32 slots (2·at and 2·at + 1); beyond int64 (uint64 counts from 2^63) the bits are
 * those of the uint64.
 */
function setInt64(slots: Int32Array, at: number, v: number): void {
  if (v >= 0 && v < TWO_32) {
    slots[2 * at] = v;
    slots[2 * at + 1] = 0;
    return;
  }
  const hi = Math.floor(v / TWO_32);
  slots[2 * at] = v - hi * TWO_32; // typed-array stores wrap to 32 bits
  slots[2 * at + 1] = hi;
}

/** Stores a bigint's low 64 bits. */
function setInt64Big(slots: Int32Array, at: number, v: bigint): void {
  slots[2 * at] = Number(BigInt.asIntN(32, v));
  slots[2 * at + 1] = Number(BigInt.asIntN(32, v >> 32n));
}

/** Stores a 64-bit integer, a number or (beyond 2^53) a bigint. */
function setInt(slots: Int32Array, at: number, v: number | bigint): void {
  if (typeof v === 'number') setInt64(slots, at, v);
  else setInt64Big(slots, at, v);
}

/** Numbers the stores: an id cached from an earlier batch is no id in this one. */
let epochs = 0;

/** Where the rows and counts of a store end, to take back what was added after. */
export interface StoreMark {
  readonly rows: number;
  readonly counts: number;
  /** The arrays' sizes then: a rollback gives back what the taken-back rows grew them by. */
  readonly capacity: number;
  readonly countSlots: number;
}

/**
 * One batch's columns: one typed array per column (64-bit integers as two Int32 slots, see
 * sealed.js), ids into the batch's tables, and the lists of bucket counts. Changed only through
 * its methods: the appenders (append-sdk.ts, append-otlp.ts) intern the batch's strings and ids,
 * add a row and set its values; the builders mark and roll back a failed append, and seal the
 * store once. Its fields are TypeScript-private, not #private: the appends are the hot path of
 * Parquet export, and with #private fields they took a third more CPU a point (Node 24).
 */
export class ColumnStore {
  readonly epoch = ++epochs;
  private rowCount = 0;
  private capacity = INITIAL_ROWS;
  /** Estimated bytes the appenders hold for this batch beside the arrays (their caches' entries). */
  private extraBytes = 0;
  private resource = new Uint32Array(INITIAL_ROWS);
  private metric = new Uint32Array(INITIAL_ROWS);
  private attributes = new Uint32Array(INITIAL_ROWS);
  private time = new Int32Array(2 * INITIAL_ROWS);
  private start = new Int32Array(2 * INITIAL_ROWS);
  private flags = new Uint32Array(INITIAL_ROWS);
  private present = new Uint8Array(INITIAL_ROWS);
  private double = new Float64Array(INITIAL_ROWS);
  private integer = new Int32Array(2 * INITIAL_ROWS);
  private min = new Float64Array(INITIAL_ROWS);
  private max = new Float64Array(INITIAL_ROWS);
  private scale = new Int32Array(INITIAL_ROWS);
  private zeroCount = new Int32Array(2 * INITIAL_ROWS);
  private positiveOffset = new Int32Array(INITIAL_ROWS);
  private negativeOffset = new Int32Array(INITIAL_ROWS);
  private bounds = new Uint32Array(INITIAL_ROWS);
  private listLengths = new Uint32Array(LIST_STRIDE * INITIAL_ROWS);
  private counts = new Int32Array(2 * INITIAL_ROWS);
  private countCount = 0;
  private strings = new Strings();
  private sets = new AttributeSets();
  private boundLists = new BoundLists();
  private resources = new IdTable(RESOURCE_STRIDE);
  private metrics = new IdTable(METRIC_STRIDE);

  /** Rows added. */
  get rows(): number {
    return this.rowCount;
  }

  /** The id of a string in this batch. */
  stringId(text: string): number {
    return this.strings.id(text);
  }

  /** The id of an attribute set (value texts, null for an empty value). */
  setId(keys: string[], texts: (string | null)[]): number {
    return this.sets.intern(this.strings, keys, texts);
  }

  /** The id of a list of explicit bounds. */
  boundsId(bounds: ArrayLike<number>): number {
    return this.boundLists.intern(bounds);
  }

  /** The id of a resource: its service name, schema URL and attribute set, as ids (RESOURCE). */
  resourceId(slots: number[]): number {
    return this.resources.intern(slots);
  }

  /** The id of a metric: scope, names, type, temporality and monotonicity (METRIC). */
  metricId(slots: number[]): number {
    return this.metrics.intern(slots);
  }

  /** Counts bytes an appender holds for this batch beside the arrays. */
  holdExtraBytes(bytes: number): void {
    this.extraBytes += bytes;
  }

  /**
   * Adds a row: its ids, its times in microseconds and its flags, with no value, no bounds and
   * empty lists (the setters below add those). Returns its index. Every slot a row's columns
   * read is set here or by a setter: a row taken back by rollback() may have left others.
   */
  addRow(
    resource: number,
    metric: number,
    attributes: number,
    time: number | bigint,
    start: number | bigint,
    flags: number,
  ): number {
    if (this.rowCount === this.capacity) this.grow();
    const r = this.rowCount++;
    this.resource[r] = resource;
    this.metric[r] = metric;
    this.attributes[r] = attributes;
    setInt(this.time, r, time);
    setInt(this.start, r, start);
    this.flags[r] = flags;
    this.present[r] = 0;
    this.bounds[r] = 0;
    const lists = LIST_STRIDE * r;
    this.listLengths[lists + LISTS.BUCKETS] = 0;
    this.listLengths[lists + LISTS.POSITIVE] = 0;
    this.listLengths[lists + LISTS.NEGATIVE] = 0;
    return r;
  }

  /** A gauge's or sum's value, with its exact integer where it has one. */
  setValue(r: number, double: number, integer: number | bigint | undefined): void {
    this.double[r] = double;
    if (integer === undefined) {
      this.present[r] = PRESENT.VALUE;
    } else {
      setInt(this.integer, r, integer);
      this.present[r] = PRESENT.VALUE | PRESENT.INTEGER;
    }
  }

  /** A distribution's count, and its sum, min and max where it has them. */
  setDistribution(
    r: number,
    count: number | bigint,
    sum: number | undefined,
    min: number | undefined,
    max: number | undefined,
  ): void {
    setInt(this.integer, r, count);
    let present = PRESENT.INTEGER;
    if (sum !== undefined) {
      this.double[r] = sum;
      present |= PRESENT.SUM;
    }
    if (min !== undefined) {
      this.min[r] = min;
      present |= PRESENT.MIN;
    }
    if (max !== undefined) {
      this.max[r] = max;
      present |= PRESENT.MAX;
    }
    this.present[r] = present;
  }

  /** An exponential histogram's scale, zero count and offsets (its counts: reserveCounts()). */
  setExponential(
    r: number,
    scale: number,
    zeroCount: number | bigint,
    positiveOffset: number,
    negativeOffset: number,
  ): void {
    this.scale[r] = scale;
    setInt(this.zeroCount, r, zeroCount);
    this.positiveOffset[r] = positiveOffset;
    this.negativeOffset[r] = negativeOffset;
  }

  /** A histogram's explicit bounds. */
  setBounds(r: number, boundsId: number): void {
    this.bounds[r] = boundsId;
  }

  /**
   * Room for the `n` counts of row `r`'s list `which` (LISTS); returns the index of the first,
   * for setCount().
   */
  reserveCounts(r: number, which: number, n: number): number {
    const at = this.countCount;
    this.counts = grown(this.counts, 2 * (at + n), 2 * at);
    this.countCount += n;
    this.listLengths[LIST_STRIDE * r + which] = n;
    return at;
  }

  /** The count at `at`, an index reserveCounts() gave. */
  setCount(at: number, count: number | bigint): void {
    setInt(this.counts, at, count);
  }

  /** Where the rows and counts end now, for rollback(). */
  mark(): StoreMark {
    return {
      rows: this.rowCount,
      counts: this.countCount,
      capacity: this.capacity,
      countSlots: this.counts.length,
    };
  }

  /**
   * Takes back the rows and counts added since `mark`, and the room the arrays grew by for them
   * (an export that did not fit must not leave its memory behind). The tables keep what they
   * interned: counted in bytes, harmless in the file.
   */
  rollback(mark: StoreMark): void {
    this.rowCount = mark.rows;
    this.countCount = mark.counts;
    if (this.capacity > mark.capacity) this.resize(mark.capacity);
    if (this.counts.length > mark.countSlots) {
      this.counts = shrunk(this.counts, mark.countSlots, 2 * mark.counts);
    }
  }

  private grow(): void {
    this.resize(this.capacity * 2);
  }

  /** The per-row arrays at `n` rows of capacity, their rows kept (n is at least rowCount). */
  private resize(n: number): void {
    const used = this.rowCount;
    resizePerRow(this, (a, per) =>
      n * per > a.length ? grown(a, n * per, used * per) : shrunk(a, n * per, used * per),
    );
    this.capacity = n;
  }

  /** Bytes of the arrays that hold one entry per row. */
  private perRowBytes(): number {
    return (
      this.resource.byteLength * 3 + // resource, metric, attributes
      this.time.byteLength * 2 +
      this.flags.byteLength +
      this.present.byteLength +
      this.double.byteLength * 3 + // double, min, max
      this.integer.byteLength * 2 + // integer, zeroCount
      this.scale.byteLength * 3 + // scale and the two offsets
      this.bounds.byteLength +
      this.listLengths.byteLength
    );
  }

  /** Memory held now: every array's capacity, the tables' entries (see MAP_ENTRY_BYTES). */
  get bytes(): number {
    const sets = this.sets;
    const b = this.boundLists;
    const r = this.resources;
    const m = this.metrics;
    return (
      this.perRowBytes() +
      this.extraBytes +
      this.counts.byteLength +
      this.strings.bytes +
      sets.bytes +
      sets.offsets.byteLength +
      sets.entries.byteLength +
      b.bytes +
      b.offsets.byteLength +
      b.values.byteLength +
      r.bytes +
      r.slots.byteLength +
      m.bytes +
      m.slots.byteLength
    );
  }

  /** The columns, handed over: the store is not used after this. */
  seal(): SealedColumns {
    const sealed: Omit<SealedColumns, 'transfer'> = {
      rows: this.rowCount,
      resource: this.resource,
      metric: this.metric,
      attributes: this.attributes,
      time: this.time,
      start: this.start,
      flags: this.flags,
      present: this.present,
      double: this.double,
      integer: this.integer,
      min: this.min,
      max: this.max,
      scale: this.scale,
      zeroCount: this.zeroCount,
      positiveOffset: this.positiveOffset,
      negativeOffset: this.negativeOffset,
      bounds: this.bounds,
      listLengths: this.listLengths,
      counts: this.counts,
      ...sealedTables(this.strings, this.sets),
      resourceCount: this.resources.count,
      resources: this.resources.slots,
      metricCount: this.metrics.count,
      metrics: this.metrics.slots,
      boundsCount: this.boundLists.count,
      boundsOffsets: this.boundLists.offsets,
      boundsValues: this.boundLists.values,
    };
    const transfer = new Set<ArrayBuffer>();
    for (const value of Object.values(sealed)) {
      if (ArrayBuffer.isView(value)) transfer.add(value.buffer as ArrayBuffer);
    }
    return { ...sealed, transfer: [...transfer] };
  }
}

/** A typed array of the same kind with exactly `size` elements, holding `used` of the old. */
function shrunk<T extends Int32Array | Uint32Array | Float64Array | Uint8Array>(
  array: T,
  size: number,
  used: number,
): T {
  if (array.length === size) return array;
  const Kind = array.constructor as new (n: number) => T;
  const next = new Kind(size);
  next.set(array.subarray(0, used));
  return next;
}

/** The per-row arrays of a batch's metric rows, with the slots each row takes in them. */
export const PER_ROW_SLOTS = {
  resource: 1,
  metric: 1,
  attributes: 1,
  time: 2,
  start: 2,
  flags: 1,
  present: 1,
  double: 1,
  integer: 2,
  min: 1,
  max: 1,
  scale: 1,
  zeroCount: 2,
  positiveOffset: 1,
  negativeOffset: 1,
  bounds: 1,
  listLengths: LIST_STRIDE,
} as const;

type RowArray = Int32Array | Uint32Array | Float64Array | Uint8Array;

/**
 * Replaces each of `owner`'s per-row arrays (fields named as in PER_ROW_SLOTS, private ones
 * included) with `to(array, slots a row)`: the column store's and the compactor's rows resize
 * alike.
 */
export function resizePerRow(owner: object, to: (a: RowArray, per: number) => RowArray): void {
  const arrays = owner as Record<keyof typeof PER_ROW_SLOTS, RowArray>;
  for (const [name, per] of Object.entries(PER_ROW_SLOTS)) {
    const key = name as keyof typeof PER_ROW_SLOTS;
    arrays[key] = to(arrays[key], per);
  }
}

// A batch's store is gone after its seal: its shape is kept (kept-shapes.js).
keepShape(new ColumnStore());
