import type { BatchContents, RecordFrame } from '../body/index.js';
import { releaseRecords } from '../encoding/handed-over.js';
import type { Framing, RecordFormat } from '../encoding/records.js';

/** What a batch of records needs of its format: how records join into one object. */
export type RecordJoin = Pick<RecordFormat<unknown>, 'overhead' | 'framing'>;

/** What decides an export's object key besides the seal time. */
export interface KeyInputs {
  /** Values of the key template's resource-attribute tokens; exports that differ never share a batch. */
  attributes: Readonly<Record<string, string>>;
  /** Identity of `attributes`, for the comparison. */
  group: string;
  /** Oldest data point end time in ms (partitionTime 'data'), else undefined. */
  dataTimeMillis: number | undefined;
}

/** What a sealed batch carries out of the critical section. */
export interface SealedContents {
  contents: BatchContents;
  /** What the budget counted for the batch when it was sealed (see OpenBatch.bytes). */
  rawBytes: number;
  points: number;
  attributes: Readonly<Record<string, string>>;
  dataTimeMillis: number | undefined;
}

/**
 * The batch exports are appended to, in the form its format keeps: OTLP records (RecordBatch),
 * or Parquet column builders (ColumnBatch, src/pipeline/column-batch.ts).
 */
export interface OpenBatch {
  readonly isEmpty: boolean;
  /** Bytes the batch holds now, counted against maxBufferedBytes. */
  readonly bytes: number;
  /** True if an export with these key inputs must go to another object than this batch's. */
  keyDiffers(inputs: KeyInputs): boolean;
  /** Hands the contents over and leaves this batch empty. */
  take(): SealedContents;
  /**
   * Empties the batch without sealing it (its seal threw at shutdown: nothing seals after);
   * returns the items and bytes it held.
   */
  discard(): { points: number; rawBytes: number };
}

/**
 * A batch whose exports come encoded (records): an export's size is known before it is appended,
 * so room is made for it first.
 */
export interface RecordOpenBatch extends OpenBatch {
  readonly kind: 'records';
  /** Bytes appending `record` adds: to this batch, or to a fresh one (`alone`). */
  growth(record: Buffer, alone: boolean): number;
  append(record: Buffer, points: number, inputs: KeyInputs): void;
}

/**
 * A batch whose exports are appended as they are (column builders): appending is the one walk
 * of an export, which measures it, so room is made after, and an export that does not fit is
 * taken back.
 */
export interface ColumnOpenBatch<Item> extends OpenBatch {
  readonly kind: 'columns';
  /** Appends all of `item` or none of it; returns its items. */
  append(item: Item, inputs: KeyInputs, times: boolean): number;
  /** Where the batch ends now ... */
  mark(): unknown;
  /** ... and taking back every export appended since. */
  rollback(mark: unknown): void;
}

/**
 * Key inputs of the exports of one batch: the first export's attributes (all share them) and
 * the oldest data point time of them all.
 */
export class BatchKey {
  group = '';
  attributes: Readonly<Record<string, string>> = {};
  dataTimeMillis: number | undefined;

  /** Takes an export's inputs; `first` when it opens the batch. */
  add(inputs: KeyInputs, first: boolean): void {
    if (first) {
      this.group = inputs.group;
      this.attributes = inputs.attributes;
    }
    const t = inputs.dataTimeMillis;
    if (t !== undefined && (this.dataTimeMillis === undefined || t < this.dataTimeMillis))
      this.dataTimeMillis = t;
  }

  /** What the key holds now, for rollback(). */
  mark(): {
    group: string;
    attributes: Readonly<Record<string, string>>;
    time: number | undefined;
  } {
    return { group: this.group, attributes: this.attributes, time: this.dataTimeMillis };
  }

  /** Back to what mark() gave. */
  rollback(mark: ReturnType<BatchKey['mark']>): void {
    this.group = mark.group;
    this.attributes = mark.attributes;
    this.dataTimeMillis = mark.time;
  }

  /** The inputs so far, and a fresh start. */
  take(): { attributes: Readonly<Record<string, string>>; dataTimeMillis: number | undefined } {
    const taken = { attributes: this.attributes, dataTimeMillis: this.dataTimeMillis };
    this.dataTimeMillis = undefined;
    return taken;
  }
}

/**
 * OTLP records. Where the body maker can compress an object part by part (zstd on node:zlib),
 * each record goes into the batch's frame as it is appended and is freed once compressed: the
 * batch holds compressed bytes, not its records. Elsewhere the records are kept as a list (no
 * growing buffer to reallocate). Sealing hands the frame or the list over and starts afresh:
 * swap, never slice. Bytes are the size of the object the records make, uncompressed, either
 * way: they decide the seal, and the budget counts them (an upper bound of what is held).
 */
export class RecordBatch implements RecordOpenBatch {
  readonly kind = 'records';
  #records: Buffer[] = [];
  #frame: RecordFrame | undefined;
  #count = 0;
  #recordBytes = 0;
  #points = 0;
  readonly #key = new BatchKey();
  readonly #format: RecordJoin;
  readonly #openFrame:
    | ((framing: Framing | null, firstRecordBytes: number) => RecordFrame)
    | undefined;

  constructor(
    format: RecordJoin,
    openFrame?: (framing: Framing | null, firstRecordBytes: number) => RecordFrame,
  ) {
    this.#format = format;
    this.#openFrame = openFrame;
  }

  get isEmpty(): boolean {
    return this.#count === 0;
  }

  get bytes(): number {
    return this.#count === 0 ? 0 : this.#recordBytes + this.#format.overhead(this.#count);
  }

  keyDiffers(inputs: KeyInputs): boolean {
    return !this.isEmpty && inputs.group !== this.#key.group;
  }

  growth(record: Buffer, alone: boolean): number {
    return alone
      ? record.length + this.#format.overhead(1)
      : this.#bytesWith(record.length) - this.bytes;
  }

  append(record: Buffer, points: number, inputs: KeyInputs): void {
    if (this.#openFrame === undefined) this.#records.push(record);
    else {
      // Opening the frame is the one step that can throw: before anything is counted.
      this.#frame ??= this.#openFrame(this.#format.framing, record.length);
      this.#frame.append(record, () => releaseRecords([record]));
    }
    this.#key.add(inputs, this.isEmpty);
    this.#count++;
    this.#recordBytes += record.length;
    this.#points += points;
  }

  take(): SealedContents {
    const sealed = {
      contents: this.#takeContents(),
      rawBytes: this.bytes,
      points: this.#points,
      ...this.#key.take(),
    };
    this.#count = 0;
    this.#recordBytes = 0;
    this.#points = 0;
    return sealed;
  }

  discard(): { points: number; rawBytes: number } {
    const held = { points: this.#points, rawBytes: this.bytes };
    const frame = this.#frame;
    this.#frame = undefined;
    this.#records = [];
    this.#key.take();
    this.#count = 0;
    this.#recordBytes = 0;
    this.#points = 0;
    // Its body is never made: the compressed part is not awaited, and must not be left unhandled.
    try {
      frame?.end().catch(() => {});
    } catch {
      // A frame that cannot end holds nothing more than before.
    }
    return held;
  }

  #takeContents(): BatchContents {
    const frame = this.#frame;
    if (frame === undefined) {
      const records = this.#records;
      this.#records = [];
      return { records };
    }
    this.#frame = undefined;
    const ended = frame.end();
    // Awaited when the body is made; a batch dropped before then must not leave it unhandled.
    ended.catch(() => {});
    return { frame: ended };
  }

  /** Size of the object after appending a record of `recordBytes`. */
  #bytesWith(recordBytes: number): number {
    return this.#recordBytes + recordBytes + this.#format.overhead(this.#count + 1);
  }
}
