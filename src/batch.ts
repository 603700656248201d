import type { RecordFormat } from './encoding/format.js';

/** What a sealed batch carries out of the critical section. */
export interface SealedContents {
  records: Buffer[];
  /** Bytes of the records, without the object framing. */
  recordBytes: number;
  points: number;
  exports: number;
}

/**
 * The batch exports are appended to. Records are kept as a list (no growing buffer to
 * reallocate); sealing hands the list over and starts a fresh one: swap, never slice.
 */
export class OpenBatch {
  #records: Buffer[] = [];
  #recordBytes = 0;
  #points = 0;
  readonly #format: RecordFormat;

  constructor(format: RecordFormat) {
    this.#format = format;
  }

  get isEmpty(): boolean {
    return this.#records.length === 0;
  }

  /** Size of the object this batch would become, uncompressed. */
  get bytes(): number {
    return this.#records.length === 0
      ? 0
      : this.#recordBytes + this.#format.overhead(this.#records.length);
  }

  /** Size of the object after appending a record of `recordBytes`. */
  bytesWith(recordBytes: number): number {
    return this.#recordBytes + recordBytes + this.#format.overhead(this.#records.length + 1);
  }

  append(record: Buffer, points: number): void {
    this.#records.push(record);
    this.#recordBytes += record.length;
    this.#points += points;
  }

  /** Hands the contents over and leaves this batch empty. */
  take(): SealedContents {
    const sealed = {
      records: this.#records,
      recordBytes: this.#recordBytes,
      points: this.#points,
      exports: this.#records.length,
    };
    this.#records = [];
    this.#recordBytes = 0;
    this.#points = 0;
    return sealed;
  }
}
