// @ts-check
// The open batch's columns: one typed array per column (64-bit integers as two Int32 slots, see
// sealed.js), ids into the batch's tables, and the lists of bucket counts. The walkers
// (append-sdk.js, append-otlp.js) fill a row at a time; seal() hands everything over.

import { grown } from '../../../parquet/grown.js';
import { LIST_STRIDE, METRIC_STRIDE, RESOURCE_STRIDE } from './sealed.js';
import { AttributeSets, BoundLists, IdTable, Strings } from './tables.js';

/** Rows the arrays are first made for; they double as they fill. */
const INITIAL_ROWS = 256;
const TWO_32 = 2 ** 32;

/**
 * Stores an integer (a double holding one exactly, up to ±2^64) as its two's-complement 64 bits
 * in two Int32 slots; beyond int64 (uint64 counts from 2^63) the bits are those of the uint64.
 * @param {Int32Array} slots @param {number} at the entry (slots 2·at and 2·at + 1) @param {number} v
 */
export function setInt64(slots, at, v) {
  if (v >= 0 && v < TWO_32) {
    slots[2 * at] = v;
    slots[2 * at + 1] = 0;
    return;
  }
  const hi = Math.floor(v / TWO_32);
  slots[2 * at] = v - hi * TWO_32; // typed-array stores wrap to 32 bits
  slots[2 * at + 1] = hi;
}

/** Stores a bigint's low 64 bits. @param {Int32Array} slots @param {number} at @param {bigint} v */
export function setInt64Big(slots, at, v) {
  slots[2 * at] = Number(BigInt.asIntN(32, v));
  slots[2 * at + 1] = Number(BigInt.asIntN(32, v >> 32n));
}

/** Numbers the stores: an id cached from an earlier batch is no id in this one. */
let epochs = 0;

/** One batch's columns: filled by the appenders, sealed once. */
export class ColumnStore {
  epoch = ++epochs;
  rows = 0;
  capacity = INITIAL_ROWS;
  /** Estimated bytes the appenders hold for this batch beside the arrays (their caches' entries). */
  extraBytes = 0;
  resource = new Uint32Array(INITIAL_ROWS);
  metric = new Uint32Array(INITIAL_ROWS);
  attributes = new Uint32Array(INITIAL_ROWS);
  time = new Int32Array(2 * INITIAL_ROWS);
  start = new Int32Array(2 * INITIAL_ROWS);
  flags = new Uint32Array(INITIAL_ROWS);
  present = new Uint8Array(INITIAL_ROWS);
  double = new Float64Array(INITIAL_ROWS);
  integer = new Int32Array(2 * INITIAL_ROWS);
  min = new Float64Array(INITIAL_ROWS);
  max = new Float64Array(INITIAL_ROWS);
  scale = new Int32Array(INITIAL_ROWS);
  zeroCount = new Int32Array(2 * INITIAL_ROWS);
  positiveOffset = new Int32Array(INITIAL_ROWS);
  negativeOffset = new Int32Array(INITIAL_ROWS);
  bounds = new Uint32Array(INITIAL_ROWS);
  listLengths = new Uint32Array(LIST_STRIDE * INITIAL_ROWS);
  counts = new Int32Array(2 * INITIAL_ROWS);
  countCount = 0;
  strings = new Strings();
  sets = new AttributeSets();
  boundLists = new BoundLists();
  resources = new IdTable(RESOURCE_STRIDE);
  metrics = new IdTable(METRIC_STRIDE);

  /** The index of a new row (its slots may hold what an append that threw left: set them all). */
  nextRow() {
    if (this.rows === this.capacity) this.#grow();
    return this.rows++;
  }

  #grow() {
    const n = this.capacity * 2;
    const used = this.rows;
    this.resource = grown(this.resource, n, used);
    this.metric = grown(this.metric, n, used);
    this.attributes = grown(this.attributes, n, used);
    this.time = grown(this.time, 2 * n, 2 * used);
    this.start = grown(this.start, 2 * n, 2 * used);
    this.flags = grown(this.flags, n, used);
    this.present = grown(this.present, n, used);
    this.double = grown(this.double, n, used);
    this.integer = grown(this.integer, 2 * n, 2 * used);
    this.min = grown(this.min, n, used);
    this.max = grown(this.max, n, used);
    this.scale = grown(this.scale, n, used);
    this.zeroCount = grown(this.zeroCount, 2 * n, 2 * used);
    this.positiveOffset = grown(this.positiveOffset, n, used);
    this.negativeOffset = grown(this.negativeOffset, n, used);
    this.bounds = grown(this.bounds, n, used);
    this.listLengths = grown(this.listLengths, LIST_STRIDE * n, LIST_STRIDE * used);
    this.capacity = n;
  }

  /** Room for `n` more bucket counts; returns the index of the first. @param {number} n */
  reserveCounts(n) {
    const at = this.countCount;
    this.counts = grown(this.counts, 2 * (at + n), 2 * at);
    this.countCount += n;
    return at;
  }

  /**
   * Bytes the arrays grow by to hold `rows` more rows and `counts` more bucket counts: exact, as
   * they double (grown()); the tables' growth (strings, attribute sets first seen) is not in it.
   * @param {number} rows @param {number} counts
   */
  growthFor(rows, counts) {
    let capacity = this.capacity;
    while (capacity < this.rows + rows) capacity *= 2;
    const perRow = (this.#perRowBytes() / this.capacity) * (capacity - this.capacity);
    const countSlots = this.counts.length;
    const needSlots = 2 * (this.countCount + counts);
    const countGrowth =
      needSlots <= countSlots ? 0 : Math.max(needSlots, 2 * countSlots) - countSlots;
    return perRow + countGrowth * Int32Array.BYTES_PER_ELEMENT;
  }

  /** Bytes of the arrays that hold one entry per row. */
  #perRowBytes() {
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
  get bytes() {
    const perRow = this.#perRowBytes();
    const { sets, boundLists: b, resources: r, metrics: m } = this;
    return (
      perRow +
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

  /** The columns, handed over: the store is not used after this. @returns {import('./sealed.js').SealedColumns} */
  seal() {
    const { bytes: strings, offsets: stringOffsets } = this.strings.encode();
    /** @type {Omit<import('./sealed.js').SealedColumns, 'transfer'>} */
    const sealed = {
      rows: this.rows,
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
      stringCount: this.strings.list.length,
      strings,
      stringOffsets,
      setCount: this.sets.count,
      setOffsets: this.sets.offsets,
      setEntries: this.sets.entries,
      resourceCount: this.resources.count,
      resources: this.resources.slots,
      metricCount: this.metrics.count,
      metrics: this.metrics.slots,
      boundsCount: this.boundLists.count,
      boundsOffsets: this.boundLists.offsets,
      boundsValues: this.boundLists.values,
    };
    const transfer = new Set();
    for (const value of Object.values(sealed)) {
      if (ArrayBuffer.isView(value)) transfer.add(value.buffer);
    }
    return { ...sealed, transfer: /** @type {ArrayBuffer[]} */ ([...transfer]) };
  }
}
