import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { Mutex } from 'async-mutex';
import { describeError } from '../s3/errors.js';
import type { BatchOwner, MemoryBudget } from './budget.js';
import type { KeyInputs, OpenBatch } from './open-batch.js';
import { SealedBatch } from './sealed-batch.js';

export interface AdmissionOptions {
  maxBatchBytes: number;
  maxBatchAgeMillis: number;
}

export interface AdmissionParts<Item> {
  /** The batch exports are appended to; the budget counts its bytes too. */
  open: OpenBatch<Item>;
  budget: MemoryBudget;
  /** The exporter the batches belong to; its outcomes count them. */
  owner: BatchOwner;
  /** Takes a batch just sealed, outside the critical section. */
  onSealed(batch: SealedBatch): void;
  /** Counts an export the open batch could not take (a Parquet append that threw). */
  appendFailed(error: unknown): void;
}

/** An export, ready to be appended: its record (OTLP), or the SDK's metrics (Parquet columns). */
export interface PendingExport<Item> {
  item: Item;
  points: number;
  inputs: KeyInputs;
}

const SUCCESS: ExportResult = { code: ExportResultCode.SUCCESS };
export const failed = (message: string): ExportResult => ({
  code: ExportResultCode.FAILED,
  error: new Error(`otel-s3-exporter: ${message}`),
});

/**
 * Admission into the open batch: appends an encoded export, seals the batch when it is full,
 * old, or the export must go to another object, and makes room under the memory bound first.
 * The critical section only moves references and counts bytes (with zstd on node:zlib it also
 * queues the record onto the zstd stream, which compresses it on libuv's pool): no I/O, no await.
 */
export class Admission<Item> {
  readonly #options: AdmissionOptions;
  readonly #parts: AdmissionParts<Item>;
  readonly #open: OpenBatch<Item>;
  /**
   * Appends and seals run as one uninterrupted step. Today that step has no await, so the
   * mutex only queues it behind steps already waiting; it is kept so that a future await
   * inside it (an asynchronous budget decision, say) could not interleave two seals.
   */
  readonly #mutex = new Mutex();
  #ageTimer: NodeJS.Timeout | undefined;

  constructor(options: AdmissionOptions, parts: AdmissionParts<Item>) {
    this.#options = options;
    this.#parts = parts;
    this.#open = parts.open;
  }

  /** Appends one export; answers FAILED only when it cannot fit under the memory bound. */
  async accept(pending: PendingExport<Item>): Promise<ExportResult> {
    const { result, sealed } = await this.#mutex.runExclusive(() => this.#accept(pending));
    for (const batch of sealed) this.#parts.onSealed(batch);
    return result;
  }

  /** Seals the open batch now (flush, shutdown, or its age). */
  async sealNow(): Promise<void> {
    const sealed = await this.#mutex.runExclusive(() => this.#seal());
    if (sealed !== undefined) this.#parts.onSealed(sealed);
  }

  // ---- inside the mutex: no I/O, no await ----

  #accept({ item, points, inputs }: PendingExport<Item>): {
    result: ExportResult;
    sealed: SealedBatch[];
  } {
    const { maxBatchBytes, maxBatchAgeMillis } = this.#options;
    const { budget } = this.#parts;
    const { outcomes } = this.#parts.owner;
    const open = this.#open;
    const sealed: SealedBatch[] = [];
    const sealFirst =
      !open.isEmpty && (open.overflows(item, points, maxBatchBytes) || open.keyDiffers(inputs));
    const growth = open.growth(item, points, sealFirst);
    if (!budget.makeRoom(growth)) {
      outcomes.exportRejectedForRoom(points, growth);
      return { result: failed(`maxBufferedBytes (${budget.limit}) reached`), sealed };
    }
    if (sealFirst) this.#pushSealed(sealed);
    const wasEmpty = open.isEmpty;
    try {
      open.append(item, points, inputs);
    } catch (error) {
      // Nothing of it was appended (OpenBatch.append is all or nothing); a batch sealed first
      // still goes on.
      this.#parts.appendFailed(error);
      return { result: failed(`could not append metrics: ${describeError(error)}`), sealed };
    }
    // What the growth could not foresee (a Parquet batch's first-seen strings): room now.
    budget.makeRoom(0);
    outcomes.accepted(budget.bytes);
    if (open.bytes >= maxBatchBytes) {
      this.#pushSealed(sealed);
    } else if (wasEmpty) {
      this.#ageTimer = setTimeout(() => void this.sealNow(), maxBatchAgeMillis);
      // An open batch never keeps the process alive: shutdown() is what flushes it.
      this.#ageTimer.unref();
    }
    return { result: SUCCESS, sealed };
  }

  #pushSealed(list: SealedBatch[]): void {
    const batch = this.#seal();
    if (batch !== undefined) list.push(batch);
  }

  /** Swaps the open batch out. The caller hands the result on outside the mutex. */
  #seal(): SealedBatch | undefined {
    clearTimeout(this.#ageTimer);
    this.#ageTimer = undefined;
    if (this.#open.isEmpty) return undefined;
    const batch = SealedBatch.seal(this.#open.take());
    this.#parts.budget.admit(batch, batch.rawBytes, this.#parts.owner);
    this.#parts.owner.outcomes.sealed();
    return batch;
  }
}
