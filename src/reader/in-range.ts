import { compareKeys, isPastRange, type KeyRange } from '../layout/listing-range.js';
import { InconsistentOutputError, OutOfPlaceOutputError } from './compacted.js';
import type { KeyLayout, LayoutHint } from './key-layout.js';
import type { ObjectInfo, ReadStats } from './metric-types.js';
import { ObjectTooLargeError, type ReadLimits } from './read-limits.js';
import type { ResolvedRange } from './read-options.js';
import { type ListedObject, withoutReplaced } from './replaced-inputs.js';
import type { ObjectSource } from './source.js';

/** How many other prefixes (and other layouts) holding objects a listing reports. */
const MAX_OTHER_PREFIXES = 5;
/** How many keys out of the layout are looked into for where they would be read. */
const KEYS_EXAMINED = 1000;

/**
 * The objects of the range, as listed: keys in the layout, without those a compaction output
 * replaces, with a time in [from, to). Outputs' footers are read within `limits`.
 */
export async function* inRange(
  source: ObjectSource,
  range: ResolvedRange,
  signal: AbortSignal,
  stats: ReadStats,
  limits: ReadLimits,
): AsyncGenerator<ObjectInfo> {
  const from = range.from?.getTime() ?? Number.NEGATIVE_INFINITY;
  const to = range.to?.getTime() ?? Number.POSITIVE_INFINITY;
  const listed = inLayout(source, range, signal, stats);
  const onReplaced = () => stats.objectsReplaced++;
  for await (const object of withoutReplaced(listed, source, signal, onReplaced, {
    parse: (key) => range.layout.parse(key),
    otherSignal: (key) => range.layout.otherSignal(key),
    limits,
  })) {
    const { key, size, parsed, footerError, replacedSeals } = object;
    const time = parsed.sealedAt.getTime();
    if (replacedSeals !== undefined) {
      // A compaction output is read when the range holds an object it replaces, as that object
      // would have been: the same points before and after a compaction.
      if (!replacedSeals.some((t) => t >= from && t < to)) continue;
    } else {
      // An output whose list is unknown (its footer unread: reported, not read) spans its hour's
      // start to its own time.
      const start = parsed.compacted === true ? (parsed.partition?.start.getTime() ?? time) : time;
      if (time < from || start >= to) continue;
    }
    stats.objects++;
    stats.bytes += size;
    const info: ObjectInfo = {
      key,
      signal: parsed.signal,
      time: parsed.sealedAt,
      size,
      encoding: parsed.encoding,
      attributes: parsed.attributes,
    };
    if (footerError !== undefined) footerErrors.set(info, footerError);
    yield info;
  }
}

/** Outputs whose footer could not be read while listing (ListedObject.footerError). */
const footerErrors = new WeakMap<ObjectInfo, Error>();

/**
 * Why a listed compaction output must not be read: its footer could not be read when its hour
 * was listed, so the objects it replaces were not skipped. Read now, it would count them twice.
 */
export function unreadOutputError(info: ObjectInfo): Error | undefined {
  const cause = footerErrors.get(info);
  if (cause === undefined) return undefined;
  if (cause instanceof InconsistentOutputError || cause instanceof OutOfPlaceOutputError) {
    return new Error(`${cause.message}: the objects it replaces were read instead`, { cause });
  }
  // Over a limit of this read: read again, it is over it again.
  if (cause instanceof ObjectTooLargeError) {
    return new Error(`${cause.message}, so the objects it replaces were read instead`, { cause });
  }
  return new Error(
    `its footer could not be read when it was listed (${cause.message}), so the objects it ` +
      'replaces were read instead: read again for exact counts',
    { cause },
  );
}

/** The listed keys in the layout, from the hour that holds the range's start. */
async function* inLayout(
  source: ObjectSource,
  range: ResolvedRange,
  signal: AbortSignal,
  stats: ReadStats,
): AsyncGenerator<ListedObject> {
  const { layout } = range;
  for (const listing of layout.rangeWithOutputs(range.from, range.to)) {
    yield* listed(source, layout, listing, signal, stats);
  }
}

/** The keys of one listing in the layout (see inLayout). */
async function* listed(
  source: ObjectSource,
  layout: KeyLayout,
  listing: KeyRange,
  signal: AbortSignal,
  stats: ReadStats,
): AsyncGenerator<ListedObject> {
  const early = listing.outputsOnlyUntil;
  for await (const { key, size } of source.list(layout.prefix, listing.startAfter, signal)) {
    // Keys sort by partition: past the last one that can hold the range, none is in it.
    if (isPastRange(key, listing)) return;
    const parsed = layout.parse(key);
    if (listing.outputsOnly === true) {
      if (parsed?.compacted === true) yield { key, size, parsed };
      continue;
    }
    if (parsed === undefined) {
      if (layout.internal(key)) continue;
      // Another signal's object is in its own layout, not out of this one.
      const other = layout.otherSignal(key);
      if (other !== undefined) stats.otherSignals[other] = (stats.otherSignals[other] ?? 0) + 1;
      else skipped(layout, key, stats);
      continue;
    }
    // Listed early only for the compaction outputs of the range's first hour.
    if (early !== undefined && parsed.compacted !== true && compareKeys(key, early) <= 0) continue;
    yield { key, size, parsed };
  }
}

/** What the first keys under a prefix say about its layout (see sampleLayout). */
export interface LayoutSample
  extends Pick<ReadStats, 'keysSkipped' | 'otherPrefixes' | 'otherLayouts' | 'otherSignals'> {
  /** Keys looked at (the package's own bookkeeping not counted). */
  keys: number;
  /** True when a key in the layout was found (the sample then stops). */
  inLayout: boolean;
  /** The sample stopped at its bound with more keys to list. */
  truncated: boolean;
}

/**
 * The first keys under the prefix, whatever the time range, up to `maxKeys` or the first key in
 * the layout: for a range that found nothing, whether the prefix holds any object of this
 * layout at all, and if not, where its keys would be read (the same hints as an unbounded
 * listing). One listing request for up to 1000 keys.
 */
export async function sampleLayout(
  source: ObjectSource,
  layout: KeyLayout,
  signal: AbortSignal,
  maxKeys = 1000,
): Promise<LayoutSample> {
  const sample: LayoutSample = {
    keys: 0,
    inLayout: false,
    truncated: false,
    keysSkipped: 0,
    otherPrefixes: [],
    otherLayouts: [],
    otherSignals: {},
  };
  for await (const { key } of source.list(layout.prefix, undefined, signal)) {
    if (layout.internal(key)) continue;
    if (sample.keys === maxKeys) {
      sample.truncated = true;
      break;
    }
    sample.keys++;
    if (layout.parse(key) !== undefined) {
      sample.inLayout = true;
      break;
    }
    const other = layout.otherSignal(key);
    if (other !== undefined) sample.otherSignals[other] = (sample.otherSignals[other] ?? 0) + 1;
    else skipped(layout, key, sample);
  }
  return sample;
}

/**
 * Counts a key out of the layout, and notes where such keys would be read. Only the first
 * KEYS_EXAMINED of them are looked into: a prefix shared with millions of other keys stays cheap.
 */
function skipped(
  layout: KeyLayout,
  key: string,
  stats: Pick<ReadStats, 'keysSkipped' | 'otherPrefixes' | 'otherLayouts'>,
): void {
  stats.keysSkipped++;
  if (stats.keysSkipped > KEYS_EXAMINED) return;
  if (stats.otherPrefixes.length < MAX_OTHER_PREFIXES) {
    const other = layout.otherPrefix(key);
    if (other !== undefined && !stats.otherPrefixes.includes(other))
      stats.otherPrefixes.push(other);
  }
  if (stats.otherLayouts.length < MAX_OTHER_PREFIXES) {
    const hint = layout.hint(key);
    const same = (h: LayoutHint) => h.format === hint?.format && h.filePrefix === hint?.filePrefix;
    if (hint !== undefined && !stats.otherLayouts.some(same)) stats.otherLayouts.push(hint);
  }
}
