import { zstdEngine } from '../compression/zstd-engine.js';
import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { ObjectEncoding } from '../formats.js';
import { decodeStoredObjectAsync, ObjectDecodeError } from './decode-object.js';
import { ReadAccessError } from './errors.js';
import type { KeyLayout, LayoutHint } from './key-layout.js';
import { compareKeys, isPastRange } from './listing-range.js';
import {
  ObjectTooLargeError,
  type ReadLimitOptions,
  type ReadLimits,
  resolveReadLimits,
} from './read-limits.js';
import {
  type ListMetricObjectsOptions,
  openSource,
  type ResolvedRange,
  resolveConcurrency,
  resolveRange,
} from './read-options.js';
import { type ListedObject, withoutReplaced } from './replaced-inputs.js';
import type { ObjectSource } from './source.js';

/** A stored object in the range, as listed. */
export interface ObjectInfo {
  key: string;
  /**
   * The object's time: the millisecond timestamp of the UUIDv7 in its name, when its batch was
   * sealed. It is what `from` and `to` select on, whatever partition (partitionTime 'data',
   * partitionTimeZone 'local') the key is filed under.
   */
  time: Date;
  /** Stored (compressed) bytes. */
  size: number;
  encoding: ObjectEncoding;
  /** Values of the key template's resource-attribute tokens, e.g. `{ 'service.name': 'checkout' }`. */
  attributes: Record<string, string>;
}

/** A stored object, fetched and decoded. */
export interface MetricObject extends ObjectInfo {
  /** The ExportMetricsServiceRequest, in the OTLP/JSON object shape whatever the format. */
  request: OtlpObject;
  /** The bytes as stored. */
  bytes: Uint8Array;
  /** Bytes after decompression. */
  rawBytes: number;
}

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
  /** Up to 5 deeper prefixes whose keys are in the layout: where the objects are if `prefix` is too short. */
  otherPrefixes: string[];
  /**
   * Up to 5 layouts under which skipped keys are objects of this package: the options that
   * would read them (another format's default layout, another filePrefix).
   */
  otherLayouts: LayoutHint[];
  /** Objects fetched and decoded (readMetrics only). */
  objectsRead: number;
  /** Their bytes after decompression. */
  rawBytesRead: number;
  /** Objects that could not be fetched or decoded, skipped (readMetrics only). */
  objectsUnreadable: number;
  /**
   * Objects skipped because a compaction output in the range holds their points (an output and
   * the objects it replaces both exist until the compactor deletes them; OTLP ones are kept).
   */
  objectsReplaced: number;
}

/** What listMetricObjects and readMetrics return: iterate it once; `stats` is live. */
export interface MetricStream<T> extends AsyncIterable<T> {
  readonly stats: Readonly<ReadStats>;
}

export type ReadMetricsOptions = ListMetricObjectsOptions &
  ReadLimitOptions & {
    /** Objects fetched at once, and so the most held in memory at once (1-64). Default 8. */
    concurrency?: number;
    /**
     * Called for each object that cannot be read (GetObject failed, over a size limit, bad
     * compression, no zstd engine, bad JSON or protobuf, a request nested too deep or with
     * impossible times); the object is skipped and counted in `stats.objectsUnreadable`.
     * Access errors (credentials, permissions, missing bucket) are not reported here: they end
     * the iteration with a ReadAccessError.
     */
    onError?: (problem: UnreadableObject) => void;
  };

/**
 * The objects whose time (seal time) is in [from, to), in key order (which is time order within
 * a partition), with their sizes. When the key template starts with time tokens, only the
 * partitions that can hold the range are listed; otherwise everything under the prefix is.
 */
export function listMetricObjects(options: ListMetricObjectsOptions): MetricStream<ObjectInfo> {
  const range = resolveRange(options);
  const stats = emptyStats();
  return singleUse(stats, async function* () {
    const source = openSource(options);
    const controller = new AbortController();
    const signal = linked(options.signal, controller.signal);
    try {
      yield* inRange(source, range, signal, stats);
    } finally {
      controller.abort();
      source.close();
    }
  });
}

/**
 * Reads and decodes the objects whose time is in [from, to), yielding them in key order.
 * Up to `concurrency` objects are fetched at once, and no new fetch starts while the caller
 * holds a yielded object, so at most `concurrency` objects of at most `maxObjectBytes` are in
 * memory, and one decompressed (at most `maxDecompressedBytes`) and decoded, however long the
 * range. Unreadable objects go to `onError` and are skipped; access errors throw a
 * ReadAccessError; an abort throws the signal's reason.
 */
export function readMetrics(options: ReadMetricsOptions): MetricStream<MetricObject> {
  const range = resolveRange(options);
  const concurrency = resolveConcurrency(options.concurrency);
  const limits = resolveReadLimits(options);
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new TypeError('otel-s3-exporter: onError must be a function');
  }
  const stats = emptyStats();
  return singleUse(stats, async function* () {
    const source = openSource(options);
    const controller = new AbortController();
    const signal = linked(options.signal, controller.signal);
    const listing = inRange(source, range, signal, stats);
    const window: { info: ObjectInfo; bytes: Promise<Fetched> }[] = [];
    let listed = false;
    try {
      for (;;) {
        signal.throwIfAborted();
        while (!listed && window.length < concurrency) {
          const next = await listing.next();
          if (next.done === true) listed = true;
          else {
            const info = next.value;
            const refused = refuseUnread(info, limits);
            const bytes =
              refused === undefined
                ? fetchObject(source, info, signal, limits.maxObjectBytes)
                : Promise.resolve(refused);
            window.push({ info, bytes });
          }
        }
        const head = window.shift();
        if (head === undefined) return;
        const fetched = await head.bytes;
        // Decoded only now, so the window holds compressed bytes, not decoded requests.
        const outcome =
          'bytes' in fetched ? await decode(head.info, fetched.bytes, limits) : fetched;
        if ('request' in outcome) {
          stats.objectsRead++;
          stats.rawBytesRead += outcome.rawBytes;
          yield outcome;
        } else {
          stats.objectsUnreadable++;
          options.onError?.(outcome);
        }
      }
    } finally {
      controller.abort();
      await listing.return(undefined);
      source.close();
    }
  });
}

/** How many deeper prefixes (and other layouts) holding objects a listing reports. */
const MAX_OTHER_PREFIXES = 5;
/** How many keys out of the layout are looked into for where they would be read. */
const KEYS_EXAMINED = 1000;

type Fetched = { bytes: Uint8Array } | UnreadableObject;

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
      return { ...info, stage: 'fetch', error: asError(error) };
    },
  );
  // Handled now, awaited later: a rejection before this reaches the head is not "unhandled".
  fetched.catch(() => {});
  return fetched;
}

async function decode(
  info: ObjectInfo,
  bytes: Uint8Array,
  limits: ReadLimits,
): Promise<MetricObject | UnreadableObject> {
  try {
    const { request, rawBytes } = await decodeStoredObjectAsync(info.key, bytes, limits);
    return { ...info, request, bytes, rawBytes };
  } catch (error) {
    const stage = error instanceof ObjectDecodeError ? error.stage : 'decode';
    return { ...info, stage, error: asError(error) };
  }
}

async function* inRange(
  source: ObjectSource,
  range: ResolvedRange,
  signal: AbortSignal,
  stats: ReadStats,
): AsyncGenerator<ObjectInfo> {
  const from = range.from?.getTime() ?? Number.NEGATIVE_INFINITY;
  const to = range.to?.getTime() ?? Number.POSITIVE_INFINITY;
  const listed = inLayout(source, range, signal, stats);
  const onReplaced = () => stats.objectsReplaced++;
  for await (const { key, size, parsed } of withoutReplaced(listed, source, signal, onReplaced)) {
    const time = parsed.sealedAt.getTime();
    // A compaction output holds objects sealed from its hour's start to its own time.
    const start = parsed.compacted === true ? (parsed.partition?.start.getTime() ?? time) : time;
    if (time < from || start >= to) continue;
    stats.objects++;
    stats.bytes += size;
    yield {
      key,
      time: parsed.sealedAt,
      size,
      encoding: parsed.encoding,
      attributes: parsed.attributes,
    };
  }
}

/** The listed keys in the layout, from the hour that holds the range's start. */
async function* inLayout(
  source: ObjectSource,
  range: ResolvedRange,
  signal: AbortSignal,
  stats: ReadStats,
): AsyncGenerator<ListedObject> {
  const { layout } = range;
  const listing = layout.rangeWithOutputs(range.from, range.to);
  const early = listing.outputsOnlyUntil;
  for await (const { key, size } of source.list(layout.prefix, listing.startAfter, signal)) {
    // Keys sort by partition: past the last one that can hold the range, none is in it.
    if (isPastRange(key, listing)) return;
    const parsed = layout.parse(key);
    if (parsed === undefined) {
      if (!layout.internal(key)) skipped(layout, key, stats);
      continue;
    }
    // Listed early only for the compaction outputs of the range's first hour.
    if (early !== undefined && parsed.compacted !== true && compareKeys(key, early) <= 0) continue;
    yield { key, size, parsed };
  }
}

/**
 * Counts a key out of the layout, and notes where such keys would be read. Only the first
 * KEYS_EXAMINED of them are looked into: a prefix shared with millions of other keys stays cheap.
 */
function skipped(layout: KeyLayout, key: string, stats: ReadStats): void {
  stats.keysSkipped++;
  if (stats.keysSkipped > KEYS_EXAMINED) return;
  if (stats.otherPrefixes.length < MAX_OTHER_PREFIXES) {
    const other = layout.deeperPrefix(key);
    if (other !== undefined && !stats.otherPrefixes.includes(other))
      stats.otherPrefixes.push(other);
  }
  if (stats.otherLayouts.length < MAX_OTHER_PREFIXES) {
    const hint = layout.hint(key);
    const same = (h: LayoutHint) => h.format === hint?.format && h.filePrefix === hint?.filePrefix;
    if (hint !== undefined && !stats.otherLayouts.some(same)) stats.otherLayouts.push(hint);
  }
}

function singleUse<T>(stats: ReadStats, run: () => AsyncGenerator<T>): MetricStream<T> {
  let started = false;
  return {
    stats,
    [Symbol.asyncIterator]() {
      if (started) throw new Error('otel-s3-exporter: a metric stream can be iterated only once');
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
