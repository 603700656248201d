import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import { compareBytes } from '../parquet/dictionaries.js';
import { type OtlpRows, TimeOutOfRangeError } from '../signals/flat-append.js';
import { FlatStore } from '../signals/flat-parquet/store.js';
import {
  type FlatSpec,
  flatTable,
  itemStarts,
  type SealedFlat,
  slotsOf,
  TRACE_ID_BLOOM_FILTERS,
} from '../signals/flat-parquet/table.js';
import { LOG_REQUESTS } from '../signals/logs/append-otlp.js';
import { LOG_RECORDS } from '../signals/logs/parquet-schema.js';
import { FieldValueError } from '../signals/plain-values.js';
import { SPAN_REQUESTS } from '../signals/traces/append-otlp.js';
import { SPANS } from '../signals/traces/parquet-schema.js';
import { appendFlatColumns } from './flat-append-columns.js';
import { joinedFlat } from './flat-join.js';
import {
  type CompactionRows,
  DamagedPartError,
  type RowCopier,
  type RunBuilders,
  storeBuilders,
} from './signal-rows.js';

/**
 * The rows of a flat table (spans, log records: src/signals/flat-parquet/) for compaction: one
 * span or log record a row, appended from the row groups of the exporter's Parquet files and of
 * earlier outputs, copied between sealed batches, spilled and merged in the table's own order
 * (its `sort`: ServiceName, then spans' StatusCode, TraceId, Timestamp; texts by their UTF-8
 * bytes, times as signed integers), which is an order by content, the same in every batch; and
 * from the OTLP objects of the signal (append-otlp.ts of each), whose rows are the ones the
 * exporter's Parquet gives.
 */

/**
 * What a compaction run of spans or log records asks of the Parquet writer beyond the codec: a
 * `TraceId` bloom filter in each row group of the outputs, as the exporter's own files have
 * (docs/parquet.md, "Bloom filters on `TraceId`").
 */
export const FLAT_OUTPUT_WRITER_OPTIONS: CompactionRows<SealedFlat, FlatKeys>['writerOptions'] = {
  bloomFilters: TRACE_ID_BLOOM_FILTERS,
};

/**
 * Rows of a row group of a compaction output of spans: a quarter of the exporter's 65,536, so
 * that a lookup of one service in an hour (its rows are one stretch: outputs are sorted by
 * ServiceName first) reads little more than that service's rows, DuckDB reading whole column
 * chunks of each row group its statistics keep (docs/parquet.md, "Order of spans and log
 * records"). Log records keep the exporter's row groups: in smaller ones their lookup by trace
 * took as much CPU (faster by the clock only where DuckDB had idle cores), and the files were
 * 11-13 % larger.
 */
export const SPAN_OUTPUT_ROW_GROUP_ROWS = 16_384;

type Column = FlatSpec['columns'][number];

/**
 * What a copier needs of a source batch: where each row's items start, and how its string and
 * set ids map to the copy's, each entry marked with the copier that set it (an entry marked
 * otherwise is not mapped yet for the copier reading it). Made once a batch and lent to one
 * copier at a time, until it forgets the batch or is sealed (another copier reading the batch
 * meanwhile gets arrays of its own). A spilled run is copied into its chunks by a copier each
 * (spill.ts, 64 or so a run): made for each copier, the starts were computed again over the
 * whole run for every chunk, and the maps allocated and filled at the size of the run's strings
 * and sets (in spans about one of each a row), a pass over the run and some 16 bytes a row of it
 * allocated for every chunk. A sealed batch is not changed after, so neither are its starts.
 */
interface SourceWork {
  starts: Uint32Array[];
  /** Per string id: its id in the copy, then the mark of the copier that set it. */
  strings: Int32Array;
  /** Per set id: its id in the copy, then the mark of the copier that set it. */
  sets: Int32Array;
  /** Lent to a copier now. */
  lent: boolean;
}

/** A source batch's work as a copier reads it: its mark, and the work lent to it (if so). */
interface SourceMaps extends SourceWork {
  mark: number;
  lentFrom: SourceWork | undefined;
}

let sourceWork = new WeakMap<SealedFlat, SourceWork>();
/** The last copier's mark (0: none; marks start at 1, a new work's marks are all 0). */
let lastMark = 0;

function nextMark(): number {
  if (lastMark === 0x7fffffff) {
    // Every mark given: new work for every batch, so that no old mark is taken for a new one.
    lastMark = 0;
    sourceWork = new WeakMap();
  }
  return ++lastMark;
}

const newWork = (s: SealedFlat, starts: Uint32Array[]): SourceWork => ({
  starts,
  strings: new Int32Array(2 * s.stringCount),
  sets: new Int32Array(2 * s.setCount),
  lent: false,
});

/** The batch's work for a copier marked `mark`: the batch's own if not lent, else new arrays. */
function mapsFor(s: SealedFlat, mark: number): SourceMaps {
  let work = sourceWork.get(s);
  if (work === undefined) {
    work = newWork(s, itemStarts(s));
    sourceWork.set(s, work);
  }
  if (work.lent) return { ...newWork(s, work.starts), mark, lentFrom: undefined };
  work.lent = true;
  return { ...work, mark, lentFrom: work };
}

/** Gives back what mapsFor lent. */
function giveBack(maps: SourceMaps | undefined): void {
  if (maps?.lentFrom !== undefined) maps.lentFrom.lent = false;
}

/** Rows of sealed batches of a flat table copied into a new batch (a FlatStore). */
class FlatCopier implements RowCopier<SealedFlat> {
  readonly #store: FlatStore;
  readonly #maps = new Map<SealedFlat, SourceMaps>();
  readonly #rowColumns: number[];
  readonly #groups: number[][];
  readonly #mark = nextMark();

  constructor(readonly spec: FlatSpec) {
    this.#store = new FlatStore(spec);
    this.#rowColumns = spec.columns.flatMap((c, i) => (c.list === undefined ? [i] : []));
    this.#groups = spec.lists.map((_, g) =>
      spec.columns.flatMap((c, i) => (c.list === g ? [i] : [])),
    );
  }

  get rows(): number {
    return this.#store.rows;
  }

  get bytes(): number {
    return this.#store.bytes;
  }

  add(s: SealedFlat, from: number, to: number, order?: Uint32Array): void {
    const maps = this.#mapsOf(s);
    const store = this.#store;
    for (let k = from; k < to; k++) {
      const row = order === undefined ? k : (order[k] as number);
      const r = store.addRow();
      for (const c of this.#rowColumns) this.#copy(s, maps, c, row, r);
      this.#groups.forEach((group, g) => {
        const start = (maps.starts[g] as Uint32Array)[row] as number;
        const n = ((s.lengths[g] as Uint32Array)[row] as number) ?? 0;
        for (let j = start; j < start + n; j++) {
          const item = store.addItem(g, r);
          for (const c of group) this.#copy(s, maps, c, j, item);
        }
      });
    }
  }

  forget(s: SealedFlat): void {
    giveBack(this.#maps.get(s));
    this.#maps.delete(s);
  }

  seal(): SealedFlat {
    for (const maps of this.#maps.values()) giveBack(maps);
    this.#maps.clear();
    return this.#store.seal();
  }

  #mapsOf(s: SealedFlat): SourceMaps {
    let maps = this.#maps.get(s);
    if (maps === undefined) {
      maps = mapsFor(s, this.#mark);
      this.#maps.set(s, maps);
    }
    return maps;
  }

  #string(s: SealedFlat, maps: SourceMaps, id: number): number {
    const strings = maps.strings;
    if (strings[2 * id + 1] === maps.mark) return strings[2 * id] as number;
    const out = this.#store.strings.freshBytes(
      s.strings,
      s.stringOffsets[id] as number,
      s.stringOffsets[id + 1] as number,
    );
    strings[2 * id] = out;
    strings[2 * id + 1] = maps.mark;
    return out;
  }

  #set(s: SealedFlat, maps: SourceMaps, id: number): number {
    if (id === 0) return 0;
    const sets = maps.sets;
    if (sets[2 * id + 1] === maps.mark) return sets[2 * id] as number;
    // A batch's set is already a set: its entries are copied as this batch's string ids,
    // each source string's bytes copied once (#string).
    const out = this.#store.sets.copy(
      s.setEntries,
      s.setOffsets[id] as number,
      s.setOffsets[id + 1] as number,
      (string) => this.#string(s, maps, string),
    );
    sets[2 * id] = out;
    sets[2 * id + 1] = maps.mark;
    return out;
  }

  /** Value `from` of column `c` of `s` as value `at` of the copy. */
  #copy(s: SealedFlat, maps: SourceMaps, c: number, from: number, at: number): void {
    const values = s.columns[c] as Int32Array | Uint32Array;
    const store = this.#store;
    switch ((this.spec.columns[c] as Column).kind) {
      case 'string':
        store.int32(c, at, this.#string(s, maps, values[from] as number));
        return;
      case 'map':
        store.set(c, at, this.#set(s, maps, values[from] as number));
        return;
      case 'text': {
        const start = from === 0 ? 0 : (values[from - 1] as number);
        store.textBytes(c, at, s.texts[c] as Uint8Array, start, values[from] as number);
        return;
      }
      default:
        store.copySlots(c, at, values, from);
    }
  }
}

/** Values a column has in a batch: rows, or its list group's items. */
const countOf = (c: Column, s: SealedFlat) =>
  c.list === undefined ? s.rows : (s.items[c.list] as number);

/** The typed arrays of a sealed batch, exactly their length, in the order they are spilled. */
function arraysOf(spec: FlatSpec, s: SealedFlat): (Uint8Array | Int32Array | Uint32Array)[] {
  const cut = <T extends Uint8Array | Int32Array | Uint32Array>(a: T, n: number): T =>
    (a.length === n ? a : a.subarray(0, n)) as T;
  const out: (Uint8Array | Int32Array | Uint32Array)[] = [];
  spec.columns.forEach((c, i) => {
    const n = countOf(c, s);
    const values = s.columns[i] as Int32Array | Uint32Array;
    out.push(cut(values, n * slotsOf(c.kind)));
    if (c.kind === 'text') {
      const end = n === 0 ? 0 : (values[n - 1] as number);
      out.push(cut(s.texts[i] as Uint8Array, end));
    }
  });
  for (const lengths of s.lengths) out.push(cut(lengths, s.rows));
  out.push(s.strings, cut(s.stringOffsets, s.stringCount + 1));
  out.push(cut(s.setOffsets, s.setCount + 1));
  out.push(cut(s.setEntries, 2 * (s.setOffsets[s.setCount] as number)));
  return out;
}

const pad8 = (n: number) => (n + 7) & ~7;

/**
 * A sealed batch as bytes: a header of Uint32 words (rows, strings, sets, each list group's
 * items, then every array's length in elements), then each array, 8-byte aligned, so that
 * decodeFlat views them without a copy.
 */
function encodeFlat(spec: FlatSpec, s: SealedFlat): Uint8Array {
  const arrays = arraysOf(spec, s);
  const words = 3 + spec.lists.length + arrays.length;
  let total = pad8(4 * words);
  for (const a of arrays) total += pad8(a.byteLength);
  const out = new Uint8Array(total);
  const header = new Uint32Array(out.buffer, 0, words);
  header[0] = s.rows;
  header[1] = s.stringCount;
  header[2] = s.setCount;
  spec.lists.forEach((_, g) => {
    header[3 + g] = s.items[g] as number;
  });
  let at = pad8(4 * words);
  arrays.forEach((a, k) => {
    header[3 + spec.lists.length + k] = a.length;
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    at += pad8(a.byteLength);
  });
  return out;
}

/** encodeFlat's bytes back into a sealed batch (views into `bytes`, 8-byte aligned). */
function decodeFlat(spec: FlatSpec, bytes: Uint8Array): SealedFlat {
  if (bytes.byteOffset % 8 !== 0) throw new Error('decodeFlat: bytes must be 8-byte aligned');
  const counts = new Uint32Array(bytes.buffer, bytes.byteOffset, 3 + spec.lists.length);
  const textColumns = spec.columns.filter((c) => c.kind === 'text').length;
  const arrayCount = spec.columns.length + textColumns + spec.lists.length + 4;
  const words = 3 + spec.lists.length + arrayCount;
  const header = new Uint32Array(bytes.buffer, bytes.byteOffset, words);
  let at = bytes.byteOffset + pad8(4 * words);
  let k = 3 + spec.lists.length;
  const next = <T>(Kind: {
    new (buffer: ArrayBuffer, offset: number, length: number): T;
    BYTES_PER_ELEMENT: number;
  }): T => {
    const length = header[k++] as number;
    const view = new Kind(bytes.buffer as ArrayBuffer, at, length);
    at += pad8(length * Kind.BYTES_PER_ELEMENT);
    return view;
  };
  const columns: (Int32Array | Uint32Array)[] = [];
  const texts: (Uint8Array | undefined)[] = [];
  for (const c of spec.columns) {
    const wide = c.kind === 'string' || c.kind === 'map' || c.kind === 'text';
    columns.push(wide ? next(Uint32Array) : next(Int32Array));
    texts.push(c.kind === 'text' ? next(Uint8Array) : undefined);
  }
  const lengths = spec.lists.map(() => next(Uint32Array));
  const strings = next(Uint8Array);
  const stringOffsets = next(Uint32Array);
  const setOffsets = next(Uint32Array);
  const setEntries = next(Int32Array);
  return {
    rows: counts[0] as number,
    stringCount: counts[1] as number,
    setCount: counts[2] as number,
    items: spec.lists.map((_, g) => counts[3 + g] as number),
    columns,
    lengths,
    strings,
    stringOffsets,
    setOffsets,
    setEntries,
    texts,
    transfer: [bytes.buffer as ArrayBuffer],
  };
}

/** What comparing a batch's rows needs: its sort columns. */
export interface FlatKeys {
  s: SealedFlat;
  sort: { kind: Column['kind']; values: Int32Array | Uint32Array; bytes: Uint8Array | undefined }[];
}

function flatKeys(spec: FlatSpec, s: SealedFlat): FlatKeys {
  return {
    s,
    sort: spec.sort.map((name) => {
      const i = spec.columns.findIndex((c) => c.name === name && c.list === undefined);
      const c = spec.columns[i] as Column;
      return {
        kind: c.kind,
        values: s.columns[i] as Int32Array | Uint32Array,
        bytes: c.kind === 'text' ? s.texts[i] : undefined,
      };
    }),
  };
}

/** Row `i` of `a`'s batch against row `j` of `b`'s, by the table's sort columns. */
function compareFlat(a: FlatKeys, i: number, b: FlatKeys, j: number): number {
  for (let k = 0; k < a.sort.length; k++) {
    const x = a.sort[k] as FlatKeys['sort'][number];
    const y = b.sort[k] as FlatKeys['sort'][number];
    let d = 0;
    switch (x.kind) {
      case 'string': {
        const p = x.values[i] as number;
        const q = y.values[j] as number;
        if (a.s === b.s && p === q) continue;
        const so = a.s.stringOffsets;
        const to = b.s.stringOffsets;
        d = compareBytes(
          a.s.strings,
          so[p] as number,
          so[p + 1] as number,
          b.s.strings,
          to[q] as number,
          to[q + 1] as number,
        );
        break;
      }
      case 'text': {
        const xs = i === 0 ? 0 : (x.values[i - 1] as number);
        const ys = j === 0 ? 0 : (y.values[j - 1] as number);
        d = compareBytes(
          x.bytes as Uint8Array,
          xs,
          x.values[i] as number,
          y.bytes as Uint8Array,
          ys,
          y.values[j] as number,
        );
        break;
      }
      case 'timestamp':
      case 'int64': {
        const xh = (x.values[2 * i + 1] as number) | 0;
        const yh = (y.values[2 * j + 1] as number) | 0;
        d =
          xh !== yh
            ? xh - yh
            : ((x.values[2 * i] as number) >>> 0) - ((y.values[2 * j] as number) >>> 0);
        break;
      }
      default:
        d = (x.values[i] as number) - (y.values[j] as number);
    }
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * A request's items appended to `store`; a time no timestamp column holds, or a field holding
 * what it cannot (FieldValueError), makes the request a damaged part (its input skipped, kept
 * and recorded), never a wrapped or cut value.
 */
function appendRequest(otlp: OtlpRows, store: FlatStore, request: OtlpObject): number {
  try {
    return otlp.append(store, request);
  } catch (error) {
    if (error instanceof TimeOutOfRangeError || error instanceof FieldValueError) {
      throw new DamagedPartError(error.message);
    }
    throw error;
  }
}

/** The compaction's rows of the flat table `spec`, in row groups of `rowGroupRows` (the table's by default). */
export function flatRows(
  signal: 'traces' | 'logs',
  spec: FlatSpec,
  otlp: OtlpRows,
  rowBytes: { output: number; copied: number },
  rowGroupRows?: number,
): CompactionRows<SealedFlat, FlatKeys> {
  return {
    signal,
    // An hour waits for Parquet's batch age, the longest, whatever `format` names: its Parquet
    // files and OTLP objects are read alike (the CLI passes the reader's format, the metrics').
    settleFormat: 'parquet',
    countRequest: (request) => otlp.count(request),
    builders(): RunBuilders<SealedFlat> {
      const store = new FlatStore(spec);
      return storeBuilders(store, (part) =>
        'columns' in part
          ? appendFlatColumns(store, spec, part.columns)
          : appendRequest(otlp, store, part.request),
      );
    },
    // The exporter's table: its plan orders a batch's rows by `sort`, as compareFlat does.
    table: flatTable(spec) as CompactionRows<SealedFlat, FlatKeys>['table'],
    writerOptions:
      rowGroupRows === undefined
        ? FLAT_OUTPUT_WRITER_OPTIONS
        : { ...FLAT_OUTPUT_WRITER_OPTIONS, rowGroupRows },
    order(s) {
      const keys = flatKeys(spec, s);
      const order = new Uint32Array(s.rows);
      for (let r = 0; r < s.rows; r++) order[r] = r;
      return order.sort((x, y) => compareFlat(keys, x, keys, y) || x - y);
    },
    copier: () => new FlatCopier(spec),
    joined: (a, b) => joinedFlat(spec, a, b),
    encode: (s) => encodeFlat(spec, s),
    decode: (bytes) => decodeFlat(spec, bytes),
    keys: (s) => flatKeys(spec, s),
    compare: compareFlat,
    firstGuessRowBytes: rowBytes.output,
    copiedRowBytes: rowBytes.copied,
  };
}

/**
 * Spans: 58 bytes a span in the exporter's files (docs/parquet.md, Size), a little less sorted
 * into large files; about 270 bytes a span in the builders and a copier (capacity included;
 * measured on the tests' spans: 185 bytes a span spilled).
 */
export const SPAN_ROWS = flatRows(
  'traces',
  SPANS,
  SPAN_REQUESTS,
  { output: 50, copied: 270 },
  SPAN_OUTPUT_ROW_GROUP_ROWS,
);

/** Log records: 48 bytes a record in the exporter's files; about 240 in the builders (155 spilled). */
export const LOG_RECORD_ROWS = flatRows('logs', LOG_RECORDS, LOG_REQUESTS, {
  output: 40,
  copied: 240,
});
