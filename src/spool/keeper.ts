import { settleWithin } from '../base/deadline.js';
import { log, plural } from '../base/log.js';
import type { BatchOwner, MemoryBudget, Pager } from '../pipeline/budget.js';
import { type BatchOutcome, SealedBatch } from '../pipeline/sealed-batch.js';
import type { DropReason } from '../pipeline/stats.js';
import type { Uploader } from '../pipeline/uploader.js';
import { describeError } from '../s3/errors.js';
import { diskErrorCode } from './disk-deadline.js';
import { type LostBatch, SpoolFormatError, spoolFileBytes } from './file-format.js';
import type { OpenBatchJournal } from './journal.js';
import { type KeeperReports, LISTING } from './keeper-reports.js';
import type { MetaCheck, ScanEvent, Spool, SpoolEntry } from './spool.js';

/** What the keeper works with besides the disk: the exporter's parts it hands batches to. */
export interface KeeperParts {
  budget: MemoryBudget;
  /** The exporter whose batches this spool keeps: its pager from the moment the spool is open. */
  owner: BatchOwner;
  uploader: Uploader;
  /** Where what the spool does is counted and told (the adopter's, made before the keeper). */
  reports: KeeperReports;
  /** The open batch's journal: a batch's chain goes once the batch is durable here or stored. */
  journal?: OpenBatchJournal | undefined;
}

export interface KeeperOptions {
  maxSpoolBytes: number;
  /** Spooled batches read back into memory at once. */
  loadConcurrency: number;
  /** How often spooled batches are tried again while S3 fails (and unreadable files re-read). */
  retryEveryMillis: number;
  /** Deadline of one spool operation (the spool's own); past it the disk counts as stalled. */
  diskTimeoutMillis: number;
  /** Whether a file's metadata is one this exporter's configuration could have written. */
  check: MetaCheck;
  /**
   * A spool file of an earlier run quarantined at start, its batch lost: its items and bytes
   * when its metadata can be trusted (else undefined), for the exporter's drop counts.
   */
  lost?: ((items: { points: number; rawBytes: number } | undefined) => void) | undefined;
}

/** A spool write still running at the shutdown deadline gets this long to finish. */
const SHUTDOWN_WRITE_GRACE_MILLIS = 250;

/** A batch whose file cannot go now: its upload or its read back is under way. */
const busy = (batch: SealedBatch): boolean =>
  batch.state === 'paging-in' || batch.state === 'uploading';

/**
 * The exporter's side of the spool: makes every sealed batch durable before its first upload
 * (write-ahead), deletes the file once S3 acknowledged it, lets memory pressure page batches
 * out to disk instead of dropping them, reads them back when there is room, restores what an
 * earlier run left, and keeps the spool under maxSpoolBytes by evicting the oldest files.
 * Every disk operation has a deadline (the spool's): a stalled disk costs durability, never
 * uploads. What the disk did not do in time (read a file, list a directory, delete or move a
 * file) is tried again about every retryEveryMillis.
 */
export class SpoolKeeper implements Pager {
  readonly #spool: Spool;
  readonly #options: KeeperOptions;
  readonly #parts: KeeperParts;
  readonly #reports: KeeperReports;
  /** Batches with a file, by file name, oldest first (names are UUIDv7s: write order). */
  #byFile = new Map<string, SealedBatch>();
  /** The greatest name ever registered: no key is above it, so a greater one appends in order. */
  #greatest: string | undefined;
  /** Writes in progress, by batch: a batch is written once. */
  readonly #writes = new Map<SealedBatch, Promise<void>>();
  /** Files of `batches/` that could not be read yet; read again on the next tick. */
  readonly #unread = new Set<string>();
  /**
   * Files of settled batches still on disk because the chains they name could not be forgotten
   * (the journal could not be listed): counted in the spool's bytes, tried again.
   */
  readonly #unforgotten = new Map<SpoolEntry, { chains: readonly string[]; trying: boolean }>();
  /** Files the scan quarantined whose batch may be lost: counted once the journal is asked. */
  readonly #lost: { name: string; reason: string; lost: LostBatch }[] = [];
  /** The scan of what an earlier run left could not list a directory; it runs again. */
  #restorePending = false;
  #loading = 0;
  #reserved = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Pumps when the first batch left on disk because it still waits (see pump) may be sent. */
  #dueTimer: NodeJS.Timeout | undefined;
  #closed = false;
  /** A pump is queued for when the budget's change has run its course (see #pumpSoon). */
  #pumpQueued = false;
  readonly #stopListening: () => void;

  constructor(spool: Spool, options: KeeperOptions, parts: KeeperParts) {
    this.#spool = spool;
    this.#options = options;
    this.#parts = parts;
    this.#reports = parts.reports;
    parts.owner.pager = this;
    // A batch of any exporter sharing the budget (another signal's too) that ends frees room
    // for the batches waiting on disk here: they must not wait for a batch of ours to end.
    this.#stopListening = parts.budget.onChange(() => this.#pumpSoon());
    this.#syncGauges();
  }

  /**
   * Pumps once what changed the budget has run to its end: a batch dropped to make room for
   * another must not have that room taken by a page-in (making room would drop one more).
   */
  #pumpSoon(): void {
    if (this.#pumpQueued || this.#closed) return;
    this.#pumpQueued = true;
    queueMicrotask(() => {
      this.#pumpQueued = false;
      this.pump();
    });
  }

  /**
   * Restores the batches an earlier run left, oldest first, and starts uploading them. If a
   * directory cannot be listed (an errno error, the disk deadline), the scan runs again later.
   */
  async restore(): Promise<void> {
    let restored = 0;
    try {
      // A scan still running at shutdown reads no more, and takes nothing it read: the files
      // stay for the next run, and the closed exporter's budget holds none of them.
      await this.#spool.scan(
        this.#options.check,
        (event) => {
          if (this.#take(event)) restored++;
        },
        () => this.#closed,
      );
      this.#restorePending = false;
      this.#reports.read(LISTING);
    } catch (error) {
      this.#restorePending = true;
      this.#reports.listFailed(error);
    }
    await this.#countLost();
    if (this.#closed) return;
    if (restored > 0) {
      log.info(
        `spool ${this.#spool.dir}: restoring ${plural(restored, 'batch', 'batches')} from an earlier run`,
      );
    }
    this.#syncGauges();
    this.pump();
  }

  /** Registers what a scan found; true for a restored batch. */
  #take(event: ScanEvent): boolean {
    switch (event.kind) {
      case 'entry': {
        if (this.#closed) return false; // shut down while it was read: left for the next run
        this.#unread.delete(event.entry.name);
        this.#reports.read(event.entry.name);
        if (this.#byFile.has(event.entry.name)) return false; // a scan run again
        const batch = SealedBatch.restore(event.entry);
        this.#register(event.entry.name, batch);
        this.#parts.budget.admit(batch, 0, this.#parts.owner);
        return true;
      }
      case 'quarantined':
        this.#unread.delete(event.name);
        this.#reports.read(event.name); // read, and unusable: no read to wait for
        if (event.lost !== undefined)
          this.#lost.push({ name: event.name, reason: event.reason, lost: event.lost });
        else
          this.#reports.quarantined(
            event.name,
            `is unusable (${event.reason}); moved to ${this.#spool.dir}/quarantine`,
          );
        return false;
      case 'foreign':
        this.#unread.delete(event.name);
        this.#reports.read(event.name);
        this.#reports.foreign(event.name, event.signal);
        return false;
      case 'unreadable':
        if ((event.error as NodeJS.ErrnoException)?.code === 'ENOENT') {
          this.#unread.delete(event.name); // deleted meanwhile: nothing to restore
          this.#reports.read(event.name);
          return false;
        }
        this.#unread.add(event.name);
        this.#reports.readFailed(event.name, event.error);
        return false;
    }
  }

  /**
   * Reports the batch files the scan quarantined: a batch is lost, and counted dropped, unless
   * the journal still holds a chain its file names (the replay takes it, or counts it if it
   * cannot) or cannot be listed now (the chain, if there, waits for a replay).
   */
  async #countLost(): Promise<void> {
    for (const { name, reason, lost } of this.#lost.splice(0)) {
      const held =
        lost.chains.length === 0 ? false : await this.#parts.journal?.holdsAny(lost.chains);
      let fate: string;
      if (held !== false) {
        fate =
          held === true
            ? '; the journal still holds its batch'
            : '; the journal, which may hold its batch, could not be listed';
      } else {
        this.#options.lost?.(lost.items);
        fate =
          lost.items === undefined
            ? '; its batch is lost, its items unknown (counted in stats().batchesDropped)'
            : `; its batch is lost (${plural(lost.items.points, 'item')}, counted in stats().pointsDroppedByReason['spool-corrupt'])`;
      }
      this.#reports.quarantined(
        name,
        `is unusable (${reason}); moved to ${this.#spool.dir}/quarantine${fate}`,
      );
    }
  }

  /** Adds a file in name order, so eviction and page-in go oldest first whatever the timing. */
  #register(name: string, batch: SealedBatch): void {
    this.#byFile.set(name, batch);
    if (this.#greatest !== undefined && name < this.#greatest)
      this.#byFile = new Map([...this.#byFile].sort(([a], [b]) => (a < b ? -1 : 1)));
    else this.#greatest = name;
  }

  /**
   * Makes a compressed, named batch durable before its first upload. A failed or overdue write
   * leaves the batch in memory (counted, reported once per episode); the next write uses a
   * fresh file, and an abandoned write's file is deleted if it ever completes. A batch already
   * on disk, or being written, is not written again.
   */
  persist(batch: SealedBatch): Promise<void> {
    if (batch.spool !== undefined) return Promise.resolve();
    const running = this.#writes.get(batch);
    if (running !== undefined) return running;
    const write = this.#persist(batch).finally(() => this.#writes.delete(batch));
    this.#writes.set(batch, write);
    return write;
  }

  async #persist(batch: SealedBatch): Promise<void> {
    const body = batch.body;
    if (body === undefined || batch.isSettled || this.#closed) return;
    const meta = {
      key: batch.key,
      contentType: batch.contentType,
      points: batch.points,
      rawBytes: batch.rawBytes,
      sealedAt: batch.sealedAt.getTime(),
      // Names the chain, so a restart that finds this file deletes it instead of replaying it.
      ...(batch.journal === undefined ? {} : { journal: [batch.journal] }),
      // Whose batch it is: an exporter of another signal on this directory leaves it alone.
      ...(this.#spool.signal === undefined ? {} : { signal: this.#spool.signal }),
    };
    const size = spoolFileBytes(meta, body.length);
    if (size > this.#options.maxSpoolBytes) {
      // Written, it would evict every other file and still pass the bound: it is uploaded from
      // memory (its journal chain, if any, kept sealed as after a failed write).
      this.#reports.tooLarge(size);
      if (batch.journal !== undefined) await this.#parts.journal?.secure(batch.journal);
      return;
    }
    if (!this.#evictFor(size)) {
      // Every file that could go would not make room (the rest are being uploaded or read
      // back): written, it would pass the bound. Uploaded from memory, as one too large.
      this.#reports.noRoom(size);
      if (batch.journal !== undefined) await this.#parts.journal?.secure(batch.journal);
      return;
    }
    // Reserved while writing, so concurrent writes cannot overshoot maxSpoolBytes together.
    this.#reserved += size;
    try {
      const entry = await this.#spool.write(
        meta,
        body,
        // Finished after we gave up on it: never trusted, like a file whose fsync failed.
        (late) => this.#discard(late, 'remove'),
      );
      if (!batch.spooled(entry)) {
        // Settled while writing (uploaded, or dropped at shutdown): the file would only replay it.
        this.#discard(entry, 'remove');
        return;
      }
      this.#register(entry.name, batch);
      this.#reports.written();
      // Durable here, under its key: the journal's copy is no longer needed.
      if (batch.journal !== undefined) this.#parts.journal?.retire(batch.journal);
    } catch (error) {
      this.#reports.writeFailed(diskErrorCode(error), error);
      this.#arm(); // what the write made and could not remove is removed later
      // Uploaded from memory now: a crash must not leave its chain to replay under another key.
      if (batch.journal !== undefined) await this.#parts.journal?.secure(batch.journal);
    } finally {
      this.#reserved -= size;
    }
    this.#syncGauges();
  }

  /**
   * Evicts the oldest files until `bytes` more fit under maxSpoolBytes; false, evicting
   * nothing, when even every file that may go (not being uploaded or read back) would not do.
   */
  #evictFor(bytes: number): boolean {
    const over = this.#spool.bytes + this.#reserved + bytes - this.#options.maxSpoolBytes;
    if (over <= 0) {
      this.#reports.fitted();
      return true;
    }
    let evictable = 0;
    for (const batch of this.#byFile.values())
      if (!busy(batch)) evictable += batch.spool?.fileBytes ?? 0;
    if (evictable < over) return false;
    for (const [name, batch] of this.#byFile) {
      if (this.#spool.bytes + this.#reserved + bytes <= this.#options.maxSpoolBytes) break;
      if (busy(batch)) continue;
      this.#reports.evicted();
      if (batch.body === undefined) {
        // Only on disk: evicting it loses it (settling it deletes the file).
        this.#parts.budget.drop(batch, 'spool-full');
      } else {
        this.#byFile.delete(name);
        this.#removeFile(batch);
      }
    }
    this.#syncGauges();
    return true;
  }

  /** The budget released a batch's bytes: it waits on disk until memory and S3 allow. */
  pagedOut(_batch: SealedBatch): void {
    this.#arm();
  }

  /**
   * A batch ended: its file is no longer needed, unless it was left for the next run. Its
   * journal chain goes too, unless the batch was left or a shutdown gave it up: then the next
   * run replays it.
   */
  settled(batch: SealedBatch, outcome: BatchOutcome, reason?: DropReason): void {
    const kept = outcome === 'left-in-spool' || (outcome === 'dropped' && reason === 'shutdown');
    if (batch.journal !== undefined && !kept) this.#parts.journal?.retire(batch.journal);
    // Without a file too: one replayed from the journal and stored from memory (its spool file
    // failed) is a replayed batch; one left whole in its journal chain is on disk for the next run.
    this.#reports.settled(outcome, batch.restored);
    const entry = batch.spool;
    if (entry === undefined || outcome === 'left-in-spool') return;
    this.#byFile.delete(entry.name);
    this.#removeFile(batch);
    if (outcome === 'uploaded') this.pump();
  }

  #removeFile(batch: SealedBatch): void {
    const entry = batch.unspool();
    if (entry === undefined) return;
    const journal = this.#parts.journal;
    // The chains the file names: an earlier run's too, for a batch restored from it.
    const chains =
      batch.journal !== undefined
        ? [batch.journal]
        : batch.restored
          ? (entry.meta.journal ?? [])
          : [];
    if (chains.length === 0 || journal === undefined) {
      this.#discard(entry, 'remove');
      return;
    }
    this.#removeAfter(entry, chains);
  }

  /**
   * Deletes a file after the chains it names: a restart must not find a chain without the file.
   * Its bytes stop counting now, so an eviction under way does not evict more than it needs.
   */
  #removeAfter(entry: SpoolEntry, chains: readonly string[]): void {
    const journal = this.#parts.journal;
    if (journal === undefined) return;
    this.#spool.uncount(entry.name);
    void journal.forget(chains).then(
      () => {
        this.#unforgotten.delete(entry);
        this.#discard(entry, 'remove');
      },
      (error: unknown) => {
        // The journal could not be listed: the file stays on disk, so it counts again, and
        // both are tried again (a restart meanwhile finds it, stored already, with its chain).
        this.#spool.recount(entry);
        this.#unforgotten.set(entry, { chains, trying: false });
        this.#reports.discardFailed(entry.name, 'remove', error);
        this.#syncGauges();
        this.#arm();
      },
    );
  }

  /** The journal chains that the spool's files name: their batches are on disk already. */
  journalChains(): Set<string> {
    const chains = new Set<string>();
    for (const batch of this.#byFile.values())
      for (const chain of batch.spool?.meta.journal ?? []) chains.add(chain);
    return chains;
  }

  /** Whether every file of an earlier run was read (so journalChains() is complete). */
  get scanned(): boolean {
    return !this.#restorePending && this.#unread.size === 0;
  }

  /** Deletes a file, or moves it to quarantine; one the disk did not do is tried again later. */
  #discard(entry: SpoolEntry, action: 'remove' | 'quarantine'): void {
    void this.#spool[action](entry).then(
      () => this.#reports.discarded(),
      (error: unknown) => {
        this.#reports.discardFailed(entry.name, action, error);
        this.#arm();
      },
    );
    this.#syncGauges();
  }

  /**
   * Reads paged-out batches back into memory, oldest first, while memory and load slots allow.
   * One that still waits out a server's Retry-After (or the configuration-fault pace) stays on
   * disk until its time: in memory it could not be sent, and it would take the room of those
   * behind it that can.
   */
  pump(): void {
    if (this.#closed) return;
    const budget = this.#parts.budget;
    const now = performance.now();
    let due: number | undefined;
    for (const [name, batch] of this.#byFile) {
      if (this.#loading >= this.#options.loadConcurrency || this.#spool.stalled) break;
      const entry = batch.spool;
      if (batch.state !== 'paged-out' || entry === undefined) continue;
      const keptUntil = this.#parts.uploader.keptUntil(batch) ?? now;
      if (keptUntil > now) {
        due = Math.min(due ?? keptUntil, keptUntil);
        continue;
      }
      const size = entry.fileBytes;
      if (size > budget.limit) {
        this.#reports.oversized(name, size, budget.limit);
        continue; // can never fit: it must not hold up the files behind it
      }
      if (!budget.fits(size)) break; // oldest first: wait for room
      batch.startPageIn();
      budget.resize(batch, size);
      this.#loading++;
      void this.#load(batch, entry).finally(() => {
        this.#loading--;
        this.pump();
      });
    }
    if (due !== undefined) this.#pumpAt(due);
    this.#arm();
  }

  /** Pumps again at `at` (performance.now() time): the earliest wait this pump left on disk. */
  #pumpAt(at: number): void {
    clearTimeout(this.#dueTimer);
    this.#dueTimer = setTimeout(
      () => {
        this.#dueTimer = undefined;
        this.pump();
      },
      Math.max(0, at - performance.now()),
    );
    this.#dueTimer.unref();
  }

  async #load(batch: SealedBatch, entry: SpoolEntry): Promise<void> {
    let body: Buffer;
    try {
      body = await this.#spool.read(entry);
    } catch (error) {
      if (batch.state !== 'paging-in') return;
      if (error instanceof SpoolFormatError) this.#quarantine(batch, entry, error);
      else this.#backOnDisk(batch, entry.name, error);
      return;
    }
    this.#reports.read(entry.name);
    if (!batch.pagedIn(body)) return;
    this.#parts.budget.resize(batch, body.length);
    this.#parts.uploader.resume(batch);
  }

  /** A read that may work later (EMFILE, EIO, the disk deadline): the batch waits on disk again. */
  #backOnDisk(batch: SealedBatch, name: string, error: unknown): void {
    batch.pageInFailed();
    this.#parts.budget.resize(batch, 0);
    this.#reports.readFailed(name, error);
    this.#arm();
  }

  /** Checksum or format failed on read back: the file is corrupt, the batch lost. */
  #quarantine(batch: SealedBatch, entry: SpoolEntry, error: unknown): void {
    batch.unspool(); // moved to quarantine/, not deleted when the batch settles
    this.#byFile.delete(entry.name);
    this.#discard(entry, 'quarantine');
    this.#reports.quarantined(
      entry.name,
      `failed to read back (${describeError(error)}); moved to quarantine`,
    );
    this.#parts.budget.drop(batch, 'spool-corrupt');
    this.#syncGauges();
  }

  /** While batches wait on disk, or the disk left something undone, try again now and then. */
  #arm(): void {
    if (this.#closed || this.#timer !== undefined) return;
    let waiting =
      this.#restorePending ||
      this.#unread.size > 0 ||
      this.#spool.undone > 0 ||
      this.#unforgotten.size > 0;
    for (const batch of this.#byFile.values()) if (batch.state === 'paged-out') waiting = true;
    if (!waiting) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#retry().then(() => this.pump());
    }, this.#options.retryEveryMillis);
    this.#timer.unref();
  }

  /** Tries again what the disk did not do: list, read, delete, quarantine. */
  async #retry(): Promise<void> {
    if (this.#restorePending && !this.#spool.stalled) await this.restore();
    for (const name of [...this.#unread]) {
      if (this.#closed || this.#spool.stalled) break;
      const event = await this.#spool.scanOne(name, this.#options.check);
      // A file of tmp/ is adopted under another name (see Spool.scanOne).
      this.#unread.delete(name);
      if (event.kind !== 'unreadable') this.#reports.read(name); // read, or set aside
      this.#take(event);
    }
    await this.#countLost();
    if (!this.#closed) await this.#spool.retryUndone();
    for (const [entry, left] of this.#unforgotten) {
      if (this.#closed || this.#spool.stalled) break;
      if (left.trying) continue;
      left.trying = true; // kept until it is done: the episode goes on while it fails
      this.#removeAfter(entry, left.chains);
    }
    if (this.#spool.undone === 0 && this.#unforgotten.size === 0) this.#reports.discarded();
    this.#syncGauges();
  }

  /** Shutdown: lets writes still running finish, briefly. */
  async settleWrites(): Promise<void> {
    await settleWithin(Promise.all(this.#writes.values()), SHUTDOWN_WRITE_GRACE_MILLIS);
  }

  /**
   * Stops the timer and releases the directory lock; files stay for the next run. False if a
   * hung disk still holds the lock's removal.
   */
  close(): Promise<boolean> {
    this.#closed = true;
    this.#stopListening();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    clearTimeout(this.#dueTimer);
    this.#dueTimer = undefined;
    return this.#spool.close();
  }

  #syncGauges(): void {
    this.#reports.gauges(this.#spool.files, this.#spool.bytes);
  }
}
