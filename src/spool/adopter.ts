import { join } from 'node:path';
import { settleWithin } from '../base/deadline.js';
import { type Episodes, log } from '../base/log.js';
import type { BatchOwner, MemoryBudget } from '../pipeline/budget.js';
import type { SealedBatch } from '../pipeline/sealed-batch.js';
import type { SpoolStats } from '../pipeline/stats.js';
import type { Uploader } from '../pipeline/uploader.js';
import { describeError } from '../s3/errors.js';
import { DiskDeadline, DiskDeadlineError } from './disk-deadline.js';
import type { SpoolFileSystem } from './file-system.js';
import { type JournalOptions, OpenBatchJournal } from './journal.js';
import { type KeeperOptions, SpoolKeeper } from './keeper.js';
import { KeeperReports } from './keeper-reports.js';
import { LOCK_TIMING, type LockTiming, type SpoolClaim } from './lock.js';
import { Spool, type SpoolOpening } from './spool.js';

/** Shutdown waits this long for a try still running (a few ms on a working disk) to end. */
const CLOSE_GRACE_MILLIS = 1_000;

export interface AdopterOptions extends KeeperOptions {
  dir: string;
  fs: SpoolFileSystem;
  /** The exporter's signal (`metrics`, `traces`, `logs`): its spool files name it. */
  signal: string;
  /** The lock's intervals; default LOCK_TIMING. */
  lock?: LockTiming;
  /** The open batch's journal (journalSyncMillis > 0); none when undefined. */
  journal?: JournalOptions | undefined;
}

/** The exporter's parts the spool works with, and the record it counts in. */
export interface AdopterParts {
  budget: MemoryBudget;
  /** The exporter whose batches the spool keeps. */
  owner: BatchOwner;
  uploader: Uploader;
  stats: SpoolStats;
  episodes: Episodes;
  /**
   * Takes a batch replayed from the journal: admitted to the budget (room made for it) and
   * prepared; the replay rebuilds the next chain once it resolves.
   */
  replay?: ((batch: SealedBatch) => Promise<void>) | undefined;
}

/**
 * The exporter's spool from construction to shutdown. The constructor only claims the directory
 * in this process (claimSpoolDir, no disk I/O); opening it (its directories and the lock) runs
 * in the background under the disk deadline. Until it is ours (another process holds the lock,
 * the directory cannot be opened, the disk does not answer), batches stay in memory within
 * maxBufferedBytes, reported once, and the directory is tried again every `lock.retryMillis`.
 * It is adopted as soon as the lock is free or provably stale: then what it holds is replayed,
 * and the batches still pending are written ahead. A live owner's lock is never taken.
 */
export class SpoolAdopter {
  readonly dir: string;
  readonly #options: AdopterOptions;
  readonly #budget: MemoryBudget;
  readonly #owner: BatchOwner;
  readonly #uploader: Uploader;
  readonly #reports: KeeperReports;
  readonly #replay: ((batch: SealedBatch) => Promise<void>) | undefined;
  /** The open batch's journal; it writes once the spool is ours. */
  readonly journal: OpenBatchJournal | undefined;
  readonly #claim: SpoolClaim;
  readonly #disk: DiskDeadline;
  readonly #lock: LockTiming;
  #keeper: SpoolKeeper | undefined;
  /** The first try, settled or past its deadline: batches sealed until then wait for it. */
  #firstTry: Promise<void> = Promise.resolve();
  #trying = false;
  /** The try running now, with what it does once it ends (release a lock taken after stop). */
  #inFlight: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** A try that ended after the stop took the lock: the claim goes once the lock is released. */
  #releasingLate = false;
  #startedAt = 0;

  /** `claim`: the directory's claim in this process, taken first by the exporter's constructor. */
  constructor(claim: SpoolClaim, options: AdopterOptions, parts: AdopterParts) {
    this.dir = options.dir;
    this.#claim = claim;
    this.#options = options;
    this.#lock = options.lock ?? LOCK_TIMING;
    this.#budget = parts.budget;
    this.#owner = parts.owner;
    this.#uploader = parts.uploader;
    this.#reports = new KeeperReports(parts.stats, parts.episodes, {
      ...options,
      lock: this.#lock,
    });
    this.#disk = new DiskDeadline(options.diskTimeoutMillis);
    this.#replay = parts.replay;
    this.journal =
      options.journal === undefined
        ? undefined
        : new OpenBatchJournal(options.journal, this.#reports);
    this.#reports.state('opening');
  }

  /** Starts opening the spool, in the background. */
  start(): void {
    this.#startedAt = performance.now();
    this.#firstTry = this.#try();
  }

  /**
   * Writes a batch ahead once the spool is ours; until the first try to open it has settled (at
   * most the disk deadline) the batch waits, so a spool that opens at once misses no batch.
   */
  async persist(batch: SealedBatch): Promise<void> {
    if (this.#keeper === undefined) await this.#firstTry;
    await this.#keeper?.persist(batch);
  }

  /** Reads paged-out batches back into memory, once the spool is ours. */
  pump(): void {
    this.#keeper?.pump();
  }

  /** Shutdown: lets spool writes still running finish, briefly. */
  async settleWrites(): Promise<void> {
    await this.#keeper?.settleWrites();
  }

  /** Shutdown begins: a spool that is not ours yet is not tried again (nor adopted). */
  stopWaiting(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Releases the directory (its lock, then its claim in this process); files stay. A try still
   * running, the journal's last commit and the lock's removal are waited for at most
   * `graceMillis` in all, so that after shutdown the directory is free again; what a hung disk
   * holds releases what it takes, then the claim, when it ends (see #tried, #release).
   */
  async close(graceMillis = CLOSE_GRACE_MILLIS): Promise<void> {
    const by = performance.now() + graceMillis;
    const left = () => Math.max(0, by - performance.now());
    this.stopWaiting();
    this.#reports.state('closed');
    if (this.#trying) await settleWithin(this.#inFlight, left());
    await this.journal?.close(left());
    if (this.#keeper !== undefined) await settleWithin(this.#release(this.#keeper.close()), left());
    else if (!this.#trying) this.#claim.release();
  }

  /**
   * One try to open the directory; the next is scheduled when it ends. Resolves when it ended
   * or overran the disk deadline: a hung disk is reported and the exporter runs from memory,
   * and the try's result, if it ever comes, is handled then.
   */
  #try(): Promise<void> {
    this.#timer = undefined;
    if (this.#keeper !== undefined || this.#stopped || this.#trying) return Promise.resolve();
    this.#trying = true;
    return new Promise((settled) => {
      const millis = this.#disk.millis;
      const deadline = setTimeout(() => {
        this.#failed(new DiskDeadlineError('timeout', millis));
        settled();
      }, millis);
      deadline.unref();
      this.#inFlight = Spool.open(
        this.dir,
        this.#options.fs,
        this.#disk,
        this.#lock,
        this.#options.signal,
      )
        .then(
          (opening) => this.#opened(opening),
          (error: unknown) => this.#failed(error),
        )
        .catch((error: unknown) =>
          log.error(`spool ${this.dir}: internal error adopting it: ${describeError(error)}`),
        )
        .finally(() => {
          clearTimeout(deadline);
          this.#tried();
          settled();
        });
    });
  }

  #tried(): void {
    this.#trying = false;
    if (this.#keeper !== undefined) return;
    if (this.#stopped) {
      if (!this.#releasingLate) this.#claim.release();
      return;
    }
    this.#timer = setTimeout(() => void this.#try(), this.#lock.retryMillis);
    this.#timer.unref();
  }

  /** What a try found; a lock taken after the stop is released (the returned promise). */
  #opened(opening: SpoolOpening): Promise<void> | undefined {
    if (opening.kind === 'held') {
      this.journal?.suspend();
      if (!this.#stopped) this.#reports.waiting(opening.holder);
      return;
    }
    if (this.#stopped) {
      this.#releasingLate = true;
      return this.#release(opening.spool.close());
    }
    this.#adopt(opening.spool);
  }

  #adopt(spool: Spool): void {
    const journal = this.journal;
    journal?.attach({
      dir: join(this.dir, 'journal'),
      quarantineDir: join(this.dir, 'quarantine'),
      fs: this.#options.fs,
      disk: this.#disk,
    });
    const keeper = new SpoolKeeper(spool, this.#options, {
      budget: this.#budget,
      owner: this.#owner,
      uploader: this.#uploader,
      reports: this.#reports,
      journal,
    });
    this.#keeper = keeper;
    this.#reports.adopted(
      performance.now() - this.#startedAt,
      this.#budget.pending(this.#owner).batches,
    );
    keeper
      .restore()
      .then(() => this.#replayJournal(keeper))
      .then(() => this.#writeAheadPending(keeper))
      .catch((error: unknown) =>
        log.error(`spool ${this.dir}: could not restore or write ahead: ${describeError(error)}`),
      );
  }

  /**
   * Replays the open batches an earlier run left in the journal, once the spool's files are
   * read: a chain that a file names is on disk already. If some file could not be read, the
   * replay waits for the next start (it could name a chain: replaying it could store it twice).
   */
  async #replayJournal(keeper: SpoolKeeper): Promise<void> {
    const journal = this.journal;
    const replay = this.#replay;
    if (journal === undefined || replay === undefined || this.#stopped) return;
    if (!keeper.scanned) {
      log.warn(
        `spool ${this.dir}: the journal is replayed at the next start, since some spool files could not be read now`,
      );
      return;
    }
    await journal.replay(keeper.journalChains(), replay);
  }

  /**
   * Batches sealed before the spool was ours and still pending get their write-ahead copy now,
   * one at a time. Those not yet compressed get theirs when they are, as every new batch does.
   */
  async #writeAheadPending(keeper: SpoolKeeper): Promise<void> {
    for (const batch of this.#budget.batchesOf(this.#owner)) {
      if (this.#stopped) return;
      if (batch.body !== undefined && !batch.restored) await keeper.persist(batch);
    }
  }

  #failed(error: unknown): void {
    if (this.#keeper === undefined) this.journal?.suspend();
    if (this.#keeper === undefined && !this.#stopped) this.#reports.unavailable(error);
  }

  async #release(lockReleased: Promise<boolean>): Promise<void> {
    // A lock whose removal a hung disk still holds keeps the claim: this process must not take
    // the directory again and have the late removal delete that new lock.
    if (await lockReleased) this.#claim.release();
  }
}
