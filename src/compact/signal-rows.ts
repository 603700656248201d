import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { Format, SignalName } from '../layout/formats.js';
import type { FileWriterOptions, ParquetTable } from '../parquet/file-writer.js';
import type { ColumnsRead } from '../parquet/read.js';

/**
 * What compaction needs of a signal: its rows. The plan, the lease, the listing, publishing,
 * the bookkeeping, the inputs, the spill and the output file know no signal; they reach the
 * signal's column builders, its row order and its Parquet table through one CompactionRows
 * (metrics-rows.ts, flat-rows.ts: spans and log records). `S` is a sealed batch of the signal's
 * columns, `K` what comparing its rows across batches needs.
 */

/**
 * Part of an input: a request (an OTLP object) or a Parquet row group's columns, and its rows
 * (independently counted: the request's data points or items, the row group's rows).
 */
export type InputPart =
  | { request: OtlpObject; points: number }
  | { columns: ColumnsRead; points: number };

/**
 * Thrown by builders for a part read right whose rows no exporter writes (a span's parallel
 * lists that disagree): its input is damaged, and is skipped as one that cannot be decoded.
 */
export class DamagedPartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DamagedPartError';
  }
}

/** The open column builders of one sorted run. */
export interface RunBuilders<S> {
  /** Rows appended so far. */
  readonly rows: number;
  /** Memory held now, capacity included. */
  readonly bytes: number;
  /** Appends a part's rows (all of them); returns how many. Throws for what it cannot read. */
  add(part: InputPart): number;
  mark(): unknown;
  rollback(mark: unknown): void;
  /** The columns, handed over: not used after. */
  seal(): S;
}

/** Run builders over a column store (its size, marks and seal); `add` appends a part to it. */
export function storeBuilders<S, M>(
  store: {
    readonly rows: number;
    readonly bytes: number;
    mark(): M;
    rollback(mark: M): void;
    seal(): S;
  },
  add: (part: InputPart) => number,
): RunBuilders<S> {
  return {
    get rows() {
      return store.rows;
    },
    get bytes() {
      return store.bytes;
    },
    add,
    mark: () => store.mark(),
    rollback: (mark) => store.rollback(mark as M),
    seal: () => store.seal(),
  };
}

/** Rows copied out of sealed batches into a new one (a chunk of a spilled run, a merged batch). */
export interface RowCopier<S> {
  readonly rows: number;
  /** Memory held now. */
  readonly bytes: number;
  /** Appends rows `order[from]` … `order[to - 1]` of `s` (rows from … to - 1 without order). */
  add(s: S, from: number, to: number, order?: Uint32Array): void;
  /** No more rows of `s` will come: drops what was kept to copy them. */
  forget(s: S): void;
  /** The rows as a sealed batch; not used after. */
  seal(): S;
}

export interface CompactionRows<S extends { readonly rows: number }, K> {
  readonly signal: SignalName;
  /**
   * The format whose batch age an hour waits for before it is compacted; undefined: the one the
   * options name (`format`, as the metrics' exporter was given it).
   */
  readonly settleFormat?: Format;
  /** The rows (items) of an OTLP request, counted apart from the builders. */
  countRequest(request: OtlpObject): number;
  /** Fresh, empty builders. */
  builders(): RunBuilders<S>;
  /** The Parquet table the outputs are written with, its rows in the compaction order. */
  readonly table: ParquetTable<S, unknown>;
  /**
   * What the outputs ask of the writer beyond the codec (bloom filters, say). With
   * `rowGroupRows`, a batch of more rows is written a row group at a time; a table that plans
   * row groups apart (ParquetTable.planGroup) gives each dictionaries of its own values only.
   */
  readonly writerOptions: Omit<Partial<FileWriterOptions>, 'compression' | 'compressPage'>;
  /** A batch's rows in the compaction order: one order by content, the same in every batch. */
  order(s: S): Uint32Array;
  /** A copier with room for `rows`. */
  copier(rows?: number): RowCopier<S>;
  /** Two sealed batches as one (a's rows, then b's) without copying row by row, where it can. */
  joined?(a: S, b: S): S;
  /** A sealed batch (as a copier seals it) as bytes for a spill file, and back (a view). */
  encode(s: S): Uint8Array;
  decode(bytes: Uint8Array): S;
  /** What compare() needs of a batch (made once a batch). */
  keys(s: S): K;
  /** Row `i` of the batch of `a` against row `j` of the batch of `b`, in the compaction order. */
  compare(a: K, i: number, b: K, j: number): number;
  /** Bytes a row takes in an output, before a run has been encoded to measure it. */
  readonly firstGuessRowBytes: number;
  /** Bytes of one row in a copier (for the size of a spilled run's chunks). */
  readonly copiedRowBytes: number;
}

// biome-ignore lint/suspicious/noExplicitAny: the signal's batch and key types are its own
export type AnyCompactionRows = CompactionRows<any, any>;
