import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { Mutex } from 'async-mutex';
import type { RecordFormat } from '../encoding/format.js';
import type { MemoryBudget } from './budget.js';
import type { KeyInputs, OpenBatch } from './open-batch.js';
import type { Outcomes } from './outcomes.js';
import { SealedBatch } from './sealed-batch.js';

export interface AdmissionOptions {
  format: RecordFormat;
  maxBatchBytes: number;
  maxBatchAgeMillis: number;
}

export interface AdmissionParts {
  /** The batch exports are appended to; the budget counts its bytes too. */
  open: OpenBatch;
  budget: MemoryBudget;
  outcomes: Outcomes;
  /** Takes a batch just sealed, outside the critical section. */
  onSealed(batch: SealedBatch): void;
}

/** An encoded export, ready to be appended. */
export interface EncodedExport {
  record: Buffer;
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
 * The critical section only moves references and counts bytes: no I/O, no await.
 */
export class Admission {
  readonly #options: AdmissionOptions;
  readonly #parts: AdmissionParts;
  readonly #open: OpenBatch;
  /**
   * Appends and seals run as one uninterrupted step. Today that step has no await, so the
   * mutex only queues it behind steps already waiting; it is kept so that a future await
   * inside it (an asynchronous budget decision, say) could not interleave two seals.
   */
  readonly #mutex = new Mutex();
  #ageTimer: NodeJS.Timeout | undefined;

  constructor(options: AdmissionOptions, parts: AdmissionParts) {
    this.#options = options;
    this.#parts = parts;
    this.#open = parts.open;
  }

  /** Appends one export; answers FAILED only when it cannot fit under the memory bound. */
  async accept(encoded: EncodedExport): Promise<ExportResult> {
    const { result, sealed } = await this.#mutex.runExclusive(() => this.#accept(encoded));
    for (const batch of sealed) this.#parts.onSealed(batch);
    return result;
  }

  /** Seals the open batch now (flush, shutdown, or its age). */
  async sealNow(): Promise<void> {
    const sealed = await this.#mutex.runExclusive(() => this.#seal());
    if (sealed !== undefined) this.#parts.onSealed(sealed);
  }

  // ---- inside the mutex: no I/O, no await ----

  #accept({ record, points, inputs }: EncodedExport): {
    result: ExportResult;
    sealed: SealedBatch[];
  } {
    const { maxBatchBytes, maxBatchAgeMillis, format } = this.#options;
    const { budget, outcomes } = this.#parts;
    const open = this.#open;
    const sealed: SealedBatch[] = [];
    const sealFirst =
      !open.isEmpty && (open.bytesWith(record.length) > maxBatchBytes || open.keyDiffers(inputs));
    const growth = sealFirst
      ? record.length + format.overhead(1)
      : open.bytesWith(record.length) - open.bytes;
    if (!budget.makeRoom(growth)) {
      outcomes.exportRejectedForRoom(points, record.length);
      return { result: failed(`maxBufferedBytes (${budget.limit}) reached`), sealed };
    }
    if (sealFirst) this.#pushSealed(sealed);
    const wasEmpty = open.isEmpty;
    open.append(record, points, inputs);
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
    this.#parts.budget.admit(batch, batch.rawBytes);
    this.#parts.outcomes.sealed();
    return batch;
  }
}
