import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { ObjectEncoding, SignalName } from '../layout/formats.js';
import type { LayoutHint } from './key-layout.js';

/** A stored object in the range, as listed. */
export interface ObjectInfo {
  key: string;
  /**
   * What it holds: `metrics` (an ExportMetricsServiceRequest), `traces` (spans, an
   * ExportTraceServiceRequest) or `logs` (log records, an ExportLogsServiceRequest).
   */
  signal: SignalName;
  /**
   * The object's time: the millisecond timestamp of the UUIDv7 in its name, when its batch was
   * sealed. It is what `from` and `to` select on, whatever partition (partitionTime 'data',
   * partitionTimeZone 'local') the key is filed under, as far as the listing reaches: with
   * partitionTime 'data' it starts maxBatchAgeMillis + exportIntervalMillis + 1 min before
   * `from`, and an object filed earlier (its data older than that when sealed) is not listed.
   */
  time: Date;
  /** Stored (compressed) bytes. */
  size: number;
  encoding: ObjectEncoding;
  /** Values of the key template's resource-attribute tokens, e.g. `{ 'service.name': 'checkout' }`. */
  attributes: Record<string, string>;
}

/** A stored object, fetched and decoded. */
export interface StoredObject extends ObjectInfo {
  /**
   * Its request (ExportMetricsServiceRequest, ExportTraceServiceRequest or
   * ExportLogsServiceRequest, as `signal` says), in the OTLP/JSON object shape whatever the format.
   */
  request: OtlpObject;
  /**
   * The bytes as stored; for a part, the file's footer (its last bytes: the object is never held
   * whole).
   */
  bytes: Uint8Array;
  /** Bytes after decompression. */
  rawBytes: number;
  /**
   * Set when the object comes in parts: a Parquet object larger than PARQUET_PARTS_BYTES (a
   * compaction output) is read one row group at a time, each yielded as its own object with
   * the object's key, time and size.
   */
  part?: { index: number; count: number };
}

/** A stored object of metrics, as readMetrics() yields it. */
export type MetricObject = StoredObject;

/** An object that could not be read: it is skipped and counted, and reading goes on. */
export interface UnreadableObject extends ObjectInfo {
  /** What failed: GetObject (or reading the file), decompression, or decoding the request. */
  stage: 'fetch' | 'decompress' | 'decode';
  error: Error;
}

/** Counters of one listing or read, updated as it goes. */
export interface ReadStats {
  /** Objects in the range: in the layout, under the prefix, with a time in [from, to). */
  objects: number;
  /** Their stored bytes, as listed. */
  bytes: number;
  /**
   * Keys listed under the prefix that are not in the configured layout (another keyTemplate,
   * filePrefix, an unknown extension, or under a deeper prefix): skipped.
   */
  keysSkipped: number;
  /**
   * Up to 5 other prefixes whose keys are in the layout: where the objects are if `prefix` is
   * too short, or too long (`prod/traces`, the table folder of spans' Parquet files under `prod`).
   */
  otherPrefixes: string[];
  /**
   * Up to 5 layouts under which skipped keys are objects of this package: the options that
   * would read them (another format's default layout, another filePrefix).
   */
  otherLayouts: LayoutHint[];
  /**
   * Keys under the prefix of objects of the signals not read (`traces_` and `logs_` objects when
   * reading metrics), by signal: not read, and not counted in keysSkipped.
   */
  otherSignals: Partial<Record<SignalName, number>>;
  /** Objects fetched and decoded (when reading, not when listing). */
  objectsRead: number;
  /** Their bytes after decompression. */
  rawBytesRead: number;
  /** Objects that could not be fetched or decoded, skipped (when reading, not when listing). */
  objectsUnreadable: number;
  /**
   * Objects skipped because a compaction output in the range holds their points (an output and
   * the objects it replaces both exist until the compactor deletes them; OTLP ones are kept).
   */
  objectsReplaced: number;
}

/** What the listing and reading functions return: iterate it once; `stats` is live. */
export interface ObjectStream<T> extends AsyncIterable<T> {
  readonly stats: Readonly<ReadStats>;
}

/** What listMetricObjects and readMetrics return (an ObjectStream). */
export type MetricStream<T> = ObjectStream<T>;
