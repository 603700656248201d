import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { Mutex } from 'async-mutex';
import { describeError } from '../s3/errors.js';
import type { BatchOwner, MemoryBudget } from './budget.js';
import type { JournalEncode, OpenJournal } from './journal-port.js';
import type { ColumnOpenBatch, KeyInputs, RecordOpenBatch, SealedContents } from './open-batch.js';
import { SealedBatch } from './sealed-batch.js';

export interface AdmissionOptions {
  maxBatchBytes: number;
  maxBatchAgeMillis: number;
  /** Whether an export's oldest time is wanted (partitionTime 'data'). */
  times: boolean;
}

export interface AdmissionParts<Item> {
  /** The batch exports are appended to; the budget counts its bytes too. */
  open: RecordOpenBatch | ColumnOpenBatch<Item>;
  budget: MemoryBudget;
  /** The exporter the batches belong to; its outcomes count them. */
  owner: BatchOwner;
  /** Takes a batch just sealed, outside the critical section. */
  onSealed(batch: SealedBatch): void;
  /**
   * Reports an export the open batch could not take (a Parquet append that threw). A seal by
   * size or age that throws is reported to the owner's outcomes (sealDeferred).
   */
  appendFailed(error: unknown): void;
  /** The open batch's journal (with a spool): each export appended is copied to it. */
  journal?: OpenJournal | undefined;
  /** How an export appended as it is (columns) becomes the record the journal keeps. */
  journalEncode?: JournalEncode<Item> | undefined;
  /**
   * The items of an export appended as it is, counted without appending it: for one not taken
   * because the open batch it must follow could not be sealed.
   */
  itemsOf?: ((item: Item) => number) | undefined;
}

/**
 * An export, ready to be appended: its record, encoded outside the mutex, with what its encoding
 * counted (OTLP); or the export itself, which appending walks and counts (Parquet columns).
 */
export type PendingExport<Item> =
  | { record: Buffer; points: number; inputs: KeyInputs }
  | { item: Item; inputs: KeyInputs; times: boolean };

/**
 * A seal at shutdown (`final`) that threw: the open batch was emptied, as nothing seals after.
 * Its message is the seal's; `points` and `rawBytes` are what the batch held; `journaled`: the
 * open batch's journal chain keeps its exports (the next run replays a chain without a seal).
 */
export class UnsealedBatchError extends Error {
  readonly points: number;
  readonly rawBytes: number;
  readonly journaled: boolean;

  constructor(cause: unknown, held: { points: number; rawBytes: number }, journaled: boolean) {
    super(describeError(cause), { cause });
    this.name = 'UnsealedBatchError';
    this.points = held.points;
    this.rawBytes = held.rawBytes;
    this.journaled = journaled;
  }
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
  readonly #open: RecordOpenBatch | ColumnOpenBatch<Item>;
  /**
   * Appends and seals run as one uninterrupted step. Today that step has no await, so the
   * mutex only queues it behind steps already waiting; it is kept so that a future await
   * inside it (an asynchronous budget decision, say) could not interleave two seals.
   */
  readonly #mutex = new Mutex();
  #ageTimer: NodeJS.Timeout | undefined;
  /** Whether the batch was empty before the append under way (its age timer starts then). */
  #wasEmpty = false;
  /** The items of the export under way that were appended (none until it is). */
  #appendedItems = 0;

  constructor(options: AdmissionOptions, parts: AdmissionParts<Item>) {
    this.#options = options;
    this.#parts = parts;
    this.#open = parts.open;
  }

  /** Appends one export; answers FAILED only when it cannot fit under the memory bound. */
  async accept(pending: PendingExport<Item>): Promise<ExportResult> {
    // Filled as batches are sealed: one sealed before a later step threw (the journal's copy,
    // say) is admitted to the budget already, and must go on to be stored all the same.
    const sealed: SealedBatch[] = [];
    try {
      return await this.#mutex.runExclusive(() => this.#accept(pending, sealed));
    } finally {
      for (const batch of sealed) this.#parts.onSealed(batch);
    }
  }

  /**
   * Seals the open batch now (flush, shutdown, or its age). A seal that throws leaves the items
   * in the open batch, whose age timer starts again; unless `final` (shutdown: nothing seals
   * after): then the batch is emptied, and the rejection is an UnsealedBatchError saying what it
   * held, so that its bytes leave the memory bound and its items are counted.
   */
  async sealNow(final = false): Promise<void> {
    const sealed = await this.#mutex.runExclusive(() => this.#seal(final));
    if (sealed !== undefined) this.#parts.onSealed(sealed);
  }

  // ---- inside the mutex: no I/O, no await ----

  #accept(pending: PendingExport<Item>, sealed: SealedBatch[]): ExportResult {
    const open = this.#open;
    this.#wasEmpty = false;
    this.#appendedItems = 0;
    const result =
      open.kind === 'records'
        ? 'record' in pending
          ? this.#appendRecord(open, pending, sealed)
          : failed('an unencoded export for a batch of records')
        : 'item' in pending
          ? this.#appendItem(open, pending, sealed)
          : failed('a record for a batch of columns');
    if (result.code === ExportResultCode.SUCCESS) this.#afterAppend(sealed);
    return result;
  }

  /** A record: its size is known, so room is made before it is appended. */
  #appendRecord(
    open: RecordOpenBatch,
    { record, points, inputs }: { record: Buffer; points: number; inputs: KeyInputs },
    sealed: SealedBatch[],
  ): ExportResult {
    // Nothing to store (a resource without items): no object is made of it, no clock started.
    if (points === 0) return SUCCESS;
    const { budget } = this.#parts;
    const sealFirst =
      !open.isEmpty &&
      (open.growth(record, false) > this.#room(open.bytes) || open.keyDiffers(inputs));
    // The journal's copy counts too: room for both, or the export goes back.
    const growth =
      open.growth(record, sealFirst) +
      (this.#parts.journal?.cost(record.length, inputs.attributes, sealFirst) ?? 0);
    if (!budget.makeRoom(growth)) return this.#noRoom(points, growth);
    if (sealFirst) {
      const blocked = this.#sealFirst(sealed);
      if (blocked !== undefined) return this.#notSealed(points, growth, blocked.error);
    }
    this.#wasEmpty = open.isEmpty;
    try {
      open.append(record, points, inputs);
    } catch (error) {
      // Nothing of it was appended (append is all or nothing); a batch sealed first still goes on.
      this.#parts.appendFailed(error);
      return failed(`could not append: ${describeError(error)}`);
    }
    this.#appendedItems = points;
    // Copied now (memory only): the frame may free the record once it has compressed it.
    this.#copy(() => this.#parts.journal?.append(record, points, inputs));
    return SUCCESS;
  }

  /**
   * An export appended as it is: the append is its one walk, which also measures it. One that
   * takes a batch past maxBatchBytes is taken back and appended to a fresh batch (a second walk,
   * once per batch sealed by size); one that cannot fit under the memory bound is taken back.
   */
  #appendItem(
    open: ColumnOpenBatch<Item>,
    { item, inputs, times }: { item: Item; inputs: KeyInputs; times: boolean },
    sealed: SealedBatch[],
  ): ExportResult {
    const { budget } = this.#parts;
    if (!open.isEmpty && open.keyDiffers(inputs)) {
      const blocked = this.#sealFirst(sealed);
      // Its bytes are not known without appending it (the batch holds another key's items).
      if (blocked !== undefined)
        return this.#notSealed(this.#parts.itemsOf?.(item) ?? 0, 0, blocked.error);
    }
    let mark = open.mark();
    let before = open.bytes;
    let points: number;
    this.#wasEmpty = open.isEmpty;
    try {
      points = open.append(item, inputs, times);
      const growth = open.bytes - before;
      if (!this.#wasEmpty && growth > this.#room(before)) {
        open.rollback(mark);
        const blocked = this.#sealFirst(sealed);
        if (blocked !== undefined) return this.#notSealed(points, growth, blocked.error);
        mark = open.mark();
        before = open.bytes;
        this.#wasEmpty = true;
        points = open.append(item, inputs, times);
      }
    } catch (error) {
      // Nothing of it was appended (append is all or nothing); a batch sealed first still goes on.
      this.#parts.appendFailed(error);
      return failed(`could not append: ${describeError(error)}`);
    }
    // Room for what it took (its first-seen strings included) and the journal's copy of it, or
    // it goes back out.
    const { journal, journalEncode } = this.#parts;
    const copy =
      journal !== undefined && journalEncode !== undefined
        ? this.#copy(() => journalEncode(item))
        : undefined;
    const journalBytes =
      copy === undefined ? 0 : (journal?.cost(copy.record.length, inputs.attributes, false) ?? 0);
    if (!budget.makeRoom(journalBytes)) {
      const growth = open.bytes - before + journalBytes;
      open.rollback(mark);
      return this.#noRoom(points, growth);
    }
    this.#appendedItems = points;
    if (copy !== undefined) {
      this.#copy(() =>
        journal?.append(copy.record, copy.points, {
          ...inputs,
          dataTimeMillis: copy.dataTimeMillis,
        }),
      );
    }
    return SUCCESS;
  }

  /**
   * A step of the journal's copy, once the export is in the open batch: one that throws does not
   * take the export back (it is stored all the same, so it answers SUCCESS); the journal is told,
   * and counts and reports it. Undefined if it threw.
   */
  #copy<T>(step: () => T): T | undefined {
    try {
      return step();
    } catch (error) {
      this.#parts.journal?.copyFailed(error);
      return undefined;
    }
  }

  #noRoom(points: number, bytes: number): ExportResult {
    this.#parts.owner.outcomes.exportRejectedForRoom(points, bytes);
    // Room held by other signals' open batches comes back once they are sealed and stored.
    this.#parts.budget.sealOthers(this.#parts.owner, bytes);
    return failed(`maxBufferedBytes (${this.#parts.budget.limit}) reached`);
  }

  /**
   * Seals the open batch before an export that must go to a fresh one. If the seal throws, the
   * batch keeps its items (tried again at its age) and the error is returned: the export cannot
   * be taken.
   */
  #sealFirst(sealed: SealedBatch[]): { error: unknown } | undefined {
    try {
      this.#pushSealed(sealed);
      return undefined;
    } catch (error) {
      return { error };
    }
  }

  /** An export not taken, as the open batch it must follow could not be sealed: counted. */
  #notSealed(points: number, bytes: number, error: unknown): ExportResult {
    this.#parts.owner.outcomes.exportNotSealed(points, bytes, error);
    return failed(
      `could not seal the open batch before this export (${describeError(error)}): not taken`,
    );
  }

  /**
   * Counted, and sealed if full; the age timer starts with a batch's first export that holds
   * items (a Parquet export of none leaves the batch empty: no clock for the batch to come).
   */
  #afterAppend(sealed: SealedBatch[]): void {
    const { budget } = this.#parts;
    // What the growth could not foresee (a record batch's framing): room now.
    budget.makeRoom(0);
    // This exporter's own: in a group the budget holds the others' too.
    const { owner, journal } = this.#parts;
    owner.outcomes.appended(budget.heldBy(owner, this.#open, journal), this.#appendedItems);
    if (this.#room(this.#open.bytes) === 0) {
      try {
        this.#pushSealed(sealed);
      } catch (error) {
        // The export is in the open batch, which keeps it (tried again at its age): its answer
        // is SUCCESS; the failure is reported as a seal by age that throws is.
        this.#parts.owner.outcomes.sealDeferred(error);
      }
    } else if (this.#wasEmpty && !this.#open.isEmpty) {
      this.#startAge();
    }
  }

  /**
   * The bytes an open batch of `bytes` still takes: the one decision of its size. It is full
   * (sealed) once it holds maxBatchBytes (none left, also when a seal that threw left it there,
   * or its first export alone was larger); an export that adds more than this goes to a fresh
   * batch (one that adds nothing, of no items, never does).
   */
  #room(bytes: number): number {
    return Math.max(0, this.#options.maxBatchBytes - bytes);
  }

  /** The open batch's age timer: it is sealed maxBatchAgeMillis from now. */
  #startAge(): void {
    clearTimeout(this.#ageTimer);
    // A seal that throws is reported as flush and shutdown report it, never left unhandled
    // (Node.js ends the process on an unhandled rejection).
    this.#ageTimer = setTimeout(
      () =>
        void this.sealNow().catch((error: unknown) =>
          this.#parts.owner.outcomes.sealDeferred(error),
        ),
      this.#options.maxBatchAgeMillis,
    );
    // An open batch never keeps the process alive: shutdown() is what flushes it.
    this.#ageTimer.unref();
  }

  #pushSealed(list: SealedBatch[]): void {
    const batch = this.#seal();
    if (batch !== undefined) list.push(batch);
  }

  /** Swaps the open batch out. The caller hands the result on outside the mutex. */
  #seal(final = false): SealedBatch | undefined {
    clearTimeout(this.#ageTimer);
    this.#ageTimer = undefined;
    if (this.#open.isEmpty) return undefined;
    let contents: SealedContents;
    try {
      contents = this.#open.take();
    } catch (error) {
      // The column builders' seal threw: the items are still in the open batch. Without its age
      // timer they would wait for the batch to fill or a flush: it is tried again at its age.
      if (!final) {
        if (!this.#open.isEmpty) this.#startAge();
        throw error;
      }
      const held = this.#open.discard();
      throw new UnsealedBatchError(error, held, this.#parts.journal?.unsealed() ?? false);
    }
    const batch = SealedBatch.seal(contents);
    const chain = this.#parts.journal?.sealed(batch);
    if (chain !== undefined) batch.journaled(chain);
    this.#parts.budget.admit(batch, batch.rawBytes, this.#parts.owner);
    this.#parts.owner.outcomes.sealed();
    return batch;
  }
}
