import { newTally } from '../encoding/records.js';
import type { ColumnBuilders } from '../signals/signal.js';
import {
  BatchKey,
  type ColumnOpenBatch,
  type KeyInputs,
  type SealedContents,
} from './open-batch.js';

/**
 * The open batch of a Parquet format: every item of an export goes into its signal's column
 * builders as it arrives (typed arrays, per-batch dictionaries, attribute sets interned once), so
 * the worker gets columns to encode, not records to parse. Its bytes are what the builders really
 * hold, capacity included; sealing hands the arrays over for a transfer to the worker.
 */
export class ColumnBatch<Item> implements ColumnOpenBatch<Item> {
  readonly kind = 'columns';
  readonly #builders: ColumnBuilders<Item>;
  readonly #key = new BatchKey();
  /** Where the builders end while empty: discard() takes every row back to it. */
  readonly #empty: unknown;

  /** `builders` must be empty. */
  constructor(builders: ColumnBuilders<Item>) {
    this.#builders = builders;
    this.#empty = builders.mark();
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

  append(item: Item, inputs: KeyInputs, times: boolean): number {
    const first = this.isEmpty;
    const tally = newTally(times);
    this.#builders.append(item, tally);
    this.#key.add({ ...inputs, dataTimeMillis: tally.oldestMillis }, first);
    return tally.items;
  }

  mark(): unknown {
    return { builders: this.#builders.mark(), key: this.#key.mark() };
  }

  rollback(mark: unknown): void {
    const m = mark as { builders: unknown; key: ReturnType<BatchKey['mark']> };
    this.#builders.rollback(m.builders);
    this.#key.rollback(m.key);
  }

  take(): SealedContents {
    const rawBytes = this.bytes;
    const points = this.#builders.rows;
    return { contents: { columns: this.#builders.seal() }, rawBytes, points, ...this.#key.take() };
  }

  discard(): { points: number; rawBytes: number } {
    const held = { points: this.#builders.rows, rawBytes: this.bytes };
    this.#builders.rollback(this.#empty);
    this.#key.take();
    return held;
  }
}
