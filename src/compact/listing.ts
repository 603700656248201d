import { signalOfKeyName } from '../layout/formats.js';
import { isPastRange, type KeyRange } from '../layout/listing-range.js';
import { decodeReplaces, REPLACES_KEY, replacedKeys } from '../reader/compacted.js';
import { ReadAccessError } from '../reader/errors.js';
import { type KeyLayout, resolveKeyLayout } from '../reader/key-layout.js';
import { openParquetParts } from '../reader/parquet-parts.js';
import {
  type KeyNames,
  type ListedObject,
  objectRanges,
  outOfPlaceError,
} from '../reader/replaced-inputs.js';
import type { ObjectSource } from '../reader/source.js';
import { skipRecordKey } from './bookkeeping.js';
import type { CompactionSettings } from './options.js';
import type { BadOutput, HourObjects, OutputInfo, SkippedObject } from './plan.js';

/**
 * The hours of a range as the compactor sees them: the objects of the input layout under the
 * prefix, and the outputs under the output prefix (and any under the input prefix), grouped by
 * the hour of their partition, with each output's footer and the hour's skip record read.
 * Listing and reading only: no writes.
 */

const HOUR = 3_600_000;
const MAX_SKIP_RECORD_BYTES = 16 * 1024 * 1024;

export interface ListingCounters {
  keysIgnored: number;
  /**
   * Of them, the keys in the signal's own directory (`traces/`, `logs/`), which no other
   * signal's run lists; the others (`year=…` under the prefix) every signal's run lists.
   */
  ownKeysIgnored?: number;
}

/**
 * The hours whose start is in [from, to) that `accept` takes, in time order. `accept` runs
 * before any footer is read, so hours of other shards cost nothing but their listing.
 */
export async function* listHours(
  settings: CompactionSettings,
  source: ObjectSource,
  range: { from: number; to: number },
  accept: (hour: number) => boolean,
  counters: ListingCounters,
  signal: AbortSignal,
): AsyncGenerator<HourObjects> {
  const inputs = hourGroups(settings, source, settings.layout, range, counters, signal);
  const outLayout =
    settings.outPrefix === settings.prefix
      ? undefined
      : resolveKeyLayout(
          settings.outPrefix,
          { format: 'parquet', filePrefix: settings.filePrefix },
          [settings.signal],
        );
  const outputs =
    outLayout === undefined
      ? undefined
      : hourGroups(settings, source, outLayout, range, undefined, signal);
  // Keys an output lists, as the reader parses them: the input layout's, else the outputs'.
  const names: KeyNames = {
    parse: (key) => settings.layout.parse(key) ?? outLayout?.parse(key),
    otherSignal: (key) => settings.layout.otherSignal(key),
  };
  let a = await inputs.next();
  let b = outputs === undefined ? undefined : await outputs.next();
  while (a.done !== true || (b !== undefined && b.done !== true)) {
    const hourA = a.done === true ? Number.POSITIVE_INFINITY : a.value.hour;
    const hourB = b === undefined || b.done === true ? Number.POSITIVE_INFINITY : b.value.hour;
    const hour = Math.min(hourA, hourB);
    const listed: ListedObject[] = [];
    if (hourA === hour && a.done !== true) {
      listed.push(...a.value.objects);
      a = await inputs.next();
    }
    if (hourB === hour && b !== undefined && b.done !== true) {
      // Under the output prefix only outputs count.
      listed.push(...b.value.objects.filter((o) => o.parsed.compacted === true));
      b = await (outputs as AsyncGenerator<Group>).next();
    }
    if (!accept(hour)) continue;
    yield await readHour(settings, source, new Date(hour), listed, names, signal);
  }
}

interface Group {
  hour: number;
  objects: ListedObject[];
}

/**
 * The hours whose start is in [from, to) that hold objects of the input layout, with how many:
 * from the listing alone (no footer is read). For the hours that have not settled yet.
 */
export async function* listedHours(
  settings: CompactionSettings,
  source: ObjectSource,
  range: { from: number; to: number },
  accept: (hour: number) => boolean,
  signal: AbortSignal,
): AsyncGenerator<{ hour: Date; objects: number }> {
  for await (const group of hourGroups(
    settings,
    source,
    settings.layout,
    range,
    undefined,
    signal,
  )) {
    if (accept(group.hour)) yield { hour: new Date(group.hour), objects: group.objects.length };
  }
}

/**
 * Listed keys in the layout, grouped by their partition's hour, in time order. Each narrow
 * listing of the layout (KeyLayout.ranges) gives its hours in order; an hour's objects may be in
 * several (spans' OTLP objects under `year=…`, their Parquet files under `traces/year=…`), so
 * the listings' hours are merged. Another signal's objects are not counted as keys out of the
 * layout, and passed over when the template matches them (their name's signal word says).
 */
async function* hourGroups(
  settings: Pick<CompactionSettings, 'signal' | 'partitionRoot'>,
  source: ObjectSource,
  layout: KeyLayout,
  range: { from: number; to: number },
  counters: ListingCounters | undefined,
  signal: AbortSignal,
): AsyncGenerator<Group> {
  // Without a start (the CLI's default), from the epoch: OTLP's times are unsigned, so no
  // partition precedes it, and a start keeps each layout's listing apart (without one, spans'
  // `year=…` and `traces/year=…` would be one listing, its hours out of order).
  const listings = layout.ranges(
    new Date(Number.isFinite(range.from) ? range.from : 0),
    Number.isFinite(range.to) ? new Date(range.to) : undefined,
  );
  const streams = listings.map((listing) =>
    listedGroups(settings, source, layout, listing, range, counters, signal),
  );
  try {
    const heads: IteratorResult<Group, void>[] = [];
    for (const stream of streams) heads.push(await stream.next());
    for (;;) {
      let hour = Number.POSITIVE_INFINITY;
      for (const head of heads) if (head.done !== true) hour = Math.min(hour, head.value.hour);
      if (hour === Number.POSITIVE_INFINITY) return;
      const objects: ListedObject[] = [];
      for (let i = 0; i < streams.length; i++) {
        let head = heads[i] as IteratorResult<Group, void>;
        while (head.done !== true && head.value.hour === hour) {
          objects.push(...head.value.objects);
          head = await (streams[i] as AsyncGenerator<Group, void>).next();
        }
        heads[i] = head;
      }
      yield { hour, objects };
    }
  } finally {
    for (const stream of streams) await stream.return(undefined);
  }
}

/** The keys of one listing in the layout, grouped by hour (keys of an hour are adjacent). */
async function* listedGroups(
  settings: Pick<CompactionSettings, 'signal' | 'partitionRoot'>,
  source: ObjectSource,
  layout: KeyLayout,
  listing: KeyRange,
  range: { from: number; to: number },
  counters: ListingCounters | undefined,
  signal: AbortSignal,
): AsyncGenerator<Group> {
  let group: Group | undefined;
  const root = settings.partitionRoot;
  const own = root === '' ? undefined : layout.prefix === '' ? root : `${layout.prefix}/${root}`;
  for await (const { key, size } of source.list(layout.prefix, listing.startAfter, signal)) {
    if (isPastRange(key, listing)) break;
    if (layout.internal(key)) continue;
    const parsed = layout.parse(key);
    const start = parsed?.partition?.start.getTime();
    if (parsed === undefined || start === undefined) {
      if (counters !== undefined && layout.otherSignal(key) === undefined) {
        counters.keysIgnored++;
        if (own !== undefined && key.startsWith(own))
          counters.ownKeysIgnored = (counters.ownKeysIgnored ?? 0) + 1;
      }
      continue;
    }
    // A key template of one signal read for another (the CLI's one --key-template for every
    // signal) matches the first's names: an object is this run's only if its name says so. A
    // custom template with no signal word gives the metrics' run its objects, and the spans' and
    // log records' runs none: they cannot tell whose such an object is by its name.
    if (signalOfKeyName(key) !== settings.signal) continue;
    const hour = start - (((start % HOUR) + HOUR) % HOUR);
    if (hour < range.from || hour >= range.to) continue;
    if (group !== undefined && group.hour !== hour) {
      yield group;
      group = undefined;
    }
    group ??= { hour, objects: [] };
    group.objects.push({ key, size, parsed });
  }
  if (group !== undefined) yield group;
}

/** One hour's objects: outputs' footers read, the skip record read when it can matter. */
export async function readHour(
  settings: CompactionSettings,
  source: ObjectSource,
  hour: Date,
  listed: ListedObject[],
  names: KeyNames,
  signal: AbortSignal,
): Promise<HourObjects> {
  const outputs: OutputInfo[] = [];
  const badOutputs: BadOutput[] = [];
  const inputs: ListedObject[] = [];
  for (const object of listed) {
    if (object.parsed.compacted !== true) {
      inputs.push(object);
      continue;
    }
    const info = await outputInfo(source, object, settings, names, signal);
    if ('reason' in info) badOutputs.push(info);
    else outputs.push(info);
  }
  const replaced = new Set(outputs.flatMap((o) => replacedKeys(o.replaces)));
  const skipped = inputs.some((input) => !replaced.has(input.key))
    ? await readSkipRecord(
        source,
        skipRecordKey(settings.outPrefix, hour, settings.partitionRoot),
        signal,
      )
    : [];
  return { hour, inputs, outputs, badOutputs, skipped };
}

/**
 * An output's footer: its rows and what it replaces. One whose list names what no output
 * replaces (outOfPlaceError: itself, an object of another hour or signal) is bad, as the reader
 * refuses it: it deletes nothing, and is never deleted.
 */
async function outputInfo(
  source: ObjectSource,
  object: ListedObject,
  settings: CompactionSettings,
  names: KeyNames,
  signal: AbortSignal,
): Promise<OutputInfo | BadOutput> {
  // A footer that was not fetched (a 503, say) is no sign of a bad output: the next GET may
  // pass, and then it replaces what it lists. Told apart from a footer that was read and is bad.
  const ranges = objectRanges(source, object.key, object.size, signal);
  let unfetched = false;
  const watched = {
    byteLength: ranges.byteLength,
    read: (start: number, end: number) =>
      ranges.read(start, end).catch((error: unknown) => {
        unfetched = true;
        throw error;
      }),
  };
  try {
    const parts = await openParquetParts(watched, settings.limits, settings.signal);
    const text = parts.keyValues.find((kv) => kv.key === REPLACES_KEY)?.value;
    if (text === undefined) throw new Error(`no ${REPLACES_KEY} in its metadata`);
    const replaces = decodeReplaces(text);
    const outOfPlace = outOfPlaceError(object, replacedKeys(replaces), names);
    if (outOfPlace !== undefined) return { ...object, reason: outOfPlace.message };
    return { ...object, rows: parts.rows, replaces };
  } catch (error) {
    if (error instanceof ReadAccessError) throw error;
    signal.throwIfAborted();
    const reason = error instanceof Error ? error.message : String(error);
    return unfetched ? { ...object, reason, unfetched } : { ...object, reason };
  }
}

/** The hour's record of unreadable inputs; none when there is none (or it cannot be read). */
export async function readSkipRecord(
  source: ObjectSource,
  key: string,
  signal: AbortSignal,
): Promise<SkippedObject[]> {
  let bytes: Uint8Array;
  try {
    bytes = await source.get(key, signal, MAX_SKIP_RECORD_BYTES);
  } catch (error) {
    if (error instanceof ReadAccessError) throw error;
    signal.throwIfAborted();
    return [];
  }
  try {
    const record = JSON.parse(new TextDecoder().decode(bytes)) as { objects?: unknown };
    return Array.isArray(record.objects)
      ? (record.objects as SkippedObject[]).filter(
          (o) => typeof o?.key === 'string' && typeof o.size === 'number',
        )
      : [];
  } catch {
    return [];
  }
}
