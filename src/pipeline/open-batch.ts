import type { RecordFormat } from '../encoding/format.js';

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
  records: Buffer[];
  /** Size of the object the records make, uncompressed. */
  rawBytes: number;
  points: number;
  attributes: Readonly<Record<string, string>>;
  dataTimeMillis: number | undefined;
}

/**
 * The batch exports are appended to. Records are kept as a list (no growing buffer to
 * reallocate); sealing hands the list over and starts a fresh one: swap, never slice.
 */
export class OpenBatch {
  #records: Buffer[] = [];
  #recordBytes = 0;
  #points = 0;
  #group = '';
  #attributes: Readonly<Record<string, string>> = {};
  #dataTimeMillis: number | undefined;
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

  /** True if an export with these key inputs must go to another object than this batch's. */
  keyDiffers(inputs: KeyInputs): boolean {
    return !this.isEmpty && inputs.group !== this.#group;
  }

  append(record: Buffer, points: number, inputs: KeyInputs): void {
    if (this.isEmpty) {
      this.#group = inputs.group;
      this.#attributes = inputs.attributes;
    }
    this.#records.push(record);
    this.#recordBytes += record.length;
    this.#points += points;
    const t = inputs.dataTimeMillis;
    if (t !== undefined && (this.#dataTimeMillis === undefined || t < this.#dataTimeMillis))
      this.#dataTimeMillis = t;
  }

  /** Hands the contents over and leaves this batch empty. */
  take(): SealedContents {
    const sealed = {
      records: this.#records,
      rawBytes: this.bytes,
      points: this.#points,
      attributes: this.#attributes,
      dataTimeMillis: this.#dataTimeMillis,
    };
    this.#records = [];
    this.#recordBytes = 0;
    this.#points = 0;
    this.#dataTimeMillis = undefined;
    return sealed;
  }
}
