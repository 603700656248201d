import { grown } from '../parquet/grown.js';
import { AttributeSets, BoundLists, IdTable, Strings } from '../parquet/tables.js';
import { resizePerRow } from '../signals/metrics/parquet/column-store.js';
import {
  LIST_STRIDE,
  METRIC,
  METRIC_STRIDE,
  RESOURCE,
  RESOURCE_STRIDE,
  type SealedColumns,
} from '../signals/metrics/parquet/sealed.js';
import { stringTexts } from './sort-order.js';

/**
 * Rows copied out of sealed batches (sealed.js) into a new one: the compactor's sorted runs are
 * cut into chunks this way, and the merge of runs (spill.ts) builds its output batches from
 * chunks. Strings, attribute sets, resources, metrics and bound lists are interned again in the
 * new batch's tables; values are copied slot by slot, never through objects.
 */

const INITIAL_ROWS = 1024;
/** Bytes of the per-row arrays for one row. */
const ROW_BYTES = 104;

/** How a source batch's ids map to this batch's (-1: not mapped yet), and its counts' starts. */
interface SourceMaps {
  texts: string[];
  strings: Int32Array;
  sets: Int32Array;
  resources: Int32Array;
  metrics: Int32Array;
  bounds: Int32Array;
  countStart: Uint32Array;
}

/** What any copy from a source needs: its texts and where each row's counts start. */
const sourceFacts = new WeakMap<SealedColumns, { countStart: Uint32Array }>();

/** Where each row's bucket counts start in `counts`, in counts (2 slots each); length rows + 1. */
function countStarts(s: SealedColumns): Uint32Array {
  const starts = new Uint32Array(s.rows + 1);
  let at = 0;
  for (let row = 0; row < s.rows; row++) {
    starts[row] = at;
    const l = LIST_STRIDE * row;
    at +=
      (s.listLengths[l] as number) +
      (s.listLengths[l + 1] as number) +
      (s.listLengths[l + 2] as number);
  }
  starts[s.rows] = at;
  return starts;
}

export class SealedRows {
  rows = 0;
  private capacity: number;
  private resource: Uint32Array;
  private metric: Uint32Array;
  private attributes: Uint32Array;
  private time: Int32Array;
  private start: Int32Array;
  private flags: Uint32Array;
  private present: Uint8Array;
  private double: Float64Array;
  private integer: Int32Array;
  private min: Float64Array;
  private max: Float64Array;
  private scale: Int32Array;
  private zeroCount: Int32Array;
  private positiveOffset: Int32Array;
  private negativeOffset: Int32Array;
  private bounds: Uint32Array;
  private listLengths: Uint32Array;
  private counts: Int32Array;
  private countCount = 0;
  private readonly strings = new Strings();
  private readonly sets = new AttributeSets();
  private readonly boundLists = new BoundLists();
  private readonly resources = new IdTable(RESOURCE_STRIDE);
  private readonly metrics = new IdTable(METRIC_STRIDE);
  /** The maps of the sources rows came from, by source: dropped with this batch. */
  private readonly maps = new Map<SealedColumns, SourceMaps>();

  /** `rows`: room made for them at once (a chunk's rows are known). */
  constructor(rows = INITIAL_ROWS) {
    const n = Math.max(1, rows);
    this.capacity = n;
    this.resource = new Uint32Array(n);
    this.metric = new Uint32Array(n);
    this.attributes = new Uint32Array(n);
    this.time = new Int32Array(2 * n);
    this.start = new Int32Array(2 * n);
    this.flags = new Uint32Array(n);
    this.present = new Uint8Array(n);
    this.double = new Float64Array(n);
    this.integer = new Int32Array(2 * n);
    this.min = new Float64Array(n);
    this.max = new Float64Array(n);
    this.scale = new Int32Array(n);
    this.zeroCount = new Int32Array(2 * n);
    this.positiveOffset = new Int32Array(n);
    this.negativeOffset = new Int32Array(n);
    this.bounds = new Uint32Array(n);
    this.listLengths = new Uint32Array(LIST_STRIDE * n);
    this.counts = new Int32Array(2 * n);
  }

  /** Memory held: the arrays' capacities and the tables' entries. */
  get bytes(): number {
    return (
      this.capacity * ROW_BYTES +
      this.counts.byteLength +
      this.strings.bytes +
      this.sets.bytes +
      this.sets.offsets.byteLength +
      this.sets.entries.byteLength +
      this.boundLists.bytes +
      this.boundLists.values.byteLength +
      this.resources.bytes +
      this.resources.slots.byteLength +
      this.metrics.bytes +
      this.metrics.slots.byteLength
    );
  }

  /** Appends rows `order[from]` … `order[to - 1]` of `s` (or rows from … to - 1 without order). */
  add(s: SealedColumns, from: number, to: number, order?: Uint32Array): void {
    if (to <= from) return;
    const maps = this.mapsOf(s);
    const need = this.rows + (to - from);
    if (need > this.capacity) this.resize(Math.max(need, 2 * this.capacity));
    for (let i = from; i < to; i++) {
      const row = order === undefined ? i : (order[i] as number);
      const r = this.rows++;
      this.resource[r] = this.resourceOf(s, maps, s.resource[row] as number);
      this.metric[r] = this.metricOf(s, maps, s.metric[row] as number);
      this.attributes[r] = this.setOf(s, maps, s.attributes[row] as number);
      this.time[2 * r] = s.time[2 * row] as number;
      this.time[2 * r + 1] = s.time[2 * row + 1] as number;
      this.start[2 * r] = s.start[2 * row] as number;
      this.start[2 * r + 1] = s.start[2 * row + 1] as number;
      this.flags[r] = s.flags[row] as number;
      this.present[r] = s.present[row] as number;
      this.double[r] = s.double[row] as number;
      this.integer[2 * r] = s.integer[2 * row] as number;
      this.integer[2 * r + 1] = s.integer[2 * row + 1] as number;
      this.min[r] = s.min[row] as number;
      this.max[r] = s.max[row] as number;
      this.scale[r] = s.scale[row] as number;
      this.zeroCount[2 * r] = s.zeroCount[2 * row] as number;
      this.zeroCount[2 * r + 1] = s.zeroCount[2 * row + 1] as number;
      this.positiveOffset[r] = s.positiveOffset[row] as number;
      this.negativeOffset[r] = s.negativeOffset[row] as number;
      const b = s.bounds[row] as number;
      this.bounds[r] = b === 0 ? 0 : this.boundsOf(s, maps, b);
      const l = LIST_STRIDE * row;
      const lr = LIST_STRIDE * r;
      this.listLengths[lr] = s.listLengths[l] as number;
      this.listLengths[lr + 1] = s.listLengths[l + 1] as number;
      this.listLengths[lr + 2] = s.listLengths[l + 2] as number;
      const c0 = maps.countStart[row] as number;
      const n = (maps.countStart[row + 1] as number) - c0;
      if (n > 0) {
        this.counts = grown(this.counts, 2 * (this.countCount + n), 2 * this.countCount);
        this.counts.set(s.counts.subarray(2 * c0, 2 * (c0 + n)), 2 * this.countCount);
        this.countCount += n;
      }
    }
  }

  /** Drops what was kept to copy more rows of `s` (none will come). */
  forget(s: SealedColumns): void {
    this.maps.delete(s);
  }

  /** The rows as a sealed batch (views of exactly the rows' length); this is not used after. */
  seal(): SealedColumns {
    const n = this.rows;
    const trimmed = <T extends Int32Array | Uint32Array | Float64Array | Uint8Array>(
      a: T,
      length: number,
    ): T => (a.length === length ? a : (a.subarray(0, length) as T));
    const { bytes: strings, offsets: stringOffsets } = this.strings.encode();
    const sealed: Omit<SealedColumns, 'transfer'> = {
      rows: n,
      resource: trimmed(this.resource, n),
      metric: trimmed(this.metric, n),
      attributes: trimmed(this.attributes, n),
      time: trimmed(this.time, 2 * n),
      start: trimmed(this.start, 2 * n),
      flags: trimmed(this.flags, n),
      present: trimmed(this.present, n),
      double: trimmed(this.double, n),
      integer: trimmed(this.integer, 2 * n),
      min: trimmed(this.min, n),
      max: trimmed(this.max, n),
      scale: trimmed(this.scale, n),
      zeroCount: trimmed(this.zeroCount, 2 * n),
      positiveOffset: trimmed(this.positiveOffset, n),
      negativeOffset: trimmed(this.negativeOffset, n),
      bounds: trimmed(this.bounds, n),
      listLengths: trimmed(this.listLengths, LIST_STRIDE * n),
      counts: trimmed(this.counts, 2 * this.countCount),
      stringCount: this.strings.count,
      strings,
      stringOffsets,
      setCount: this.sets.count,
      setOffsets: trimmed(this.sets.offsets, this.sets.count + 1),
      setEntries: trimmed(this.sets.entries, 2 * this.sets.entryCount),
      resourceCount: this.resources.count,
      resources: trimmed(this.resources.slots, RESOURCE_STRIDE * this.resources.count),
      metricCount: this.metrics.count,
      metrics: trimmed(this.metrics.slots, METRIC_STRIDE * this.metrics.count),
      boundsCount: this.boundLists.count,
      boundsOffsets: trimmed(this.boundLists.offsets, this.boundLists.count + 1),
      boundsValues: trimmed(this.boundLists.values, this.boundLists.valueCount),
    };
    this.maps.clear();
    return withTransfer(sealed);
  }

  private mapsOf(s: SealedColumns): SourceMaps {
    let maps = this.maps.get(s);
    if (maps === undefined) {
      const fresh = (n: number) => new Int32Array(n).fill(-1);
      let facts = sourceFacts.get(s);
      if (facts === undefined) {
        facts = { countStart: countStarts(s) };
        sourceFacts.set(s, facts);
      }
      maps = {
        texts: stringTexts(s),
        strings: fresh(s.stringCount),
        sets: fresh(s.setCount),
        resources: fresh(s.resourceCount),
        metrics: fresh(s.metricCount),
        bounds: fresh(s.boundsCount),
        countStart: facts.countStart,
      };
      this.maps.set(s, maps);
    }
    return maps;
  }

  private stringOf(maps: SourceMaps, id: number): number {
    return mapped(maps.strings, id, () => this.strings.id(maps.texts[id] as string));
  }

  private setOf(s: SealedColumns, maps: SourceMaps, id: number): number {
    if (id === 0) return 0;
    return mapped(maps.sets, id, () => {
      const keys: string[] = [];
      const texts: (string | null)[] = [];
      for (let e = s.setOffsets[id] as number; e < (s.setOffsets[id + 1] as number); e++) {
        keys.push(maps.texts[s.setEntries[2 * e] as number] as string);
        const v = s.setEntries[2 * e + 1] as number;
        texts.push(v < 0 ? null : (maps.texts[v] as string));
      }
      return this.sets.intern(this.strings, keys, texts);
    });
  }

  private resourceOf(s: SealedColumns, maps: SourceMaps, id: number): number {
    return mapped(maps.resources, id, () => {
      const at = id * RESOURCE_STRIDE;
      const slots = Array.from(s.resources.subarray(at, at + RESOURCE_STRIDE));
      slots[RESOURCE.SERVICE] = this.stringOf(maps, slots[RESOURCE.SERVICE] as number);
      slots[RESOURCE.SCHEMA_URL] = this.stringOf(maps, slots[RESOURCE.SCHEMA_URL] as number);
      slots[RESOURCE.ATTRIBUTES] = this.setOf(s, maps, slots[RESOURCE.ATTRIBUTES] as number);
      return this.resources.intern(slots);
    });
  }

  private metricOf(s: SealedColumns, maps: SourceMaps, id: number): number {
    return mapped(maps.metrics, id, () => {
      const at = id * METRIC_STRIDE;
      const slots = Array.from(s.metrics.subarray(at, at + METRIC_STRIDE));
      for (const slot of STRING_SLOTS) slots[slot] = this.stringOf(maps, slots[slot] as number);
      return this.metrics.intern(slots);
    });
  }

  private boundsOf(s: SealedColumns, maps: SourceMaps, id: number): number {
    return mapped(maps.bounds, id, () =>
      this.boundLists.intern(
        s.boundsValues.subarray(s.boundsOffsets[id] as number, s.boundsOffsets[id + 1] as number),
      ),
    );
  }

  private resize(n: number): void {
    const used = this.rows;
    resizePerRow(this, (a, per) => grown(a, n * per, used * per));
    this.capacity = this.resource.length;
  }
}

/** A source's id in this batch: `map[id]`, made by `make()` the first time (-1: not yet). */
function mapped(map: Int32Array, id: number, make: () => number): number {
  let out = map[id] as number;
  if (out < 0) {
    out = make();
    map[id] = out;
  }
  return out;
}

/** The metric slots that hold string ids (the rest are codes). */
const STRING_SLOTS = [
  METRIC.SCOPE_NAME,
  METRIC.SCOPE_VERSION,
  METRIC.SCOPE_SCHEMA_URL,
  METRIC.NAME,
  METRIC.DESCRIPTION,
  METRIC.UNIT,
];

function withTransfer(sealed: Omit<SealedColumns, 'transfer'>): SealedColumns {
  const transfer = new Set<ArrayBuffer>();
  for (const value of Object.values(sealed)) {
    if (ArrayBuffer.isView(value)) transfer.add(value.buffer as ArrayBuffer);
  }
  return { ...sealed, transfer: [...transfer] };
}

/** The typed-array fields of a sealed batch, in the order they are written to a spill file. */
const ARRAYS = [
  'resource',
  'metric',
  'attributes',
  'time',
  'start',
  'flags',
  'present',
  'double',
  'integer',
  'min',
  'max',
  'scale',
  'zeroCount',
  'positiveOffset',
  'negativeOffset',
  'bounds',
  'listLengths',
  'counts',
  'strings',
  'stringOffsets',
  'setOffsets',
  'setEntries',
  'resources',
  'metrics',
  'boundsOffsets',
  'boundsValues',
] as const;
type ArrayField = (typeof ARRAYS)[number];
const KINDS: Record<ArrayField, 'u8' | 'i32' | 'u32' | 'f64'> = {
  resource: 'u32',
  metric: 'u32',
  attributes: 'u32',
  time: 'i32',
  start: 'i32',
  flags: 'u32',
  present: 'u8',
  double: 'f64',
  integer: 'i32',
  min: 'f64',
  max: 'f64',
  scale: 'i32',
  zeroCount: 'i32',
  positiveOffset: 'i32',
  negativeOffset: 'i32',
  bounds: 'u32',
  listLengths: 'u32',
  counts: 'i32',
  strings: 'u8',
  stringOffsets: 'u32',
  setOffsets: 'u32',
  setEntries: 'i32',
  resources: 'u32',
  metrics: 'u32',
  boundsOffsets: 'u32',
  boundsValues: 'f64',
};
const COUNTS = ['rows', 'stringCount', 'setCount', 'resourceCount', 'metricCount', 'boundsCount'];
/** Header: the counts, then each array's length in elements. */
const HEADER_WORDS = COUNTS.length + ARRAYS.length;
const pad8 = (n: number) => (n + 7) & ~7;

/**
 * A sealed batch (as seal() makes it: arrays of exactly their length) as bytes: a header of
 * Uint32 counts and lengths, then each array, 8-byte aligned, so that decodeSealed views them
 * without a copy.
 */
export function encodeSealed(s: SealedColumns): Uint8Array {
  let total = pad8(4 * HEADER_WORDS);
  for (const field of ARRAYS) total += pad8((s[field] as ArrayBufferView).byteLength);
  const out = new Uint8Array(total);
  const header = new Uint32Array(out.buffer, 0, HEADER_WORDS);
  COUNTS.forEach((c, i) => {
    header[i] = s[c as keyof SealedColumns] as number;
  });
  let at = pad8(4 * HEADER_WORDS);
  ARRAYS.forEach((field, i) => {
    const a = s[field] as Uint8Array | Int32Array | Uint32Array | Float64Array;
    header[COUNTS.length + i] = a.length;
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    at += pad8(a.byteLength);
  });
  return out;
}

/** encodeSealed's bytes back into a sealed batch (views into `bytes`, 8-byte aligned). */
export function decodeSealed(bytes: Uint8Array): SealedColumns {
  if (bytes.byteOffset % 8 !== 0) throw new Error('decodeSealed: bytes must be 8-byte aligned');
  const header = new Uint32Array(bytes.buffer, bytes.byteOffset, HEADER_WORDS);
  const out: Record<string, unknown> = {};
  COUNTS.forEach((c, i) => {
    out[c] = header[i];
  });
  let at = bytes.byteOffset + pad8(4 * HEADER_WORDS);
  ARRAYS.forEach((field, i) => {
    const length = header[COUNTS.length + i] as number;
    const kind = KINDS[field];
    const Kind =
      kind === 'u8'
        ? Uint8Array
        : kind === 'i32'
          ? Int32Array
          : kind === 'u32'
            ? Uint32Array
            : Float64Array;
    out[field] = new Kind(bytes.buffer as ArrayBuffer, at, length);
    at += pad8(length * Kind.BYTES_PER_ELEMENT);
  });
  out.transfer = [bytes.buffer];
  return out as unknown as SealedColumns;
}
