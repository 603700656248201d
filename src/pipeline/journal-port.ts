import type { KeyInputs } from './open-batch.js';
import type { SealedBatch } from './sealed-batch.js';

/**
 * The open batch's journal, a port the spool implements (src/spool/journal.ts): a copy of each
 * export appended, so that a crash loses at most one sync interval of the open batch, whatever its
 * age. Both calls run inside the admission mutex and touch memory only: the journal writes and
 * fsyncs behind, on a timer, off the event loop.
 */
export interface OpenJournal {
  /** The bytes it holds in memory now (counted in maxBufferedBytes). */
  readonly bytes: number;
  /**
   * The bytes (counted in maxBufferedBytes) that appending a record of `recordBytes` would add
   * now, to a new chain (`fresh`: the open batch is sealed first, or none is open) of exports with
   * `attributes`, or to the open one: the admission makes room for them with the export's own.
   */
  cost(recordBytes: number, attributes: Readonly<Record<string, string>>, fresh: boolean): number;
  /** An export appended to the open batch; `record` is copied before this returns. */
  append(record: Uint8Array, points: number, inputs: KeyInputs): void;
  /**
   * The open batch was sealed as `batch`: its seal is journaled, and the next append starts a
   * new chain. Returns the name of the chain that held the batch (undefined: none did).
   */
  sealed(batch: SealedBatch): string | undefined;
  /**
   * The copy of an export appended to the open batch failed (its encoding or `append` threw):
   * the export stays in the open batch, whose journal is no longer whole. Counted and reported.
   */
  copyFailed(error: unknown): void;
  /**
   * The open batch could not be sealed at shutdown (nothing seals after) and was emptied. Its
   * chain is kept without a seal, for the next run to replay, if its entries will reach the disk
   * (the spool is this process's, the chain whole): returns true. Otherwise its entries are freed
   * and it returns false: the caller counts the items as lost. No seal entry is written either
   * way: the room kept for it is freed.
   */
  unsealed(): boolean;
}

export type { JournalRecordFormat } from './sealed-batch.js';

/** What a format journals of an export appended as it is (Parquet columns): its OTLP record. */
export type JournalEncode<Item> = (item: Item) => {
  record: Buffer;
  points: number;
  dataTimeMillis: number | undefined;
};
