import { READ_DEFAULTS } from '../config/options.js';
import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import { decodeStoredObjectAsync, ObjectDecodeError } from '../reader/decode-object.js';
import { RangeIgnoredError, RangeOverrunError, ReadAccessError } from '../reader/errors.js';
import { bytesAsRanges, openParquetParts } from '../reader/parquet-parts.js';
import { ObjectTooLargeError, type ReadLimits } from '../reader/read-limits.js';
import { type ListedObject, objectRanges } from '../reader/replaced-inputs.js';
import type { ObjectSource } from '../reader/source.js';
import type { AnyCompactionRows, InputPart } from './signal-rows.js';

/**
 * The inputs of a merge, read one at a time: an OTLP object whole (within the reader's limits),
 * a Parquet file one row group at a time. Small objects are fetched ahead, a few at once, so
 * the merge does not wait on each GET; a large Parquet file is read by range, row group after
 * row group, and never held whole. A row group comes as its columns (append-columns.ts).
 */

/** An input that cannot be read. `stage` as the reader says it. */
export class InputError extends Error {
  readonly key: string;
  readonly stage: 'fetch' | 'decompress' | 'decode';
  constructor(key: string, stage: InputError['stage'], message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'InputError';
    this.key = key;
    this.stage = stage;
  }

  /**
   * True when reading it again cannot help (bad data, over a size limit): it is recorded and
   * not read by later runs. A failed GET is tried again by the next run.
   */
  get permanent(): boolean {
    return this.stage !== 'fetch' || this.cause instanceof ObjectTooLargeError;
  }
}

/** Objects up to this size are fetched whole, and ahead; larger Parquet files by range. */
export const WHOLE_FETCH_BYTES = 8 * 1024 * 1024;

export class InputReader {
  readonly #source: ObjectSource;
  readonly #limits: ReadLimits;
  readonly #signal: AbortSignal;
  readonly #concurrency: number;
  readonly #rows: AnyCompactionRows;
  readonly #ahead = new Map<string, Promise<Uint8Array | InputError>>();
  #aheadBytes = 0;

  constructor(
    rows: AnyCompactionRows,
    source: ObjectSource,
    limits: ReadLimits,
    concurrency: number,
    signal: AbortSignal,
  ) {
    this.#rows = rows;
    this.#source = source;
    this.#limits = limits;
    this.#concurrency = concurrency;
    this.#signal = signal;
  }

  /**
   * The parts of `objects[index]`, starting the fetches of the objects after it. Throws
   * InputError for an unreadable input, ReadAccessError (and aborts) to stop.
   */
  async *read(objects: readonly ListedObject[], index: number): AsyncGenerator<InputPart> {
    const object = objects[index] as ListedObject;
    this.#fetchAhead(objects, index);
    const whole = this.#take(object);
    if (object.parsed.encoding.format !== 'parquet') {
      const bytes = await this.#bytes(object, whole);
      let request: OtlpObject;
      try {
        ({ request } = await decodeStoredObjectAsync(object.key, bytes, this.#limits));
      } catch (error) {
        throw asInputError(object.key, error);
      }
      yield { request, points: this.#rows.countRequest(request) };
      return;
    }
    const file =
      whole === undefined
        ? objectRanges(this.#source, object.key, object.size, this.#signal)
        : bytesAsRanges(await this.#bytes(object, whole));
    const parts = await openParquetParts(file, this.#limits, this.#rows.signal).catch(
      (error: unknown) => {
        throw asInputError(object.key, error);
      },
    );
    for (let i = 0; i < parts.count; i++) {
      const columns = await parts.readColumns(i).catch((error: unknown) => {
        throw asInputError(object.key, error);
      });
      yield { columns, points: columns.rows };
    }
  }

  /** Whole-object fetches of the next objects, within the count and byte budgets. */
  #fetchAhead(objects: readonly ListedObject[], from: number): void {
    for (let i = from; i < objects.length && this.#ahead.size < this.#concurrency; i++) {
      const next = objects[i] as ListedObject;
      if (this.#ahead.has(next.key) || !this.#whole(next)) continue;
      if (this.#aheadBytes + next.size > READ_DEFAULTS.readAheadBytes && this.#ahead.size > 0)
        return;
      this.#start(next);
    }
  }

  #whole(object: ListedObject): boolean {
    return object.parsed.encoding.format !== 'parquet' || object.size <= WHOLE_FETCH_BYTES;
  }

  #start(object: ListedObject): Promise<Uint8Array | InputError> {
    this.#aheadBytes += object.size;
    const fetched = this.#source.get(object.key, this.#signal, this.#limits.maxObjectBytes).then(
      (bytes) => bytes,
      (error: unknown): InputError => {
        const failure = asInputError(object.key, error, 'fetch');
        if (this.#signal.aborted || !(failure instanceof InputError)) throw error;
        return failure;
      },
    );
    fetched.catch(() => {}); // awaited later, in order
    this.#ahead.set(object.key, fetched);
    return fetched;
  }

  /** The object's whole-bytes fetch (started now if it was not), or undefined to read by range. */
  #take(object: ListedObject): Promise<Uint8Array | InputError> | undefined {
    if (!this.#whole(object)) return undefined;
    const fetched = this.#ahead.get(object.key) ?? this.#start(object);
    this.#ahead.delete(object.key);
    this.#aheadBytes -= object.size;
    return fetched;
  }

  async #bytes(
    object: ListedObject,
    fetched: Promise<Uint8Array | InputError> | undefined,
  ): Promise<Uint8Array> {
    if (object.size > this.#limits.maxObjectBytes) {
      throw asInputError(
        object.key,
        new ObjectTooLargeError('maxObjectBytes', this.#limits.maxObjectBytes, object.size),
        'fetch',
      );
    }
    const bytes = await (fetched ?? this.#start(object));
    if (bytes instanceof InputError) throw bytes;
    return bytes;
  }

  /** Drops what was fetched ahead (the merge is over or starts again). */
  clear(): void {
    this.#ahead.clear();
    this.#aheadBytes = 0;
  }
}

function asInputError(key: string, error: unknown, stage?: InputError['stage']): Error {
  if (error instanceof InputError || error instanceof ReadAccessError) return error;
  if (error instanceof ObjectDecodeError)
    return new InputError(key, error.stage, error.detail, error);
  const message = error instanceof Error ? error.message : String(error);
  const fetchFailed =
    error instanceof ObjectTooLargeError ||
    error instanceof RangeIgnoredError ||
    error instanceof RangeOverrunError;
  const at = stage ?? (fetchFailed ? 'fetch' : 'decode');
  return new InputError(key, at, message, error);
}
