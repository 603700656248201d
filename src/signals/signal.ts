import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { ExportTally, RecordFormat } from '../encoding/records.js';
import type { Compression, Format, SignalName } from '../layout/formats.js';

/**
 * A signal is a row: what is specific to metrics, spans or log records is reached through one
 * definition of this shape, and the pipeline, the budget, the spool, the uploader, the key layout
 * and the compaction plan know none of it (docs/architecture.md, "Adding a signal").
 */

export type { SignalName } from '../layout/formats.js';

/** A batch's columns as they cross to the body worker: typed arrays, moved by transfer. */
export interface TransferableColumns {
  /** Every ArrayBuffer of the columns, for postMessage's transfer list. */
  readonly transfer: ArrayBuffer[];
}

/**
 * The open batch of a Parquet format: column builders that exports are appended to, whose bytes
 * are their real sizes, capacity included.
 */
export interface ColumnBuilders<Item> {
  /** Items (rows) appended since the last seal. */
  readonly rows: number;
  /** Memory the builders hold now, capacity included. */
  readonly bytes: number;
  /**
   * Appends all of the export or none of it (an append that throws leaves the builders as they
   * were), counting its items (and times) into `tally`: the one walk of an export.
   */
  append(item: Item, tally: ExportTally): void;
  /** Where the rows end now ... */
  mark(): unknown;
  /** ... and taking back every row appended since (the capacity the arrays grew to stays). */
  rollback(mark: unknown): void;
  /** Hands the columns over and starts empty again. */
  seal(): TransferableColumns;
}

/**
 * Where splitByResource() hands the parts of an export. An object with a method, not a function:
 * a method's parameter is compared bivariantly, as every other use of a signal's item type here
 * is, so a SignalExport<ResourceMetrics> still serves where a SignalExport<never> is asked for (a
 * callback's parameter would make SignalExport covariant in its item).
 */
export interface PartSink<Item> {
  part(part: Item): void;
}

/** What an exporter needs of its signal, on the service's thread. */
export interface SignalExport<Item> {
  readonly name: SignalName;
  /**
   * Each export repeats the last one's items (metrics: every series, each collection), so an
   * object's compression gains from a window that still holds the last export (zstd's window is
   * sized to it: recordWindowLog in compressors.js). Spans and log records are new each export.
   */
  readonly recordsRepeat: boolean;
  /** How each format's exports become records (Parquet: its fallback's, OTLP/JSON). */
  readonly records: Readonly<Record<Format, RecordFormat<Item>>>;
  /**
   * Hands `sink` the export in parts of one resource each, in the order of their first item: the
   * export itself (no copy) when all of it is of one resource, as a metrics export always is;
   * nothing for an export with nothing to write (no spans, no log records, no data points). A
   * part is an export of its own (records, tally), so that objects keyed by a resource attribute
   * ({service.name}) hold that resource's items only.
   */
  splitByResource(item: Item, sink: PartSink<Item>): void;
  /**
   * The resource attributes of an export of one resource (a part from splitByResource), for the
   * key template's attribute tokens.
   */
  resourceAttributes(item: Item): Readonly<Record<string, unknown>>;
  /** The Parquet column builders, loaded on first use (a service that exports OTLP never loads them). */
  loadColumns(): Promise<() => ColumnBuilders<Item>>;
  /**
   * Sealed columns as OTLP/JSON records, when their Parquet file cannot be made: what the file
   * would have given a reader.
   */
  columnsAsRecords(columns: TransferableColumns): Promise<Buffer[]>;
}

/** Reading an object back: its decompression budget and the reader's decompress(). */
export interface DecodeContext {
  /** Decompress within `maxBytes` (ObjectTooLargeError past it). */
  decompress(compression: Compression, bytes: Uint8Array, maxBytes: number): Buffer;
  maxDecompressedBytes: number;
  /**
   * Only this trace's items are wanted (lower-case hex): a Parquet object of spans or log
   * records decodes only the row groups that may hold it. Other formats ignore it (the reader
   * keeps the trace's items of every object).
   */
  traceId?: string;
}

/** A stored object, outer compression removed, back into its request (OTLP/JSON object shape). */
export interface Decoder {
  decode(raw: Buffer, context: DecodeContext): OtlpObject | Promise<OtlpObject>;
  /** decode() answers at once, so decodeStoredObject() can read this format. */
  synchronous: boolean;
}

/** What the reader needs of a signal. */
export interface SignalRead {
  readonly name: SignalName;
  readonly decoders: Readonly<Record<Format, Decoder>>;
}
