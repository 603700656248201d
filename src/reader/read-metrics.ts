import { InvalidOptionError } from '../base/invalid-option.js';
import { zstdEngine } from '../compression/zstd-engine.js';
import { READ_DEFAULTS } from '../config/options.js';
import { SIGNAL_NAMES, type SignalName } from '../layout/formats.js';
import { decodeForTrace, decodeStoredObjectAsync, ObjectDecodeError } from './decode-object.js';
import { ReadAccessError, readFailure } from './errors.js';
import { inRange, type LayoutSample, sampleLayout, unreadOutputError } from './in-range.js';
import type {
  MetricObject,
  MetricStream,
  ObjectInfo,
  ObjectStream,
  ReadStats,
  StoredObject,
  UnreadableObject,
} from './metric-types.js';
import { resolveTraceId } from './only-trace.js';
import { openSource } from './open-source.js';
import { readInParts } from './parquet-parts.js';
import {
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  ObjectTooLargeError,
  type ReadLimitOptions,
  type ReadLimits,
  resolveReadLimits,
} from './read-limits.js';
import {
  type ListMetricObjectsOptions,
  type ListObjectsOptions,
  resolveConcurrency,
  resolveRange,
} from './read-options.js';
import { PartError, readParts } from './read-parts.js';
import type { ObjectSource } from './source.js';

// Every type of the objects read and listed, as this module's own.
export type * from './metric-types.js';

/** The options of every reading function (readMetrics, readSpans, readLogRecords, ...). */
export type ReadObjectsOptions = ListObjectsOptions &
  ReadLimitOptions & {
    /**
     * Objects fetched at once (1-64). Default 32. However many, the objects fetched ahead hold
     * at most 32 MiB as listed, or are one object.
     */
    concurrency?: number;
    /**
     * Called for each object that cannot be read (GetObject failed, over a size limit, bad
     * compression, no zstd engine, bad JSON or protobuf, a request nested too deep or with
     * impossible times; ObjectGoneError: deleted since it was listed, by a compaction running
     * while this read does); the object is skipped and counted in `stats.objectsUnreadable`.
     * Access errors (credentials, permissions, missing bucket) are not reported here: they end
     * the iteration with a ReadAccessError.
     */
    onError?: (problem: UnreadableObject) => void;
    /**
     * Only the spans and log records of this trace (32 hex digits, either case): each object's
     * request holds that trace's items only (none, for an object without them). A Parquet
     * object decodes only the row groups whose `TraceId` statistics or bloom filter may hold
     * it, and one read in parts fetches only those. Metrics' objects are read whole, as without it.
     */
    traceId?: string;
  };

/** The options of readMetrics (a ReadObjectsOptions). */
export type ReadMetricsOptions = ReadObjectsOptions;

/** Which signals listStoredObjects() and readStoredObjects() read. */
export interface SignalsOption {
  /** Default: all three, `['metrics', 'traces', 'logs']`. */
  signals?: readonly SignalName[];
}

/** The listing and the reading function of one signal's objects. */
function signalFunctions(signal: SignalName) {
  return {
    list: (options: ListObjectsOptions): ObjectStream<ObjectInfo> =>
      listObjectsOf([signal], options),
    read: (options: ReadObjectsOptions): ObjectStream<StoredObject> =>
      readObjectsOf([signal], options),
  };
}
const metrics = signalFunctions('metrics');
const traces = signalFunctions('traces');
const logs = signalFunctions('logs');

/**
 * The objects whose time (seal time) is in [from, to), in key order (which is time order within
 * a partition), with their sizes. When the key template starts with time tokens, only the
 * partitions that can hold the range are listed; otherwise everything under the prefix is.
 */
export const listMetricObjects: (options: ListMetricObjectsOptions) => MetricStream<ObjectInfo> =
  metrics.list;

/** As listMetricObjects, for the objects of spans (`traces_` in their names). */
export const listSpanObjects: (options: ListObjectsOptions) => ObjectStream<ObjectInfo> =
  traces.list;

/** As listMetricObjects, for the objects of log records (`logs_` in their names). */
export const listLogRecordObjects: (options: ListObjectsOptions) => ObjectStream<ObjectInfo> =
  logs.list;

/**
 * Reads and decodes the objects whose time is in [from, to), yielding them in key order.
 * Up to `concurrency` objects are fetched at once, of at most 32 MiB together as listed (or
 * one larger object), and no new fetch starts while the caller holds a yielded object; only
 * the yielded object is decompressed (at most `maxDecompressedBytes`) and decoded, however long
 * the range. Unreadable objects go to `onError` and are skipped; access errors throw a
 * ReadAccessError; an abort throws the signal's reason.
 */
export const readMetrics: (options: ReadMetricsOptions) => MetricStream<MetricObject> =
  metrics.read;

/**
 * As readMetrics, for spans: each object's `request` is an ExportTraceServiceRequest (spanRows()
 * flattens it).
 */
export const readSpans: (options: ReadObjectsOptions) => ObjectStream<StoredObject> = traces.read;

/**
 * As readMetrics, for log records: each object's `request` is an ExportLogsServiceRequest
 * (logRecordRows() flattens it).
 */
export const readLogRecords: (options: ReadObjectsOptions) => ObjectStream<StoredObject> =
  logs.read;

/**
 * As listMetricObjects, for the objects of several signals in one listing (in key order); each
 * says its `signal`.
 */
export function listStoredObjects(
  options: ListObjectsOptions & SignalsOption,
): ObjectStream<ObjectInfo> {
  return listObjectsOf(resolveSignals(options.signals), options);
}

/**
 * As readMetrics, for the objects of several signals in one listing (in key order): each says
 * its `signal`, which tells what its `request` is.
 */
export function readStoredObjects(
  options: ReadObjectsOptions & SignalsOption,
): ObjectStream<StoredObject> {
  return readObjectsOf(resolveSignals(options.signals), options);
}

/** The objects of `signals` in the range, as listed. */
export function listObjectsOf(
  signals: readonly SignalName[],
  options: ListObjectsOptions,
): ObjectStream<ObjectInfo> {
  return listedStream(
    options,
    resolveRange(options, signals),
    LISTING_LIMITS,
    (listing) => listing,
  );
}

/**
 * A listing's limits on outputs' footers, where no limits are given: what the reader's defaults
 * read, and a file of any size (an output is read a row group at a time).
 */
const LISTING_LIMITS: ReadLimits = {
  maxObjectBytes: Number.MAX_SAFE_INTEGER,
  maxDecompressedBytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
};

/**
 * A stream, iterable once, over what `run` makes of the listing of `range`: the source is opened when the iteration starts, and when it ends (done, broken off,
 * failed) the listing is aborted and returned and the source closed.
 */
function listedStream<T>(
  options: ListObjectsOptions,
  range: ReturnType<typeof resolveRange>,
  limits: ReadLimits,
  run: (
    listing: AsyncGenerator<ObjectInfo>,
    source: ObjectSource,
    signal: AbortSignal,
    stats: ReadStats,
  ) => AsyncIterable<T>,
): ObjectStream<T> {
  const stats = emptyStats();
  return singleUse(stats, async function* () {
    const source = openSource(options);
    const controller = new AbortController();
    const signal = linked(options.signal, controller.signal);
    const listing = inRange(source, range, signal, stats, limits);
    try {
      yield* run(listing, source, signal, stats);
    } finally {
      controller.abort();
      await listing.return(undefined);
      source.close();
    }
  });
}

/**
 * The first keys under the prefix, whatever the options' time range (up to `maxKeys`, or the first
 * key in the layout): for a range that listed nothing, whether the prefix holds objects of this
 * layout at all, and where its other keys would be read.
 */
export async function sampleKeyLayout(
  options: ListMetricObjectsOptions,
  maxKeys = 1000,
  signals: readonly SignalName[] = ['metrics'],
): Promise<LayoutSample> {
  const { layout } = resolveRange({ ...options, from: undefined, to: undefined }, signals);
  const source = openSource(options);
  const controller = new AbortController();
  try {
    return await sampleLayout(source, layout, linked(options.signal, controller.signal), maxKeys);
  } finally {
    controller.abort();
    source.close();
  }
}

/** The objects of `signals` in the range, read (see readMetrics). */
export function readObjectsOf(
  signals: readonly SignalName[],
  options: ReadObjectsOptions,
): ObjectStream<StoredObject> {
  const range = resolveRange(options, signals);
  const concurrency = resolveConcurrency(options.concurrency);
  const limits = resolveReadLimits(options);
  const traceId = resolveTraceId(options.traceId);
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new TypeError('otel-s3-exporter: onError must be a function');
  }
  return listedStream(options, range, limits, async function* (listing, source, signal, stats) {
    const window: { info: ObjectInfo; bytes: Promise<Fetched>; ahead: number }[] = [];
    let aheadBytes = 0;
    /** Listed, not yet in the window: it waits for the window's bytes to leave it room. */
    let waiting: ObjectInfo | undefined;
    let listed = false;
    for (;;) {
      signal.throwIfAborted();
      while (!listed && window.length < concurrency) {
        if (waiting === undefined) {
          const next = await listing.next();
          if (next.done === true) {
            listed = true;
            break;
          }
          waiting = next.value;
        }
        const info = waiting;
        const unread = unreadOutputError(info);
        const refused =
          unread !== undefined
            ? { ...info, stage: 'fetch' as const, error: unread }
            : inParts(info)
              ? undefined
              : refuseUnread(info, limits);
        const ahead = refused === undefined && !inParts(info) ? info.size : 0;
        if (ahead > 0 && window.length > 0 && aheadBytes + ahead > READ_DEFAULTS.readAheadBytes)
          break;
        waiting = undefined;
        // An output read as well as the inputs its unread footer lists would count twice.
        const bytes =
          refused !== undefined
            ? Promise.resolve(refused)
            : inParts(info)
              ? Promise.resolve(IN_PARTS)
              : fetchObject(source, info, signal, limits.maxObjectBytes);
        aheadBytes += ahead;
        window.push({ info, bytes, ahead });
      }
      const head = window.shift();
      if (head === undefined) return;
      aheadBytes -= head.ahead;
      const fetched = await head.bytes;
      if ('parts' in fetched) {
        try {
          let parts = 0;
          for await (const part of readParts(source, head.info, limits, signal, traceId)) {
            const { request, rawBytes, footer, index, count } = part;
            parts++;
            stats.rawBytesRead += rawBytes;
            if (index === count - 1) stats.objectsRead++;
            yield { ...head.info, request, bytes: footer, rawBytes, part: { index, count } };
          }
          // A file of no row groups is read too: it holds nothing (read whole, an empty request).
          if (parts === 0) stats.objectsRead++;
        } catch (error) {
          if (!(error instanceof PartError)) throw error;
          stats.objectsUnreadable++;
          options.onError?.({ ...head.info, stage: error.stage, error: error.cause as Error });
        }
        continue;
      }
      // Decoded only now, so the window holds compressed bytes, not decoded requests.
      const outcome =
        'bytes' in fetched ? await decode(head.info, fetched.bytes, limits, traceId) : fetched;
      if ('request' in outcome) {
        stats.objectsRead++;
        stats.rawBytesRead += outcome.rawBytes;
        yield outcome;
      } else {
        stats.objectsUnreadable++;
        options.onError?.(outcome);
      }
    }
  });
}

type Fetched = { bytes: Uint8Array } | UnreadableObject | typeof IN_PARTS;
/** In the window for an object read in parts: nothing is fetched ahead for it. */
const IN_PARTS = { parts: true } as const;
/** A large Parquet file (a compaction output, say) of any signal is read a row group at a time. */
const inParts = (info: ObjectInfo) => readInParts(info.encoding.format, info.size);

/** Why an object is skipped without downloading it: too large as listed, or no zstd engine. */
function refuseUnread(info: ObjectInfo, limits: ReadLimits): UnreadableObject | undefined {
  if (info.size > limits.maxObjectBytes) {
    const error = new ObjectTooLargeError('maxObjectBytes', limits.maxObjectBytes, info.size);
    return { ...info, stage: 'fetch', error };
  }
  if (info.encoding.compression === 'zstd') {
    const engine = zstdEngine();
    if (engine instanceof Error) {
      const error = new ObjectDecodeError(info.key, 'decompress', engine.message, engine);
      return { ...info, stage: 'decompress', error };
    }
  }
  return undefined;
}

/** Fetches one object; rejects only for access errors and aborts, which end the read. */
function fetchObject(
  source: ObjectSource,
  info: ObjectInfo,
  signal: AbortSignal,
  maxBytes: number,
): Promise<Fetched> {
  const fetched = source.get(info.key, signal, maxBytes).then(
    (bytes) => ({ bytes }),
    (error: unknown): UnreadableObject => {
      if (signal.aborted) throw signal.reason;
      if (error instanceof ReadAccessError) throw error;
      return { ...info, stage: 'fetch', error: readFailure(error) };
    },
  );
  // Handled now, awaited later: a rejection before this reaches the head is not "unhandled".
  fetched.catch(() => {});
  return fetched;
}

function decode(
  info: ObjectInfo,
  bytes: Uint8Array,
  limits: ReadLimits,
  traceId: string | undefined,
): Promise<StoredObject | UnreadableObject> {
  const options = { maxDecompressedBytes: limits.maxDecompressedBytes, signal: info.signal };
  const decoded =
    traceId === undefined
      ? decodeStoredObjectAsync(info.key, bytes, options)
      : decodeForTrace(info.key, bytes, options, traceId);
  return decoded.then(
    ({ request, rawBytes }): StoredObject => ({ ...info, request, bytes, rawBytes }),
    (error: unknown): UnreadableObject => ({
      ...info,
      stage: error instanceof ObjectDecodeError ? error.stage : 'decode',
      error: asError(error),
    }),
  );
}

function singleUse<T>(stats: ReadStats, run: () => AsyncGenerator<T>): ObjectStream<T> {
  let started = false;
  return {
    stats,
    [Symbol.asyncIterator]() {
      if (started)
        throw new Error('otel-s3-exporter: a stream of objects can be iterated only once');
      started = true;
      return run();
    },
  };
}

function emptyStats(): ReadStats {
  return {
    objects: 0,
    bytes: 0,
    keysSkipped: 0,
    otherPrefixes: [],
    otherLayouts: [],
    otherSignals: {},
    objectsRead: 0,
    rawBytesRead: 0,
    objectsUnreadable: 0,
    objectsReplaced: 0,
  };
}

function linked(outer: AbortSignal | undefined, inner: AbortSignal): AbortSignal {
  return outer === undefined ? inner : AbortSignal.any([outer, inner]);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The `signals` option checked: a non-empty list of signal names, each once. */
function resolveSignals(value: unknown): SignalName[] {
  if (value === undefined) return [...SIGNAL_NAMES];
  const allowed = `a non-empty list of ${SIGNAL_NAMES.map((s) => `'${s}'`).join(', ')}`;
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidOptionError('signals', value, allowed);
  }
  for (const signal of value) {
    if (!SIGNAL_NAMES.includes(signal as SignalName)) {
      throw new InvalidOptionError('signals', value, allowed);
    }
  }
  // In the table's order, each once.
  return SIGNAL_NAMES.filter((signal) => value.includes(signal));
}
