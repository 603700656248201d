import { join } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { deadlineTimer, settleWithin } from '../base/deadline.js';
import { plural } from '../base/log.js';
import type { OpenJournal } from '../pipeline/journal-port.js';
import type { KeyInputs } from '../pipeline/open-batch.js';
import { SealedBatch } from '../pipeline/sealed-batch.js';
import { describeError } from '../s3/errors.js';
import { type DiskDeadline, diskErrorCode } from './disk-deadline.js';
import type { SpoolFileHandle, SpoolFileSystem } from './file-system.js';
import {
  decodePart,
  ENTRY_HEADER_BYTES,
  encodeSegmentHeader,
  JournalFormatError,
  type JournalRecordFormat,
  PendingEntries,
  parsePartName,
  partName,
  type RecordEntry,
  type SealEntry,
  sealBytes,
} from './journal-format.js';
import type { KeeperReports } from './keeper-reports.js';

export interface JournalOptions {
  /** The signal whose exports are journaled (each signal's spool has a journal of its own). */
  signal: string;
  /** The format of the records this run writes. A replay takes a chain of either format. */
  format: JournalRecordFormat;
  /** The group commit's interval: pending entries are written and fsynced once per interval. */
  syncMillis: number;
  /** A chain whose entries the disk has not taken past this many bytes is given up. */
  maxPendingBytes: number;
  /** Bytes an object of `count` records of `format` adds around them (the batch's rawBytes). */
  overhead(count: number, format: JournalRecordFormat): number;
  /**
   * A chain of this signal quarantined at replay, a batch lost: the items and bytes of the
   * records that could still be read, for the exporter's drop counts.
   */
  lost?: ((points: number, rawBytes: number) => void) | undefined;
  /**
   * Exports of the open batch that shutdown could not seal, whose chain unsealed() kept for the
   * next run: shutdown's last commit did not write them, so they are lost. Their items and record
   * bytes, for the exporter's drop counts.
   */
  unwritten?: ((points: number, rawBytes: number) => void) | undefined;
}

/** Where the journal writes: `spoolDir/journal`, once the spool is ours. */
export interface JournalDisk {
  dir: string;
  quarantineDir: string;
  fs: SpoolFileSystem;
  /** The spool's deadline: every journal operation runs under it. */
  disk: DiskDeadline;
}

/**
 * One open batch's exports, from its first append until its batch is durable in the spool or
 * stored: `live` while it is written, `given-up` when the disk did not take it (what is on disk
 * stays until the batch is done), `retired` once the batch no longer needs it (its files go).
 */
interface Chain {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly pending: PendingEntries;
  seq: number;
  /** The part being written, or the next to make: a part is never written after a failure. */
  part: number;
  handle: SpoolFileHandle | undefined;
  /** Parts that may be on disk. */
  parts: number[];
  state: 'live' | 'given-up' | 'retired';
  /** unsealed() kept it for the next run to replay (the exporter said its exports stay). */
  kept: boolean;
  /** The items and record bytes of the exports in `pending` (the seal's entry aside). */
  pendingItems: { points: number; rawBytes: number };
  /** The group commit's write of it in flight, if any: its deletion waits for it. */
  writing: Promise<unknown> | undefined;
  gone: Promise<void>;
  resolveGone: () => void;
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === 'ENOENT';

/**
 * The open batch's journal (decision 22): every export appended to the open batch is copied
 * into memory (inside the admission mutex, no I/O), and once per `syncMillis` what is pending is
 * written and fsynced off the event loop, under the spool's disk deadline: a group commit. So a
 * crash (kill -9, OOM) loses at most the exports of the last interval plus one write and fsync,
 * whatever the batch age.
 *
 * An open batch is a chain of files, `{chain}.{part}.journal` (src/spool/journal-format.ts). A
 * sealed batch carries its chain's name; the chain is deleted once the batch's spool file (which
 * names it) is durable, or once the batch is stored. A restart replays every chain no spool file
 * names, into a batch keyed by the chain's seal (one is written first if the batch was open), so
 * a replay that dies and runs again makes the same object, which a conditional write refuses to
 * store twice. A failed write or fsync is never retried on the same file: the entries go into
 * the next part. The pending entries count in the memory budget (`bytes`).
 */
export class OpenBatchJournal implements OpenJournal {
  readonly #options: JournalOptions;
  readonly #reports: KeeperReports;
  #disk: JournalDisk | undefined;
  #open: Chain | undefined;
  /** This process's chains not yet deleted from disk, in creation order. */
  readonly #chains = new Map<string, Chain>();
  /** The group commits, one at a time. */
  #work: Promise<void> = Promise.resolve();
  /**
   * Deletions of retired chains, one at a time, beside the commits: a slow deletion must not hold
   * up the next commit, which bounds what a crash loses.
   */
  #deletions: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #deleting = false;
  #closed = false;
  /** close() has closed the chains' files: a part a write makes after that is closed by it. */
  #filesClosed = false;
  #suspended = false;

  constructor(options: JournalOptions, reports: KeeperReports) {
    this.#options = options;
    this.#reports = reports;
  }

  /** Memory held by entries not yet durable, counted against maxBufferedBytes. */
  get bytes(): number {
    let bytes = 0;
    for (const chain of this.#chains.values()) bytes += chain.pending.bytes;
    return bytes;
  }

  /**
   * The spool is ours: the journal writes from now on. Until then entries wait in memory (a
   * chain is given up past maxPendingBytes), so the first exports of a run are journaled too.
   */
  attach(disk: JournalDisk): void {
    this.#disk = disk;
    this.#suspended = false;
    this.#arm();
  }

  /**
   * The spool is not ours for now (another owner's lock, or it cannot be opened): nothing could be
   * written, so nothing is kept. Open batches until it is adopted are not journaled.
   */
  suspend(): void {
    if (this.#disk !== undefined) return;
    this.#suspended = true;
    for (const chain of this.#chains.values()) {
      chain.state = 'given-up';
      chain.pending.clear();
    }
  }

  // ---- inside the admission mutex: memory only ----

  cost(recordBytes: number, attributes: Readonly<Record<string, string>>, fresh: boolean): number {
    if (this.#closed || this.#suspended) return 0;
    const chain = fresh ? undefined : this.#open;
    if (chain !== undefined && chain.state !== 'live') return 0;
    const held = chain === undefined ? 0 : chain.pending.bytes;
    const growth =
      chain === undefined
        ? PendingEntries.chunksFor(ENTRY_HEADER_BYTES + recordBytes) + sealBytes(attributes)
        : chain.pending.growth(recordBytes);
    // Past maxPendingBytes the chain is given up and its entries freed: nothing more is held.
    return held + growth > this.#options.maxPendingBytes ? 0 : growth;
  }

  append(record: Uint8Array, points: number, inputs: KeyInputs): void {
    if (this.#closed || this.#suspended) return;
    let chain = this.#open;
    if (chain === undefined) {
      chain = this.#newChain(inputs.attributes);
      chain.pending.reserveSeal(inputs.attributes);
      this.#open = chain;
    }
    if (chain.state !== 'live') return;
    chain.pending.record(chain.seq++, points, inputs.dataTimeMillis, record);
    chain.pendingItems.points += points;
    chain.pendingItems.rawBytes += record.length;
    if (chain.pending.bytes > this.#options.maxPendingBytes) this.#giveUp(chain);
    this.#arm();
  }

  copyFailed(error: unknown): void {
    if (this.#closed || this.#suspended) return;
    // A chain that misses an export would replay the batch without it: the batch is no longer
    // journaled (it is stored from memory, or from its spool file once sealed).
    const chain = this.#open ?? this.#newChain({});
    this.#open = chain;
    if (chain.state === 'live') {
      chain.state = 'given-up';
      chain.pending.clear();
    }
    this.#reports.journalFailed(
      'copy',
      error,
      'the open batch is no longer journaled (a crash before its spool file is written would lose it); the next one is',
    );
  }

  sealed(batch: SealedBatch): string | undefined {
    const chain = this.#open;
    this.#open = undefined;
    if (chain === undefined) return undefined;
    // Stored: the chain goes, also for a batch the spool never saw (stored before it was ours).
    const name = chain.name;
    void batch.settled.then((outcome) => {
      if (outcome === 'uploaded') this.retire(name);
    });
    if (chain.state === 'given-up' && chain.parts.length === 0) {
      // Nothing of it on disk, nothing to keep.
      this.#chains.delete(name);
      chain.resolveGone();
      return undefined;
    }
    if (chain.state === 'live') {
      chain.pending.seal({
        id: batch.id,
        sealedAt: batch.sealedAt.getTime(),
        attributes: batch.attributes,
        dataTimeMillis: batch.dataTimeMillis,
        records: chain.seq,
      });
      this.#arm();
    }
    return chain.name;
  }

  unsealed(): boolean {
    const chain = this.#open;
    this.#open = undefined;
    if (chain === undefined) return false;
    chain.pending.releaseSeal();
    // Ours now and not closed: the last commit (close()) writes what is pending.
    if (chain.state === 'live' && this.#disk !== undefined && !this.#closed) {
      chain.kept = true;
      return true;
    }
    // Nothing will write it (the spool never became ours: close() would free its entries), or it
    // misses exports: what of it is on disk goes, so that no run replays part of the batch.
    this.retire(chain.name);
    return false;
  }

  // ---- the batch's side ----

  /**
   * The batch of `chain` no longer needs it (durable in the spool, stored, or dropped): its
   * files are deleted, oldest part first, so the seal (in the last part) goes last.
   */
  retire(name: string): void {
    const chain = this.#chains.get(name);
    if (chain === undefined || chain.state === 'retired') return;
    chain.state = 'retired';
    chain.pending.clear();
    if (this.#open === chain) this.#open = undefined;
    this.#scheduleDeletions();
  }

  /**
   * The batch of `name` is about to be uploaded without a spool file (its write failed or
   * overran): its seal must be on disk before its first attempt. Otherwise a crash after the PUT
   * landed leaves a chain without a seal, and the restart replays it under a new key: the same
   * records stored twice. A group commit runs now; if it did not make the seal durable (or the
   * chain was given up), the chain is deleted instead, and the batch is in memory only, as any
   * batch whose spool write failed. Only disk calls are waited for, each under the disk deadline
   * (failing at once while an earlier one hangs). A chain the disk did not delete stays, to be
   * deleted later, and the upload goes ahead: 'kept'.
   */
  async secure(name: string): Promise<'sealed' | 'deleted' | 'kept'> {
    const chain = this.#chains.get(name);
    if (chain === undefined) return 'deleted'; // nothing of it on disk
    if (chain.state === 'live') {
      await this.#serial(() => this.#commit());
      if (chain.state === 'live' && chain.pending.isEmpty) return 'sealed';
    }
    this.retire(name);
    await this.#deletions; // the deletion, queued by retire()
    return this.#chains.has(name) ? 'kept' : 'deleted';
  }

  /**
   * Shutdown gives up batches not stored: a group commit runs now, and the chains of `names`
   * that it left whole on disk (every entry and the seal written and fsynced) are returned. Their
   * batches are replayed by the next run, so they are not lost. It waits for the commit at most
   * `graceMillis` (a disk that stops answering now would hold shutdown for spoolTimeoutMillis):
   * a chain whose commit has not ended by then does not count as whole.
   */
  async whole(names: string[], graceMillis: number): Promise<Set<string>> {
    const committed =
      names.length === 0 ||
      settleWithin(
        this.#serial(() => this.#commit()),
        graceMillis,
      );
    if (!(await committed)) return new Set();
    return new Set(
      names.filter((name) => {
        const chain = this.#chains.get(name);
        return chain?.state === 'live' && chain.pending.isEmpty && chain.parts.length > 0;
      }),
    );
  }

  /**
   * The chains a spool file names, before that file is deleted: those of an earlier run that no
   * replay took (it waits for the next start) are deleted now, so the next start cannot replay a
   * batch whose file is gone. Resolves once they are; rejects if the journal cannot be listed.
   */
  async forget(names: readonly string[]): Promise<void> {
    const d = this.#disk;
    const unknown = names.filter((name) => !this.#chains.has(name));
    if (d !== undefined && unknown.length > 0) {
      const listed = await d.disk.run(() => d.fs.readdir(d.dir));
      for (const name of unknown) {
        if (this.#chains.has(name)) continue;
        const parts = listed.flatMap((file) => {
          const parsed = parsePartName(file);
          return parsed?.chain === name ? [parsed.part] : [];
        });
        if (parts.length > 0)
          this.#forget(
            name,
            parts.sort((a, b) => a - b),
          );
      }
    }
    await Promise.all(names.map((name) => this.gone(name)));
  }

  /**
   * Whether the journal holds a part of any of `names` (an unusable spool file's chains: the
   * replay then takes its batch); undefined when the journal cannot be listed now.
   */
  async holdsAny(names: readonly string[]): Promise<boolean | undefined> {
    const d = this.#disk;
    if (d === undefined || names.length === 0) return false;
    let listed: string[];
    try {
      listed = await d.disk.run(() => d.fs.readdir(d.dir));
    } catch {
      return undefined;
    }
    const wanted = new Set(names);
    return listed.some((file) => wanted.has(parsePartName(file)?.chain ?? ''));
  }

  /** Resolves once the files of `chain` are deleted (at once for a chain not of this process). */
  gone(name: string): Promise<void> {
    return this.#chains.get(name)?.gone ?? Promise.resolve();
  }

  // ---- the disk's side ----

  #newChain(attributes: Readonly<Record<string, string>>, name = uuidv7(), part = 0): Chain {
    let resolveGone!: () => void;
    const gone = new Promise<void>((resolve) => {
      resolveGone = resolve;
    });
    const chain: Chain = {
      name,
      attributes,
      pending: new PendingEntries(),
      seq: 0,
      part,
      handle: undefined,
      parts: [],
      state: 'live',
      kept: false,
      pendingItems: { points: 0, rawBytes: 0 },
      writing: undefined,
      gone,
      resolveGone,
    };
    this.#chains.set(name, chain);
    return chain;
  }

  #giveUp(chain: Chain): void {
    chain.state = 'given-up';
    chain.pending.clear();
    this.#reports.journalGaveUp(this.#options.maxPendingBytes);
  }

  /** The group commit runs once per interval while anything is pending. */
  #arm(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#serial(() => this.#commit());
    }, this.#options.syncMillis);
    // A pending group commit never keeps the process alive; shutdown() runs the last one.
    this.#timer.unref();
  }

  /** Queues a deletion of the retired chains (unless one is queued and not yet started). */
  #scheduleDeletions(): Promise<void> {
    if (this.#deleting) return this.#deletions;
    this.#deleting = true;
    this.#deletions = this.#deletions
      .then(async () => {
        this.#deleting = false;
        await this.#deleteRetired();
      })
      .catch(() => {});
    return this.#deletions;
  }

  #serial(step: () => Promise<void>): Promise<void> {
    this.#work = this.#work.then(step).catch(() => {});
    return this.#work;
  }

  /**
   * Writes and fsyncs what each live chain has pending, the chains side by side (each in its own
   * files: a slow fsync of one does not hold up another's); retired chains the disk did not delete
   * yet are queued for deletion again (beside the commits, never in their way).
   */
  async #commit(): Promise<void> {
    const disk = this.#disk;
    if (disk === undefined) return;
    const writes = [...this.#chains.values()]
      .filter((chain) => chain.state === 'live' && !chain.pending.isEmpty)
      .map(async (chain) => {
        const writing = this.#write(disk, chain);
        chain.writing = writing;
        try {
          return await writing;
        } finally {
          chain.writing = undefined;
        }
      });
    let chunks = 0;
    // Every write ends before the commit does: the next one must not write a chain still written.
    for (const done of await Promise.allSettled(writes))
      if (done.status === 'fulfilled') chunks += done.value;
    // The pool keeps what this interval used, for the next one.
    PendingEntries.trimPool(chunks);
    for (const chain of this.#chains.values()) {
      if (chain.state === 'retired') {
        void this.#scheduleDeletions();
        break;
      }
    }
    for (const chain of this.#chains.values()) {
      if (chain.state === 'live' && !chain.pending.isEmpty) this.#arm();
    }
  }

  /** Writes a chain's pending entries; returns the chunks they took. */
  async #write(d: JournalDisk, chain: Chain): Promise<number> {
    const taken = chain.pending.take();
    const items = chain.pendingItems;
    chain.pendingItems = { points: 0, rawBytes: 0 };
    const handle = chain.handle;
    const header =
      handle === undefined
        ? encodeSegmentHeader({
            signal: this.#options.signal,
            format: this.#options.format,
            chain: chain.name,
            part: chain.part,
            attributes: chain.attributes,
          })
        : undefined;
    if (handle === undefined && !chain.parts.includes(chain.part)) chain.parts.push(chain.part);
    const path = join(d.dir, partName(chain.name, chain.part));
    try {
      chain.handle = await d.disk.run(
        () => writeAndSync(d, path, handle, header, taken),
        // Done after it was abandoned: never written again.
        (late) => void late.close().catch(() => {}),
      );
      chain.pending.free(taken);
      this.#reports.journalSynced();
      if (this.#filesClosed) {
        // A write that ended past close()'s grace: nothing writes this file again.
        const late = chain.handle;
        chain.handle = undefined;
        void late?.close().catch(() => {});
      }
    } catch (error) {
      // Never again this part: the page cache may hold anything after a failed fsync.
      chain.handle = undefined;
      void handle?.close().catch(() => {});
      chain.part++;
      const code = diskErrorCode(error);
      if (chain.state !== 'live') {
        chain.pending.free(taken);
        // Given up while it was written (its entries past the bound): the disk fault is one of
        // its own, counted by its code. A retired chain's batch is durable or stored.
        if (chain.state === 'given-up')
          this.#reports.journalFailed(code, error, 'that batch is no longer journaled');
        return taken.length;
      }
      if (this.#closed) {
        // Shutdown's last commit, failed past close(): no commit runs after it, so nothing
        // writes these entries, and their memory must not stay counted in the budget.
        chain.pending.free(taken);
        chain.pending.clear();
        // A chain kept for the next run: the exporter said its exports stay in the journal, and
        // these do not.
        if (chain.kept) this.#options.unwritten?.(items.points, items.rawBytes);
        this.#reports.journalFailed(
          code,
          error,
          'the exporter has shut down, so its entries are not written: a start that replays ' +
            'that batch from the journal replays it without them',
        );
        return taken.length;
      }
      // Taken entries stay counted in pending.bytes until freed, and append() gives the chain
      // up past maxPendingBytes: putting them back cannot pass it.
      chain.pending.putBack(taken);
      chain.pendingItems.points += items.points;
      chain.pendingItems.rawBytes += items.rawBytes;
      this.#reports.journalFailed(
        code,
        error,
        `its entries go to a fresh file in ${this.#options.syncMillis} ms; until then a crash loses them`,
      );
    }
    return taken.length;
  }

  /**
   * Deletes the files of retired chains, each once the group commit's write of it (begun before
   * it was retired) has ended, so no part is made after its deletion; what the disk does not
   * delete is tried again at the next group commit.
   */
  async #deleteRetired(): Promise<void> {
    const d = this.#disk;
    for (const chain of [...this.#chains.values()]) {
      if (chain.state !== 'retired') continue;
      await chain.writing?.catch(() => {});
      const handle = chain.handle;
      chain.handle = undefined;
      await handle?.close().catch(() => {});
      if (d !== undefined) {
        try {
          for (const part of [...chain.parts].sort((a, b) => a - b)) {
            await d.disk
              .run(() => d.fs.unlink(join(d.dir, partName(chain.name, part))))
              .catch((error: unknown) => {
                if (!isMissing(error)) throw error;
              });
            chain.parts = chain.parts.filter((p) => p !== part);
          }
        } catch (error) {
          // The disk did not do it now: tried again at the next group commit.
          this.#reports.journalDeleteFailed(chain.name, error);
          this.#arm();
          continue;
        }
        this.#reports.journalDeleted();
      }
      this.#chains.delete(chain.name);
      chain.resolveGone();
    }
  }

  /**
   * Replays what an earlier run left: every chain no spool file names (`referenced`: those that
   * do, whose batch is on disk already) becomes a batch handed to `hand`, keyed by the chain's
   * seal, one at a time (the next chain is read once `hand` resolves, so the budget can make room
   * for it); one that has none (its batch was open) gets its seal written first, so a replay that
   * dies and runs again makes the same object. Chains that spool files name are deleted. Returns
   * the batches handed over.
   */
  async replay(
    referenced: ReadonlySet<string>,
    hand: (batch: SealedBatch) => unknown,
  ): Promise<number> {
    const d = this.#disk;
    if (d === undefined) return 0;
    let names: string[];
    try {
      names = await d.disk.run(() => d.fs.readdir(d.dir));
    } catch (error) {
      this.#reports.listFailed(error);
      return 0;
    }
    const found = new Map<string, number[]>();
    for (const name of names) {
      const parsed = parsePartName(name);
      if (parsed === undefined || this.#chains.has(parsed.chain)) continue;
      const parts = found.get(parsed.chain) ?? [];
      parts.push(parsed.part);
      found.set(parsed.chain, parts);
    }
    let replayed = 0;
    for (const [name, parts] of [...found].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (this.#closed) break;
      // Taken while earlier chains were replayed: forget() of a spool file deleted meanwhile,
      // whose caller waits for that chain's deletion.
      if (this.#chains.has(name)) continue;
      parts.sort((a, b) => a - b);
      if (referenced.has(name)) {
        this.#forget(name, parts);
        continue;
      }
      const batch = await this.#replayChain(d, name, parts);
      if (batch !== undefined) {
        await hand(batch);
        replayed++;
      }
    }
    this.#reports.journalReplayed(replayed);
    return replayed;
  }

  /** A chain of an earlier run whose files only need to go. */
  #forget(name: string, parts: number[]): void {
    const chain = this.#newChain({}, name);
    chain.parts = parts;
    chain.state = 'retired';
    this.#scheduleDeletions();
  }

  async #replayChain(
    d: JournalDisk,
    name: string,
    parts: number[],
  ): Promise<SealedBatch | undefined> {
    const read = await this.#read(d, name, parts);
    if (read === undefined) return undefined;
    if ('foreign' in read) {
      // Another signal's exporter on this directory owns it (and replays it): left alone.
      this.#reports.foreign(name, read.foreign, 'journal chain', this.#options.signal);
      return undefined;
    }
    if ('reason' in read) {
      await this.#quarantine(d, name, parts, read.reason);
      return undefined;
    }
    const { records, attributes, format } = read;
    if (read.damage !== undefined)
      this.#reports.journalDamaged(name, read.damage.what, read.damage.lost);
    if (records.length === 0) {
      this.#forget(name, parts);
      return undefined;
    }
    let seal = read.seal;
    const nextPart = (parts[parts.length - 1] ?? 0) + 1;
    if (seal === undefined) {
      let oldest: number | undefined;
      for (const r of records)
        if (r.dataTimeMillis !== undefined && (oldest === undefined || r.dataTimeMillis < oldest))
          oldest = r.dataTimeMillis;
      // What a crash tore was never durable: the chain is what was read (up to its last record).
      const count = (records[records.length - 1]?.seq ?? -1) + 1;
      seal = {
        id: uuidv7(),
        sealedAt: Date.now(),
        attributes,
        dataTimeMillis: oldest,
        records: count,
      };
      if (!(await this.#writeSeal(d, name, nextPart, format, attributes, seal))) return undefined;
      parts.push(nextPart);
    }
    const chain = this.#newChain(attributes, name, nextPart + 1);
    chain.parts = parts;
    const buffers = records.map((r) => Buffer.from(r.record));
    const recordBytes = buffers.reduce((n, b) => n + b.length, 0);
    return SealedBatch.replayed({
      id: seal.id,
      sealedAt: new Date(seal.sealedAt),
      points: records.reduce((n, r) => n + r.points, 0),
      rawBytes: recordBytes + this.#options.overhead(buffers.length, format),
      attributes: seal.attributes,
      dataTimeMillis: seal.dataTimeMillis,
      records: buffers,
      recordFormat: format,
      chain: name,
    });
  }

  /**
   * A chain's parts, merged: each record once (by its number), the seal if one was written.
   * Undefined when a part cannot be read now (left for the next start); a reason when the chain
   * is not one this exporter can replay (parts of different signals or record formats, a damaged
   * header); the signal of a chain whose first readable part names another (its exporter's). A chain of the other record format than this run's is replayed as such.
   */
  async #read(
    d: JournalDisk,
    name: string,
    parts: number[],
  ): Promise<
    | {
        records: RecordEntry[];
        seal: SealEntry | undefined;
        attributes: Readonly<Record<string, string>>;
        /** The kind of record the chain holds (its first readable part's). */
        format: JournalRecordFormat;
        /** Damage to its files, for the report (undefined: none); `lost`: records went with it. */
        damage: { what: string; lost: boolean } | undefined;
      }
    | { reason: string }
    | { foreign: string }
    | undefined
  > {
    const bySeq = new Map<number, RecordEntry>();
    let seal: SealEntry | undefined;
    let attributes: Readonly<Record<string, string>> | undefined;
    let format: JournalRecordFormat | undefined;
    const damaged: string[] = [];
    /** Parts that end in bytes that are no whole entry: where missing records may have been. */
    const torn: string[] = [];
    let lastPartLost = false;
    for (const part of parts) {
      const file = partName(name, part);
      let bytes: Buffer;
      try {
        bytes = await d.disk.run(() => d.fs.readFile(join(d.dir, file)));
      } catch (error) {
        if (isMissing(error)) continue;
        this.#reports.readFailed(file, error);
        return undefined;
      }
      let decoded: ReturnType<typeof decodePart>;
      try {
        decoded = decodePart(bytes);
      } catch (error) {
        // A part whose header a crash cut short holds nothing yet.
        if (error instanceof JournalFormatError && error.message.startsWith('torn header'))
          continue;
        if (error instanceof JournalFormatError) return { reason: `${file}: ${error.message}` };
        throw error;
      }
      const h = decoded.header;
      // The first part read names another signal: another exporter's chain, not a damaged one.
      if (format === undefined && h.signal !== this.#options.signal && h.chain === name)
        return { foreign: h.signal };
      if (h.signal !== this.#options.signal)
        return { reason: `${file} holds ${h.signal}, not ${this.#options.signal}` };
      // Every part of a chain holds the records of one run: a mix is not one batch.
      if (format !== undefined && h.format !== format)
        return { reason: `${file} holds ${h.format} records, its chain's first part ${format}` };
      format ??= h.format;
      if (h.chain !== name) return { reason: `${file} names another chain, ${h.chain}` };
      attributes ??= h.attributes;
      for (const r of decoded.records) if (!bySeq.has(r.seq)) bySeq.set(r.seq, r);
      seal ??= decoded.seal;
      if (decoded.tornBytes > 0) torn.push(file);
      const dmg = decoded.damage;
      if (dmg !== undefined) {
        const what = [
          dmg.header ? 'a damaged header length' : '',
          dmg.skipped > 0
            ? `${plural(dmg.skipped, 'entry', 'entries')} that failed its checksum`
            : '',
          dmg.cut > 0 ? `a damaged entry length, ${dmg.cut} bytes after it unreadable` : '',
        ];
        damaged.push(`${file} has ${what.filter((w) => w !== '').join(', ')}`);
      }
      // Damage in an earlier part loses records only if no later part has them (a gap tells);
      // in the last part, what it lost may be its last records, which no gap shows.
      lastPartLost = dmg !== undefined && (dmg.skipped > 0 || dmg.cut > 0);
    }
    const records = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
    // Numbers missing below the highest one read, or below the count the seal gives: records the
    // damage lost. Only an unsealed chain's torn tail (the last interval before a crash) loses
    // its highest quietly; a sealed chain was whole when sealed, so a tear that lost records of
    // it is damage, in whatever part (an earlier part ends torn also where a write failed: the
    // next part holds what it lost). Without a seal's count (one of an earlier version), a
    // damaged part may still have lost its last records. Without damage, only a gap counts from
    // the first record read: the first parts of a chain may be gone because a crash interrupted
    // its deletion (oldest part first, the seal last) once its batch was safe.
    const last = Math.max(records[records.length - 1]?.seq ?? -1, (seal?.records ?? 0) - 1);
    const first = damaged.length > 0 ? 0 : (records[0]?.seq ?? last + 1);
    const missing = Math.max(0, last + 1 - first - records.length);
    const notes = [...damaged];
    if (missing > 0)
      notes.push(
        `${plural(missing, 'record')} of ${last + 1} missing` +
          (torn.length > 0 ? ` (${torn.join(', ')}: not whole at the end)` : ''),
      );
    const damage =
      notes.length === 0
        ? undefined
        : { what: notes.join('; '), lost: lastPartLost || missing > 0 };
    return {
      records,
      seal,
      attributes: attributes ?? {},
      format: format ?? this.#options.format,
      damage,
    };
  }

  /** Writes the seal of a chain an earlier run left open, durably, as a part of its own. */
  async #writeSeal(
    d: JournalDisk,
    name: string,
    part: number,
    format: JournalRecordFormat,
    attributes: Readonly<Record<string, string>>,
    seal: SealEntry,
  ): Promise<boolean> {
    const header = encodeSegmentHeader({
      signal: this.#options.signal,
      // The chain's, which may not be this run's: its parts must agree.
      format,
      chain: name,
      part,
      attributes,
    });
    const entries = new PendingEntries();
    entries.seal(seal);
    const taken = entries.take();
    try {
      const handle = await d.disk.run(
        () => writeAndSync(d, join(d.dir, partName(name, part)), undefined, header, taken),
        (late) => void late.close().catch(() => {}),
      );
      await handle.close().catch(() => {});
      return true;
    } catch (error) {
      void d.disk.run(() => d.fs.unlink(join(d.dir, partName(name, part)))).catch(() => {});
      this.#reports.journalFailed(
        diskErrorCode(error),
        error,
        `the open batch an earlier run left in ${name} is replayed at the next start`,
      );
      return false;
    } finally {
      entries.free(taken);
    }
  }

  async #quarantine(d: JournalDisk, name: string, parts: number[], reason: string): Promise<void> {
    const readable = await this.#readable(d, name, parts);
    const moved = new Set<number>();
    let failure: unknown;
    for (const part of parts) {
      const file = partName(name, part);
      try {
        await d.disk.run(() => d.fs.rename(join(d.dir, file), join(d.quarantineDir, file)));
        moved.add(part);
      } catch (error) {
        if (isMissing(error)) moved.add(part);
        else failure ??= error;
      }
    }
    if (moved.size === 0) {
      // Still in the journal: the next start finds it again, and counts its batch then, once.
      this.#reports.journalQuarantineFailed(name, reason, failure);
      return;
    }
    // What the parts moved held is lost; a part left behind is read again at the next start.
    let lost = '';
    const held = readable === undefined ? undefined : this.#held(readable, moved);
    const left = parts.filter((part) => !moved.has(part)).map((part) => partName(name, part));
    // A part left behind with the records: the next start may still replay them.
    if (held !== undefined && (held.records > 0 || left.length === 0)) {
      this.#options.lost?.(held.points, held.rawBytes);
      lost =
        `; its batch is lost, with ${plural(held.records, 'readable record')} ` +
        `(${plural(held.points, 'item')}, counted in stats().pointsDroppedByReason['spool-corrupt'])`;
    }
    const stays =
      left.length === 0
        ? ''
        : ` (but ${left.join(', ')}: ${describeError(failure)}, read again at the next start)`;
    this.#reports.quarantined(
      name,
      `is unusable (${reason}); moved to ${d.quarantineDir}${stays}${lost}`,
      'journal chain',
    );
  }

  /** The records (each once) of the parts `moved`, their items and bytes; undefined when none is ours. */
  #held(
    readable: Map<number, { format: JournalRecordFormat; records: RecordEntry[] }>,
    moved: ReadonlySet<number>,
  ): { records: number; points: number; rawBytes: number } | undefined {
    const bySeq = new Map<number, RecordEntry>();
    let format: JournalRecordFormat | undefined;
    for (const [part, decoded] of readable) {
      if (!moved.has(part)) continue;
      format ??= decoded.format;
      for (const r of decoded.records) if (!bySeq.has(r.seq)) bySeq.set(r.seq, r);
    }
    if (format === undefined) return undefined;
    const records = [...bySeq.values()];
    const bytes = records.reduce((n, r) => n + r.record.length, 0);
    return {
      records: records.length,
      points: records.reduce((n, r) => n + r.points, 0),
      rawBytes: records.length === 0 ? 0 : bytes + this.#options.overhead(records.length, format),
    };
  }

  /**
   * What a chain that cannot be replayed still holds of this signal, read as far as it can be
   * (parts that cannot be read or decoded, or of another signal or chain, are passed over): each
   * part's records and format. Undefined when no part is this signal's.
   */
  async #readable(
    d: JournalDisk,
    name: string,
    parts: number[],
  ): Promise<Map<number, { format: JournalRecordFormat; records: RecordEntry[] }> | undefined> {
    const read = new Map<number, { format: JournalRecordFormat; records: RecordEntry[] }>();
    for (const part of parts) {
      let decoded: ReturnType<typeof decodePart>;
      try {
        const bytes = await d.disk.run(() => d.fs.readFile(join(d.dir, partName(name, part))));
        decoded = decodePart(bytes);
      } catch {
        continue;
      }
      if (decoded.header.signal !== this.#options.signal || decoded.header.chain !== name) continue;
      read.set(part, { format: decoded.header.format, records: decoded.records });
    }
    return read.size === 0 ? undefined : read;
  }

  /**
   * Shutdown: the last group commit (the seals of batches left unstored go to disk, so the next
   * run replays them under their keys) and deletions, within `graceMillis`; then files close
   * (a file a write still runs on is closed by that write when it ends).
   */
  async close(graceMillis: number): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const last = Promise.all([this.#serial(() => this.#commit()), this.#scheduleDeletions()]);
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      last,
      new Promise<void>((resolve) => {
        timer = deadlineTimer(resolve, graceMillis);
      }),
    ]);
    clearTimeout(timer);
    for (const chain of this.#chains.values()) {
      // The spool never became ours: nothing will write these entries, and their memory would
      // count against maxBufferedBytes (the group's, in an S3Exporters) for good.
      if (this.#disk === undefined) chain.pending.clear();
      // A write still running on it (a slow write or fsync) closes the file when it ends:
      // closed under it, its fsync would fail (EBADF) and be reported after shutdown.
      if (chain.writing !== undefined) continue;
      const handle = chain.handle;
      chain.handle = undefined;
      void handle?.close().catch(() => {});
    }
    this.#filesClosed = true;
  }
}

/** One group commit of one chain: its part made if new (and its directory fsynced), then written and fsynced. */
async function writeAndSync(
  d: JournalDisk,
  path: string,
  handle: SpoolFileHandle | undefined,
  header: Buffer | undefined,
  entries: Buffer[],
): Promise<SpoolFileHandle> {
  let h = handle;
  const made = h === undefined;
  try {
    if (h === undefined) {
      h = await d.fs.create(path);
      // The new file's name must be durable too.
      await d.fs.syncDirectory(d.dir);
    }
    await h.write(header === undefined ? entries : [header, ...entries]);
    await h.sync();
    return h;
  } catch (error) {
    if (made) await h?.close().catch(() => {});
    throw error;
  }
}
