import type { Abandoned, Outcomes, PendingBatches } from './outcomes.js';
import type { BatchOutcome, SealedBatch } from './sealed-batch.js';
import type { DropReason } from './stats.js';

/** What keeps a batch's durable copy: the spool keeper, when a spool is configured. */
export interface Pager {
  /** The budget released the bytes of a batch that is on disk; read it back later. */
  pagedOut(batch: SealedBatch): void;
  /**
   * A batch ended: its file goes unless the batch was left for the next run; `reason` says why
   * a dropped one was (a shutdown's leaves its journal for the next run).
   */
  settled(batch: SealedBatch, outcome: BatchOutcome, reason?: DropReason): void;
}

/**
 * Whose a batch is: the exporter (one signal) that sealed or restored it. Its outcomes are counted
 * there, and with a spool its durable copy is kept by its pager (set once the spool is open).
 */
export interface BatchOwner {
  readonly outcomes: Outcomes;
  pager: Pager | undefined;
}

/** What the budget holds of one batch. */
interface Held {
  bytes: number;
  owner: BatchOwner;
}

/**
 * The memory bound, in one place: every byte the exporters of one bound hold (their open
 * batches and every pending batch, in whatever state) counts against maxBufferedBytes, and this
 * class alone decides what goes when more must fit: batches on disk are paged out first (nothing
 * is lost), then the oldest idle batch is dropped, whichever signal it belongs to. It is also the
 * one way a batch ends, so its bytes, its spool file and its outcome are released together.
 * Several exporters (metrics, spans, log records) may share one budget: each batch is counted to
 * its owner.
 */
export class MemoryBudget {
  readonly limit: number;
  readonly #opens: { readonly bytes: number }[] = [];
  /** How each owner's open batch is sealed early (in a group, for another signal's export). */
  readonly #sealers = new Map<BatchOwner, () => void>();
  /** Pending batches; Map order is seal order, oldest first. */
  readonly #held = new Map<SealedBatch, Held>();
  /** Owners of batches, also once they settled (a late report still finds its exporter). */
  readonly #owners = new WeakMap<SealedBatch, BatchOwner>();
  readonly #listeners = new Set<() => void>();
  #pendingBytes = 0;
  /** Each owner's share of #pendingBytes: read on every append (an exporter's peak), so kept. */
  readonly #ownerBytes = new Map<BatchOwner, number>();
  /** Restored batches admitted without room: 0 bytes until `place` holds or pages them out. */
  readonly #unroomed = new Set<SealedBatch>();

  constructor(limit: number) {
    this.limit = limit;
  }

  /**
   * An open batch whose bytes count from now on (one per exporter sharing the budget); `sealer`:
   * its owner, and how to seal it before its size or age would (see sealOthers).
   */
  addOpen(
    open: { readonly bytes: number },
    sealer?: { owner: BatchOwner; seal: () => void },
  ): void {
    this.#opens.push(open);
    if (sealer !== undefined) this.#sealers.set(sealer.owner, sealer.seal);
  }

  /**
   * An export of `owner` found no room for `bytes`: the open batches of the other owners are
   * sealed, to be stored. An open batch cannot be dropped for room, so without this the other
   * signals' open batches could keep `owner`'s exports out until their maxBatchAgeMillis. Not for
   * more than the whole bound: no room made would take it.
   */
  sealOthers(owner: BatchOwner, bytes: number): void {
    if (bytes > this.limit) return;
    for (const [other, seal] of this.#sealers) if (other !== owner) seal();
  }

  /** Bytes held now: the open batches and every pending batch. */
  get bytes(): number {
    let open = 0;
    for (const o of this.#opens) open += o.bytes;
    return open + this.#pendingBytes;
  }

  /** Sealed batches not yet settled. */
  get size(): number {
    return this.#held.size;
  }

  /** True if `bytes` more fit under the limit now. */
  fits(bytes: number): boolean {
    return this.bytes + bytes <= this.limit;
  }

  /** Starts accounting a sealed or restored batch of `owner`. */
  admit(batch: SealedBatch, bytes: number, owner: BatchOwner): void {
    this.#held.set(batch, { bytes, owner });
    this.#owners.set(batch, owner);
    this.#count(owner, bytes);
  }

  /**
   * Admits a batch an earlier run left, rebuilt in memory (replayed from its journal chain): room
   * is made for it first, as for an export, so a restart that finds more than the bound on disk
   * does not hold more. If none can be made it is never dropped for it (the journal kept it, so
   * a crash loses nothing): it counts 0 bytes while its spool file is written (one replayed batch
   * at a time), and `place` then pages it out, to be read back when room comes. False then.
   */
  admitRestored(batch: SealedBatch, bytes: number, owner: BatchOwner): boolean {
    if (this.makeRoom(bytes)) {
      this.admit(batch, bytes, owner);
      return true;
    }
    this.admit(batch, 0, owner);
    this.#unroomed.add(batch);
    return false;
  }

  /**
   * A prepared batch, queued, may be uploaded from memory: true if so. Only one admitted without
   * room (admitRestored) may not: it is held if it fits now; else, on disk, it is paged out (its
   * pager reads it back when room comes); if its spool file could not be written, room is made
   * for it, and if none can be, it is dropped, counted (`buffer-full`).
   */
  place(batch: SealedBatch): boolean {
    if (!this.#unroomed.has(batch)) return true;
    const bytes = batch.body?.length ?? 0;
    const pager = this.ownerOf(batch).pager;
    if (!this.fits(bytes) && batch.spool !== undefined && pager !== undefined && batch.pageOut()) {
      this.#unroomed.delete(batch);
      pager.pagedOut(batch);
      return false;
    }
    const room = this.makeRoom(bytes);
    this.#unroomed.delete(batch);
    if (room) {
      this.resize(batch, bytes);
      return true;
    }
    this.drop(batch, 'buffer-full');
    return false;
  }

  /** The exporter a batch belongs to. */
  ownerOf(batch: SealedBatch): BatchOwner {
    const owner = this.#owners.get(batch);
    if (owner === undefined) throw new Error(`batch ${batch.seq} was never admitted`);
    return owner;
  }

  /**
   * What a pending batch holds changed (compressed, paged out, read back). One admitted without
   * room counts 0 until `place` decides.
   */
  resize(batch: SealedBatch, bytes: number): void {
    const held = this.#held.get(batch);
    if (held === undefined || this.#unroomed.has(batch)) return;
    this.#count(held.owner, bytes - held.bytes);
    held.bytes = bytes;
  }

  /**
   * A pending batch's body was made larger than what was counted for it (a Parquet batch stored
   * as its OTLP/JSON records, say): room is made for the growth first, as for an export. False,
   * with nothing changed, if none can be made.
   */
  grow(batch: SealedBatch, bytes: number): boolean {
    const held = this.#held.get(batch);
    if (held === undefined || this.#unroomed.has(batch)) return true;
    if (bytes > held.bytes && !this.makeRoom(bytes - held.bytes)) return false;
    this.resize(batch, bytes);
    return true;
  }

  /**
   * Makes `bytes` more fit: pages out batches that are on disk, oldest first, then drops the
   * oldest idle batches. False, with nothing paged out or dropped, if even every idle batch gone
   * would not be enough (what is left is busy, or `bytes` exceed the bound): a batch dropped for
   * room that never comes is lost for nothing, another signal's included.
   */
  makeRoom(bytes: number): boolean {
    let idle = 0;
    for (const [batch, held] of this.#held) if (batch.isIdle) idle += held.bytes;
    if (!this.fits(bytes - idle)) return false;
    while (!this.fits(bytes)) {
      const onDisk = this.#oldestIdle((b, o) => b.spool !== undefined && o.pager !== undefined);
      if (onDisk?.pageOut()) {
        this.resize(onDisk, 0);
        this.ownerOf(onDisk).pager?.pagedOut(onDisk);
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
    this.ownerOf(batch).outcomes.dropped(batch, reason, cause);
    this.settle(batch, 'dropped', reason);
  }

  /** Ends a batch: releases its bytes and its file, and resolves batch.settled. */
  settle(batch: SealedBatch, outcome: BatchOutcome, reason?: DropReason): void {
    if (!batch.settle(outcome)) return;
    this.#unroomed.delete(batch);
    const held = this.#held.get(batch);
    if (held !== undefined) {
      this.#held.delete(batch);
      this.#count(held.owner, -held.bytes);
    }
    this.#owners.get(batch)?.pager?.settled(batch, outcome, reason);
    this.#changed();
  }

  /** A batch's last attempt hit a fault only an operator can fix: waiters stop waiting for it. */
  markBlocked(batch: SealedBatch): void {
    if (batch.markBlocked()) this.#changed();
  }

  /** A batch's state changed in a way a waiter of whenSettledOrBlocked may care about. */
  changed(): void {
    this.#changed();
  }

  /** Calls `listener` on every change a waiter of whenSettledOrBlocked sees, until it stops. */
  onChange(listener: () => void): () => void {
    const call = () => listener();
    this.#listeners.add(call);
    return () => this.#listeners.delete(call);
  }

  /**
   * Resolves once every batch in `batches` is settled, blocked on a fault that waiting cannot
   * fix (no such bucket, access denied, bad credentials), or `futile` for the waiter (it waits
   * for a Retry-After past the waiter's deadline), or once `stop` is aborted: a waiter that gave
   * up (a flush at its deadline) leaves no listener behind, or every flush timed out in an outage
   * (one an invocation, in a function-as-a-service) would add one checked on every change.
   */
  whenSettledOrBlocked(
    batches: readonly SealedBatch[],
    futile: (batch: SealedBatch) => boolean = () => false,
    stop?: AbortSignal,
  ): Promise<void> {
    const done = () => batches.every((b) => b.isSettled || b.blocked || futile(b));
    if (done() || stop?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const end = () => {
        this.#listeners.delete(check);
        stop?.removeEventListener('abort', end);
        resolve();
      };
      const check = () => {
        if (done()) end();
      };
      this.#listeners.add(check);
      stop?.addEventListener('abort', end, { once: true });
    });
  }

  /** The pending batches of `owner`, oldest first. */
  batchesOf(owner: BatchOwner): SealedBatch[] {
    const out: SealedBatch[] = [];
    for (const [batch, held] of this.#held) if (held.owner === owner) out.push(batch);
    return out;
  }

  /** Bytes `owner`'s pending batches hold now. */
  bytesOf(owner: BatchOwner): number {
    return this.#ownerBytes.get(owner) ?? 0;
  }

  /**
   * Bytes `owner` holds now: its pending batches and what else of it counts against the bound
   * (its open batch, its journal's entries not yet on disk). stats().bufferedBytes, and the peak
   * an append notes, are this one measure.
   */
  heldBy(owner: BatchOwner, ...also: ({ readonly bytes: number } | undefined)[]): number {
    let bytes = this.bytesOf(owner);
    for (const part of also) bytes += part?.bytes ?? 0;
    return bytes;
  }

  #count(owner: BatchOwner, bytes: number): void {
    this.#pendingBytes += bytes;
    this.#ownerBytes.set(owner, (this.#ownerBytes.get(owner) ?? 0) + bytes);
  }

  /**
   * `owner`'s batches not yet settled, and their uncompressed bytes (the measure of stats()).
   */
  pending(owner: BatchOwner): PendingBatches {
    let rawBytes = 0;
    let batches = 0;
    for (const [batch, held] of this.#held) {
      if (held.owner !== owner) continue;
      batches++;
      rawBytes += batch.rawBytes;
    }
    return { batches, rawBytes };
  }

  /**
   * `owner`'s shutdown deadline passed: what is on disk stays for the next run (a spool file, or
   * a journal chain that `journaled` says holds the whole batch), the rest is lost. Returns what
   * happened, for the caller's report.
   */
  abandonAll(
    owner: BatchOwner,
    journaled: (batch: SealedBatch) => boolean = () => false,
  ): Abandoned {
    const result = { left: 0, dropped: { batches: 0, rawBytes: 0 }, maybeStored: 0 };
    for (const batch of this.batchesOf(owner)) {
      if (batch.spool !== undefined || journaled(batch)) {
        result.left++;
        this.settle(batch, 'left-in-spool');
      } else {
        result.dropped.batches++;
        result.dropped.rawBytes += batch.rawBytes;
        if (batch.mayBeStored) result.maybeStored++;
        this.drop(batch, 'shutdown');
      }
    }
    return result;
  }

  /** Not one admitted without room: it holds nothing, so dropping it would make none. */
  #oldestIdle(also?: (batch: SealedBatch, owner: BatchOwner) => boolean): SealedBatch | undefined {
    for (const [batch, held] of this.#held)
      if (
        batch.isIdle &&
        !this.#unroomed.has(batch) &&
        (also === undefined || also(batch, held.owner))
      )
        return batch;
    return undefined;
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}
