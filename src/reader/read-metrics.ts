import { zstdEngine } from '../compression/zstd-engine.js';
import { decodeStoredObjectAsync, ObjectDecodeError } from './decode-object.js';
import { ReadAccessError } from './errors.js';
import { inRange } from './in-range.js';
import type {
  MetricObject,
  MetricStream,
  ObjectInfo,
  ReadStats,
  UnreadableObject,
} from './metric-types.js';
import { PARQUET_PARTS_BYTES } from './parquet-parts.js';
import {
  ObjectTooLargeError,
  type ReadLimitOptions,
  type ReadLimits,
  resolveReadLimits,
} from './read-limits.js';
import {
  type ListMetricObjectsOptions,
  openSource,
  resolveConcurrency,
  resolveRange,
} from './read-options.js';
import { PartError, readParts } from './read-parts.js';
import type { ObjectSource } from './source.js';

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
            const refused = inParts(info) ? undefined : refuseUnread(info, limits);
            const bytes = inParts(info)
              ? Promise.resolve(IN_PARTS)
              : refused === undefined
                ? fetchObject(source, info, signal, limits.maxObjectBytes)
                : Promise.resolve(refused);
            window.push({ info, bytes });
          }
        }
        const head = window.shift();
        if (head === undefined) return;
        const fetched = await head.bytes;
        if ('parts' in fetched) {
          try {
            for await (const part of readParts(source, head.info, limits, signal)) {
              const { request, rawBytes, footer, index, count } = part;
              stats.rawBytesRead += rawBytes;
              if (index === count - 1) stats.objectsRead++;
              yield { ...head.info, request, bytes: footer, rawBytes, part: { index, count } };
            }
          } catch (error) {
            if (!(error instanceof PartError)) throw error;
            stats.objectsUnreadable++;
            options.onError?.({ ...head.info, stage: error.stage, error: error.cause as Error });
          }
          continue;
        }
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

type Fetched = { bytes: Uint8Array } | UnreadableObject | typeof IN_PARTS;
/** In the window for an object read in parts: nothing is fetched ahead for it. */
const IN_PARTS = { parts: true } as const;
const inParts = (info: ObjectInfo) =>
  info.encoding.format === 'parquet' && info.size > PARQUET_PARTS_BYTES;

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

/** What reading one object came to: its request, or why there is none. */
type Outcome = MetricObject | UnreadableObject;

async function decode(info: ObjectInfo, bytes: Uint8Array, limits: ReadLimits): Promise<Outcome> {
  try {
    const { request, rawBytes } = await decodeStoredObjectAsync(info.key, bytes, limits);
    return { ...info, request, bytes, rawBytes };
  } catch (error) {
    const stage = error instanceof ObjectDecodeError ? error.stage : 'decode';
    return { ...info, stage, error: asError(error) };
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
