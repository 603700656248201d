import type { SignalName } from '../layout/formats.js';
import { uuidv7Millis } from '../layout/key-template.js';
import {
  decodeReplaces,
  InconsistentOutputError,
  inputRows,
  OutOfPlaceOutputError,
  REPLACES_KEY,
  replacedKeys,
} from './compacted.js';
import { ReadAccessError } from './errors.js';
import type { KeyLayout, MetricKey } from './key-layout.js';
import {
  type ByteRanges,
  openParquetParts,
  type ParquetParts,
  readInParts,
} from './parquet-parts.js';
import { ObjectTooLargeError, type ReadLimits } from './read-limits.js';
import type { ObjectSource } from './source.js';

/**
 * How the reader never counts a point twice while compaction runs: a compaction output and the
 * objects it replaces can both exist (until the compactor deletes the inputs, and for good for
 * the OTLP objects it keeps). The reader holds the keys of one hour as they are listed, reads the
 * footer of each output among them, and yields every key that no output replaces: the outputs,
 * and the objects not compacted yet. The keys an output replaces are kept for the whole listing:
 * an hour's objects are not always listed beside its outputs (spans' and log records' outputs are
 * under `traces/` and `logs/`, listed before the OTLP objects of every hour; the layout lists the
 * outputs' own hours first where another template files its objects elsewhere, see
 * KeyLayout.rangeWithOutputs). An output listed twice (by two of those listings) is yielded once.
 */

/** A listed key in the layout. */
export interface ListedObject {
  key: string;
  size: number;
  parsed: MetricKey;
  /**
   * Set on a compaction output whose footer could not be read when its hour was listed: what it
   * replaces is unknown, so its inputs were yielded, and the output must not be read as well.
   */
  footerError?: Error;
  /**
   * Set on a compaction output whose footer was read: the seal times (ms) of the objects it
   * replaces, by their names. A range reads the output when it holds one of them (inRange).
   */
  replacedSeals?: number[];
}

const HOUR = 3_600_000;

/** What an output's list is checked against: the key layout's names (see outOfPlaceError). */
export type KeyNames = Pick<KeyLayout, 'parse' | 'otherSignal'>;

/** What withoutReplaced needs to read outputs' lists: the key layout, and the read's limits. */
export interface OutputsLayout extends KeyNames {
  /** The footers are read within them, as the outputs themselves will be. */
  limits: ReadLimits;
}

/** The hour a key is filed under (as the listing groups them); undefined for none. */
const hourOf = (parsed: MetricKey): number | undefined => {
  const start = parsed.partition?.start.getTime();
  return start === undefined ? undefined : Math.floor(start / HOUR);
};

/**
 * The listed objects without those a compaction output among them replaces, in listing order.
 * An output whose footer cannot be read replaces nothing, and is marked (footerError): a later
 * read of it may succeed (a 503 that passed), and would count its points a second time beside
 * its inputs. So is one whose footer disagrees with itself (InconsistentOutputError): its file
 * holds other than the rows of the inputs it lists. So is one that lists what no output replaces
 * (outOfPlaceError): itself, or an object of another signal or hour. Access errors end the
 * listing. `onReplaced` counts what is skipped.
 */
export async function* withoutReplaced(
  listed: AsyncIterable<ListedObject>,
  source: ObjectSource,
  signal: AbortSignal,
  onReplaced: (object: ListedObject) => void,
  layout: OutputsLayout,
): AsyncGenerator<ListedObject> {
  let hour: number | undefined;
  let held: ListedObject[] = [];
  /** Keys replaced by the outputs read so far, and the outputs yielded. */
  const replaced = new Set<string>();
  const outputs = new Set<string>();
  for await (const object of listed) {
    const next = hourOf(object.parsed);
    if (next !== hour || next === undefined) {
      yield* release(held);
      held = [];
      hour = next;
    }
    held.push(object);
  }
  yield* release(held);

  async function* release(objects: ListedObject[]): AsyncGenerator<ListedObject> {
    const fresh = objects.filter((o) => o.parsed.compacted !== true || !outputs.has(o.key));
    for (const object of fresh) {
      if (object.parsed.compacted !== true) continue;
      outputs.add(object.key);
      const keys = await replacesOf(source, object, signal, layout);
      if (keys instanceof Error) object.footerError = keys;
      else {
        const seals: number[] = [];
        for (const key of keys) {
          replaced.add(key);
          const sealedAt = layout.parse(key)?.sealedAt.getTime() ?? sealTimeInName(key);
          if (sealedAt !== undefined) seals.push(sealedAt);
        }
        if (seals.length > 0) object.replacedSeals = seals;
      }
    }
    for (const object of fresh) {
      if (replaced.has(object.key)) onReplaced(object);
      else yield object;
    }
  }
}

/** The last UUIDv7 of a key (its object's seal time, ms); for a key listed under another prefix. */
const UUIDV7 = /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
function sealTimeInName(key: string): number | undefined {
  const id = key.match(UUIDV7)?.at(-1);
  return id === undefined ? undefined : uuidv7Millis(id);
}

/** The keys an output replaces, from its footer; why not when the footer cannot be read. */
async function replacesOf(
  source: ObjectSource,
  object: ListedObject,
  signal: AbortSignal,
  layout: OutputsLayout,
): Promise<string[] | Error> {
  // Read whole, an output over maxObjectBytes is refused, in this read and the next: its inputs
  // are read instead (read in parts, the limits apply to its row groups, checked below).
  const { maxObjectBytes } = layout.limits;
  if (object.size > maxObjectBytes && !readInParts(object.parsed.encoding.format, object.size)) {
    return new ObjectTooLargeError('maxObjectBytes', maxObjectBytes, object.size);
  }
  try {
    const parts = await openStoredParquet(
      source,
      object,
      layout.limits,
      object.parsed.signal,
      signal,
    );
    const text = parts.keyValues.find((kv) => kv.key === REPLACES_KEY)?.value;
    if (text === undefined) return [];
    const replaces = decodeReplaces(text);
    // As the compactor (src/compact/plan.ts): such an output deletes nothing, and hides nothing.
    if (inputRows(replaces) !== parts.rows)
      return new InconsistentOutputError(parts.rows, replaces);
    const keys = replacedKeys(replaces);
    return outOfPlaceError(object, keys, layout) ?? keys;
  } catch (error) {
    if (error instanceof ReadAccessError) throw error;
    signal.throwIfAborted();
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Why `output` cannot replace `keys` (src/compact lists the objects of one signal and hour, and
 * never an output as its own input): it names itself, an object of another signal, or one of
 * another hour; undefined when it can replace them all. The one rule for the reader (such an
 * output hides nothing) and the compactor (it deletes nothing). A key that `names` does not
 * parse is never listed, so it hides nothing; its signal is still told by its name.
 */
export function outOfPlaceError(
  output: { key: string; parsed: MetricKey },
  keys: readonly string[],
  names: KeyNames,
): OutOfPlaceOutputError | undefined {
  for (const key of keys) {
    const named = outOfPlace(output, key, names);
    if (named !== undefined) return new OutOfPlaceOutputError(named);
  }
  return undefined;
}

function outOfPlace(
  output: { key: string; parsed: MetricKey },
  key: string,
  names: KeyNames,
): string | undefined {
  if (key === output.key) return 'itself';
  const parsed = names.parse(key);
  const signal = parsed?.signal ?? names.otherSignal(key);
  if (signal !== undefined && signal !== output.parsed.signal) return `${key}, a ${signal} object`;
  if (parsed === undefined) return undefined;
  if (hourOf(parsed) !== hourOf(output.parsed)) return `${key}, of another hour`;
  return undefined;
}

/** An object of the source as byte ranges (Range GETs on S3). */
export function objectRanges(
  source: ObjectSource,
  key: string,
  size: number,
  signal: AbortSignal,
): ByteRanges {
  return { byteLength: size, read: (start, end) => source.getRange(key, start, end, signal) };
}

/** A stored Parquet object of `table`'s schema, opened by ranges: its footer, then what is asked. */
export function openStoredParquet(
  source: ObjectSource,
  object: { key: string; size: number },
  limits: ReadLimits,
  table: SignalName,
  signal: AbortSignal,
): Promise<ParquetParts> {
  return openParquetParts(objectRanges(source, object.key, object.size, signal), limits, table);
}
