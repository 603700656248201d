import type { ColumnBuilders } from '../signals/signal.js';
import { BatchKey, type KeyInputs, type OpenBatch, type SealedContents } from './open-batch.js';

/**
 * The open batch of a Parquet format: every item of an export goes into its signal's column
 * builders as it arrives (typed arrays, per-batch dictionaries, attribute sets interned once), so
 * the worker gets columns to encode, not records to parse. Its bytes are what the builders really
 * hold, capacity included; sealing hands the arrays over for a transfer to the worker.
 */
export class ColumnBatch<Item> implements OpenBatch<Item> {
  readonly #builders: ColumnBuilders<Item>;
  readonly #key = new BatchKey();

  constructor(builders: ColumnBuilders<Item>) {
    this.#builders = builders;
  }

  get isEmpty(): boolean {
    return this.#builders.rows === 0;
  }

  get bytes(): number {
    return this.#builders.bytes;
  }

  keyDiffers(inputs: KeyInputs): boolean {
    return !this.isEmpty && inputs.group !== this.#key.group;
  }

  overflows(item: Item, _points: number, maxBytes: number): boolean {
    return !this.isEmpty && this.bytes + this.#builders.growth(item, false) > maxBytes;
  }

  /**
   * The arrays' growth, exact; strings and attribute sets new to the batch come on top, and the
   * budget counts them once appended (Admission makes room for them then).
   */
  growth(item: Item, _points: number, alone: boolean): number {
    return this.#builders.growth(item, alone);
  }

  /** All of the export or none of it: the builders take back the rows of an append that threw. */
  append(item: Item, _points: number, inputs: KeyInputs): void {
    const first = this.isEmpty;
    this.#builders.append(item);
    this.#key.add(inputs, first);
  }

  take(): SealedContents {
    const rawBytes = this.bytes;
    const points = this.#builders.rows;
    return { contents: { columns: this.#builders.seal() }, rawBytes, points, ...this.#key.take() };
  }
}
