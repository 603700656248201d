import { settleWithin } from '../deadline.js';
import { log, plural } from '../log.js';
import type { SealedBatch } from '../pipeline/sealed-batch.js';
import { describeError } from '../s3-errors.js';
import { DiskDeadline, DiskDeadlineError } from './disk-deadline.js';
import type { SpoolFileSystem } from './file-system.js';
import { type KeeperOptions, type KeeperParts, SpoolKeeper } from './keeper.js';
import { LOCK_STALE_MILLIS, type LockHolder, type SpoolClaim } from './lock.js';
import { Spool, type SpoolOpening } from './spool.js';

/** How often a spool directory that is not ours yet is tried again. */
export const ADOPT_RETRY_MILLIS = 1_000;
/** Shutdown waits this long for a try still running (a few ms on a working disk) to end. */
const CLOSE_GRACE_MILLIS = 1_000;

export interface AdopterOptions extends KeeperOptions {
  dir: string;
  fs: SpoolFileSystem;
}

/**
 * The exporter's spool from construction to shutdown. The constructor only claims the directory
 * in this process (claimSpoolDir, no disk I/O); opening it (its directories and the lock) runs
 * in the background under the disk deadline. Until it is ours (another process holds the lock,
 * the directory cannot be opened, the disk does not answer), batches stay in memory within
 * maxBufferedBytes, reported once, and the directory is tried again every ADOPT_RETRY_MILLIS.
 * It is adopted as soon as the lock is free or provably stale: then what it holds is replayed,
 * and the batches still pending are written ahead. A live owner's lock is never taken.
 */
export class SpoolAdopter {
  readonly dir: string;
  readonly #options: AdopterOptions;
  readonly #parts: KeeperParts;
  readonly #claim: SpoolClaim;
  readonly #disk: DiskDeadline;
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
  constructor(claim: SpoolClaim, options: AdopterOptions, parts: KeeperParts) {
    this.dir = options.dir;
    this.#claim = claim;
    this.#options = options;
    this.#parts = parts;
    this.#disk = new DiskDeadline(options.diskTimeoutMillis);
    parts.stats.state = 'opening';
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
   * running is waited for briefly, so that after shutdown the directory is free again; one that
   * a hung disk holds releases what it takes, then the claim, when it ends (see #tried).
   */
  async close(): Promise<void> {
    this.stopWaiting();
    this.#parts.stats.state = 'closed';
    if (this.#trying) await settleWithin(this.#inFlight, CLOSE_GRACE_MILLIS);
    if (this.#keeper !== undefined) await this.#release(this.#keeper.close());
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
      this.#inFlight = Spool.open(this.dir, this.#options.fs, this.#disk)
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
    this.#timer = setTimeout(() => void this.#try(), ADOPT_RETRY_MILLIS);
    this.#timer.unref();
  }

  /** What a try found; a lock taken after the stop is released (the returned promise). */
  #opened(opening: SpoolOpening): Promise<void> | undefined {
    if (opening.kind === 'held') {
      if (this.#stopped) return;
      this.#parts.stats.state = 'waiting-for-lock';
      this.#reportWaiting(opening.holder);
      return;
    }
    if (this.#stopped) {
      this.#releasingLate = true;
      return this.#release(opening.spool.close());
    }
    this.#adopt(opening.spool);
  }

  #adopt(spool: Spool): void {
    const keeper = new SpoolKeeper(spool, this.#options, this.#parts);
    this.#keeper = keeper;
    this.#parts.stats.state = 'active';
    const seconds = ((performance.now() - this.#startedAt) / 1000).toFixed(1);
    const pending = this.#parts.budget.size;
    this.#parts.episodes.clear(
      'spool-waiting',
      () =>
        `spool ${this.dir} is ours after ${seconds} s: replaying what it holds, and writing ahead ` +
        `${plural(pending, 'batch', 'batches')} sealed meanwhile and every new one`,
    );
    keeper
      .restore()
      .then(() => this.#writeAheadPending(keeper))
      .catch((error: unknown) =>
        log.error(`spool ${this.dir}: could not restore or write ahead: ${describeError(error)}`),
      );
  }

  /**
   * Batches sealed before the spool was ours and still pending get their write-ahead copy now,
   * one at a time. Those not yet compressed get theirs when they are, as every new batch does.
   */
  async #writeAheadPending(keeper: SpoolKeeper): Promise<void> {
    for (const batch of [...this.#parts.budget]) {
      if (this.#stopped) return;
      if (batch.body !== undefined && !batch.restored) await keeper.persist(batch);
    }
  }

  #failed(error: unknown): void {
    if (this.#keeper !== undefined || this.#stopped) return;
    this.#parts.stats.state = 'unavailable';
    this.#parts.episodes.report(
      'spool-waiting',
      'error',
      `spoolDir ${this.dir} cannot be opened (${describeError(error)}); batches stay in memory ` +
        `(bounded by maxBufferedBytes, without a crash-safe copy) and it is tried again every ${ADOPT_RETRY_MILLIS / 1000} s`,
      'OTEL_S3_SPOOL_WAITING',
    );
  }

  #reportWaiting(holder: LockHolder): void {
    const owner = holder.owner;
    const who =
      owner === undefined
        ? 'an owner that does not say who it is (an earlier version)'
        : `pid ${owner.pid} on ${owner.host}`;
    const meanwhile =
      'batches stay in memory (bounded by maxBufferedBytes, without a crash-safe copy) until then';
    if (holder.verdict === 'alive') {
      this.#parts.episodes.report(
        'spool-waiting',
        'error',
        `spoolDir ${this.dir} is in use by ${who}, a running process: each exporter needs a spool ` +
          `directory of its own. This exporter takes the spool over if that process exits; ${meanwhile}`,
        'OTEL_S3_SPOOL_WAITING',
      );
      return;
    }
    this.#parts.episodes.report(
      'spool-waiting',
      'warn',
      `spoolDir ${this.dir} is locked by ${who}, which cannot be checked from here (another pid namespace ` +
        `or host, e.g. this container before a restart); its lock was refreshed ${(holder.ageMillis / 1000).toFixed(1)} s ago. ` +
        `The spool is adopted, and what it holds replayed, when the lock is free or has not been refreshed ` +
        `for ${LOCK_STALE_MILLIS / 1000} s; ${meanwhile}`,
      'OTEL_S3_SPOOL_WAITING',
    );
  }

  async #release(lockReleased: Promise<boolean>): Promise<void> {
    // A lock whose removal a hung disk still holds keeps the claim: this process must not take
    // the directory again and have the late removal delete that new lock.
    if (await lockReleased) this.#claim.release();
  }
}
