import type { Abandoned, Outcomes, PendingBatches } from './outcomes.js';
import type { BatchOutcome, SealedBatch } from './sealed-batch.js';
import type { DropReason } from './stats.js';

/** What keeps a batch's durable copy: the spool keeper, when a spool is configured. */
export interface Pager {
  /** The budget released the bytes of a batch that is on disk; read it back later. */
  pagedOut(batch: SealedBatch): void;
  /** A batch ended: its file goes unless the batch was left for the next run. */
  settled(batch: SealedBatch, outcome: BatchOutcome): void;
}

/**
 * The memory bound, in one place: every byte the exporter holds (the open batch and every
 * pending batch, in whatever state) counts against maxBufferedBytes, and this class alone
 * decides what goes when more must fit: batches on disk are paged out first (nothing is lost),
 * then the oldest idle batch is dropped. It is also the one way a batch ends, so its bytes,
 * its spool file and its outcome are released together.
 */
export class MemoryBudget implements Iterable<SealedBatch> {
  readonly limit: number;
  readonly #open: { readonly bytes: number };
  readonly #outcomes: Outcomes;
  /** Pending batches and the bytes each holds; Map order is seal order, oldest first. */
  readonly #held = new Map<SealedBatch, number>();
  readonly #listeners = new Set<() => void>();
  #pendingBytes = 0;
  #pager: Pager | undefined;

  /** `open`: the batch exports are appended to, whose bytes count too. */
  constructor(limit: number, open: { readonly bytes: number }, outcomes: Outcomes) {
    this.limit = limit;
    this.#open = open;
    this.#outcomes = outcomes;
  }

  /** With a spool: batches on disk may leave memory instead of being dropped. */
  attachPager(pager: Pager): void {
    this.#pager = pager;
  }

  /** Bytes held now: the open batch and every pending batch. */
  get bytes(): number {
    return this.#open.bytes + this.#pendingBytes;
  }

  /** Sealed batches not yet settled. */
  get size(): number {
    return this.#held.size;
  }

  /** True if `bytes` more fit under the limit now. */
  fits(bytes: number): boolean {
    return this.bytes + bytes <= this.limit;
  }

  /** Starts accounting a sealed or restored batch. */
  admit(batch: SealedBatch, bytes: number): void {
    this.#held.set(batch, bytes);
    this.#pendingBytes += bytes;
  }

  /** What a pending batch holds changed (compressed, paged out, read back). */
  resize(batch: SealedBatch, bytes: number): void {
    const was = this.#held.get(batch);
    if (was === undefined) return;
    this.#held.set(batch, bytes);
    this.#pendingBytes += bytes - was;
  }

  /**
   * Makes `bytes` more fit: pages out batches that are on disk, oldest first, then drops the
   * oldest idle batches. False if that is not enough: everything left is busy.
   */
  makeRoom(bytes: number): boolean {
    while (!this.fits(bytes)) {
      const onDisk = this.#pager && this.#oldestIdle((b) => b.spool !== undefined);
      if (onDisk?.pageOut()) {
        this.resize(onDisk, 0);
        this.#pager?.pagedOut(onDisk);
        continue;
      }
      const victim = this.#oldestIdle();
      if (victim === undefined) return false;
      this.drop(victim, 'buffer-full');
    }
    return true;
  }

  /** Gives a batch up for good, counted (and reported) under `reason`; `cause` says why. */
  drop(batch: SealedBatch, reason: DropReason, cause?: unknown): void {
    if (batch.isSettled) return;
    this.#outcomes.dropped(batch, reason, cause);
    this.settle(batch, 'dropped');
  }

  /** Ends a batch: releases its bytes and its file, and resolves batch.settled. */
  settle(batch: SealedBatch, outcome: BatchOutcome): void {
    if (!batch.settle(outcome)) return;
    const bytes = this.#held.get(batch);
    if (bytes !== undefined) {
      this.#held.delete(batch);
      this.#pendingBytes -= bytes;
    }
    this.#pager?.settled(batch, outcome);
    this.#changed();
  }

  /** A batch's last attempt hit a fault only an operator can fix: waiters stop waiting for it. */
  markBlocked(batch: SealedBatch): void {
    if (batch.markBlocked()) this.#changed();
  }

  /**
   * Resolves once every batch in `batches` is settled or blocked on a fault that waiting
   * cannot fix (no such bucket, access denied, bad credentials).
   */
  whenSettledOrBlocked(batches: readonly SealedBatch[]): Promise<void> {
    const done = () => batches.every((b) => b.isSettled || b.blocked);
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!done()) return;
        this.#listeners.delete(check);
        resolve();
      };
      this.#listeners.add(check);
    });
  }

  /** Sealed batches not yet settled, and their uncompressed bytes (the measure of stats()). */
  pending(): PendingBatches {
    let rawBytes = 0;
    for (const batch of this.#held.keys()) rawBytes += batch.rawBytes;
    return { batches: this.#held.size, rawBytes };
  }

  /**
   * The shutdown deadline passed: what is on disk stays for the next run, the rest is lost.
   * Returns what happened, for the caller's report.
   */
  abandonAll(): Abandoned {
    const result = { left: 0, dropped: { batches: 0, rawBytes: 0 } };
    for (const batch of [...this.#held.keys()]) {
      if (batch.spool !== undefined) {
        result.left++;
        this.settle(batch, 'left-in-spool');
      } else {
        result.dropped.batches++;
        result.dropped.rawBytes += batch.rawBytes;
        this.drop(batch, 'shutdown');
      }
    }
    return result;
  }

  [Symbol.iterator](): Iterator<SealedBatch> {
    return this.#held.keys();
  }

  #oldestIdle(also?: (batch: SealedBatch) => boolean): SealedBatch | undefined {
    for (const batch of this.#held.keys())
      if (batch.isIdle && (also === undefined || also(batch))) return batch;
    return undefined;
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}
