import { join } from 'node:path';
import { alert, type Episodes, log, plural } from '../base/log.js';
import type { BatchOutcome } from '../pipeline/sealed-batch.js';
import { increment, type SpoolState, type SpoolStats } from '../pipeline/stats.js';
import { describeError } from '../s3/errors.js';
import { diskErrorCode } from './disk-deadline.js';
import { LOCK_TIMING, type LockHolder, type LockTiming } from './lock.js';

export interface KeeperReportOptions {
  dir: string;
  maxSpoolBytes: number;
  diskTimeoutMillis: number;
  retryEveryMillis: number;
  /** The exporter's signal, as the messages name it. */
  signal?: string | undefined;
  /** The lock's intervals, as the messages name them; default LOCK_TIMING. */
  lock?: LockTiming;
}

/**
 * What the spool counts and tells, the only writer of stats().spool: where the spool is (its
 * state, and why it is not ours yet), and each disk fault, counted and reported once per episode
 * (or once per file) with what the exporter does about it. Episodes are keyed by the directory:
 * the exporters of one S3Exporters share an Episodes, each with a spool directory of its own, so
 * one's fault or recovery is not another's.
 */
/** What read() and listFailed() call a failed listing of the spool's directories. */
export const LISTING = '(listing)';

export class KeeperReports {
  readonly #stats: SpoolStats;
  readonly #episodes: Episodes;
  readonly #options: KeeperReportOptions;
  /** Files too large ever to be read back, already reported. */
  readonly #oversized = new Set<string>();
  /** Files (and LISTING) whose last read failed: the spool-read episode lasts while any is. */
  readonly #unreadable = new Set<string>();
  /** Files of another signal found in the spool, already reported. */
  readonly #foreign = new Set<string>();
  #toldTooLarge = false;

  constructor(stats: SpoolStats, episodes: Episodes, options: KeeperReportOptions) {
    this.#stats = stats;
    this.#episodes = episodes;
    this.#options = options;
  }

  /** Where the spool is now (see SpoolState). */
  state(state: SpoolState): void {
    this.#stats.state = state;
  }

  /** Another process holds the lock: reported once, as an error if that process is running. */
  waiting(holder: LockHolder): void {
    this.#stats.state = 'waiting-for-lock';
    const owner = holder.owner;
    const who =
      owner === undefined
        ? 'an owner that does not say who it is (an earlier version)'
        : `pid ${owner.pid} on ${owner.host}`;
    const dir = this.#options.dir;
    const meanwhile =
      'batches stay in memory (bounded by maxBufferedBytes, without a crash-safe copy) until then';
    if (holder.verdict === 'alive') {
      this.#episodes.report(
        `spool-waiting:${this.#options.dir}`,
        'error',
        `spoolDir ${dir} is in use by ${who}, a running process: each exporter needs a spool ` +
          `directory of its own. This exporter takes the spool over if that process exits; ${meanwhile}`,
        'OTEL_S3_SPOOL_WAITING',
      );
      return;
    }
    this.#episodes.report(
      `spool-waiting:${this.#options.dir}`,
      'warn',
      `spoolDir ${dir} is locked by ${who}, which cannot be checked from here (another pid namespace ` +
        `or host, e.g. this container before a restart); its lock was refreshed ${(holder.ageMillis / 1000).toFixed(1)} s ago. ` +
        `The spool is adopted, and what it holds replayed, when the lock is free or has not been refreshed ` +
        `for ${(this.#options.lock ?? LOCK_TIMING).staleMillis / 1000} s; ${meanwhile}`,
      'OTEL_S3_SPOOL_WAITING',
    );
  }

  /** The directory cannot be opened now (an errno error, the disk deadline): reported once. */
  unavailable(error: unknown): void {
    this.#stats.state = 'unavailable';
    this.#episodes.report(
      `spool-waiting:${this.#options.dir}`,
      'error',
      `spoolDir ${this.#options.dir} cannot be opened (${describeError(error)}); batches stay in memory ` +
        `(bounded by maxBufferedBytes, without a crash-safe copy) and it is tried again every ${(this.#options.lock ?? LOCK_TIMING).retryMillis / 1000} s`,
      'OTEL_S3_SPOOL_WAITING',
    );
  }

  /** The spool is ours: after a wait, an info line says so. */
  adopted(afterMillis: number, pending: number): void {
    this.#stats.state = 'active';
    this.#episodes.clear(
      `spool-waiting:${this.#options.dir}`,
      () =>
        `spool ${this.#options.dir} is ours after ${(afterMillis / 1000).toFixed(1)} s: replaying what it holds, ` +
        `and writing ahead ${plural(pending, 'batch', 'batches')} sealed meanwhile and every new one`,
    );
  }

  /** The spool's files and their bytes now. */
  gauges(files: number, bytes: number): void {
    this.#stats.files = files;
    this.#stats.bytes = bytes;
  }

  /** A batch with a file ended: stored after a restart (replayed), or left for the next run. */
  settled(outcome: BatchOutcome, restored: boolean): void {
    if (outcome === 'uploaded' && restored) this.#stats.replayed++;
    if (outcome === 'left-in-spool') this.#stats.leftAtShutdown++;
  }

  written(): void {
    this.#stats.written++;
    this.#episodes.clear(
      `spool-write:${this.#options.dir}`,
      () => `spool ${this.#options.dir}: writes work again`,
    );
  }

  /** A write that did not become durable: `code` is an errno code, `timeout` or `stalled`. */
  writeFailed(code: string, error?: unknown): void {
    increment(this.#stats.writeFailures, code);
    const why =
      code === 'timeout'
        ? `a write took longer than ${this.#options.diskTimeoutMillis} ms and was abandoned (the disk may be hung)`
        : code === 'stalled'
          ? 'an earlier write has still not returned (the disk may be hung)'
          : describeError(error);
    this.#episodes.report(
      `spool-write:${this.#options.dir}`,
      'error',
      `spool ${this.#options.dir}: ${why}; keeping batches in memory (bounded by maxBufferedBytes) and uploading them from there, ` +
        'never trusting a file whose write or fsync failed',
      'OTEL_S3_SPOOL_WRITE_FAILED',
    );
  }

  /**
   * A batch whose file would be larger than maxSpoolBytes was not written (counted under
   * writeFailures['larger-than-spool']); said once a process, as it follows from the settings.
   */
  tooLarge(size: number): void {
    increment(this.#stats.writeFailures, 'larger-than-spool');
    if (this.#toldTooLarge) return;
    this.#toldTooLarge = true;
    log.warn(
      `spool ${this.#options.dir}: a batch's file of ${plural(size, 'byte')} is larger than maxSpoolBytes ` +
        `(${this.#options.maxSpoolBytes}); such batches are not written to the spool but uploaded from memory ` +
        '(raise maxSpoolBytes above maxBatchBytes to keep them on disk too)',
    );
  }

  /** A group fsync of the journal succeeded. */
  journalSynced(): void {
    this.#stats.journalSyncs++;
    this.#episodes.clear(
      'journal-write',
      () => `spool ${this.#options.dir}: journal writes work again`,
    );
  }

  /** A journal write or fsync failed: its entries go to a fresh file, or the chain is given up. */
  journalFailed(code: string, error: unknown, consequence: string): void {
    increment(this.#stats.journalWriteFailures, code);
    this.#episodes.report(
      'journal-write',
      'error',
      `spool ${this.#options.dir}: the open batch's journal could not be written (${describeError(error)}); ${consequence}`,
      'OTEL_S3_SPOOL_WRITE_FAILED',
    );
  }

  /**
   * An open batch's exports waiting for the next group commit passed `limit` bytes: the batch is
   * no longer journaled. A slow disk (whose faults have their own reports), or exports larger
   * than the limit on a disk that keeps up, which would recur with every such export: said once,
   * each one counted (journalWriteFailures.memory).
   */
  journalGaveUp(limit: number): void {
    increment(this.#stats.journalWriteFailures, 'memory');
    this.#episodes.report(
      'journal-pending',
      'error',
      `spool ${this.#options.dir}: more than ${limit} bytes of an open batch's exports waited for the journal's next group commit (a disk slower than the exports, or exports that large); that batch is no longer journaled (a crash before its spool file is written would lose it), nor is any other for which this happens again (said once, counted in stats().spool.journalWriteFailures.memory); the next one is`,
      'OTEL_S3_SPOOL_WRITE_FAILED',
    );
  }

  /** Batches an earlier run left in the journal were replayed. */
  journalReplayed(batches: number): void {
    this.#stats.journalReplayed += batches;
    if (batches > 0)
      log.info(
        `spool ${this.#options.dir}: replaying ${plural(batches, 'batch', 'batches')} from the journal an earlier run left`,
      );
  }

  /** A read that will be tried again: `error` is an errno error or a DiskDeadlineError. */
  readFailed(name: string, error: unknown): void {
    increment(this.#stats.readFailures, diskErrorCode(error));
    this.#unreadable.add(name);
    this.#episodes.report(
      `spool-read:${this.#options.dir}`,
      'warn',
      `spool file ${name} could not be read (${describeError(error)}); ` +
        `it stays on disk and is read again in ${Math.round(this.#options.retryEveryMillis / 1000)} s`,
    );
  }

  /** A directory of the spool could not be listed: what an earlier run left is looked for again. */
  listFailed(error: unknown): void {
    increment(this.#stats.readFailures, diskErrorCode(error));
    this.#unreadable.add(LISTING);
    this.#episodes.report(
      `spool-read:${this.#options.dir}`,
      'warn',
      `spool ${this.#options.dir} could not be listed (${describeError(error)}); ` +
        `what an earlier run left is looked for again in ${Math.round(this.#options.retryEveryMillis / 1000)} s`,
    );
  }

  /** A file was deleted or moved to quarantine: such failures, if any, are over. */
  discarded(): void {
    this.#episodes.clear(`spool-discard:${this.#options.dir}`);
  }

  /** A file could not be deleted or moved to quarantine now; it is tried again. */
  discardFailed(name: string, action: 'remove' | 'quarantine', error: unknown): void {
    this.#episodes.report(
      `spool-discard:${this.#options.dir}`,
      'warn',
      `spool file ${name} could not be ${action === 'remove' ? 'deleted' : 'moved to quarantine'} (${describeError(error)}); ` +
        `tried again in ${Math.round(this.#options.retryEveryMillis / 1000)} s`,
    );
  }

  /**
   * A journal chain whose batch is safe could not be deleted now: tried again at the next group
   * commit (while it stays, a spool file naming it stays too). Reported once per episode.
   */
  journalDeleteFailed(chain: string, error: unknown): void {
    this.#episodes.report(
      `journal-delete:${this.#options.dir}`,
      'warn',
      `spool ${this.#options.dir}: journal chain ${chain}, whose batch is safe, could not be deleted (${describeError(error)}); tried again at each group commit`,
    );
  }

  /** A journal chain was deleted: such failures, if any, are over. */
  journalDeleted(): void {
    this.#episodes.clear(`journal-delete:${this.#options.dir}`);
  }

  /** A file was written with no eviction: the spool is under maxSpoolBytes, its episode over. */
  fitted(): void {
    this.#episodes.clear(
      `spool-full:${this.#options.dir}`,
      () => `spool ${this.#options.dir}: under maxSpoolBytes again, nothing evicted`,
    );
  }

  /**
   * A file was read (back, or restored), or the spool listed (`LISTING`): once every file (and
   * listing) whose read failed has been read, the episode is over. Cleared at the first success
   * instead, one file that stays unreadable beside others that are read would warn at each retry.
   */
  read(name: string): void {
    if (!this.#unreadable.delete(name) || this.#unreadable.size > 0) return;
    this.#episodes.clear(
      `spool-read:${this.#options.dir}`,
      () => `spool ${this.#options.dir}: reads work again`,
    );
  }

  /**
   * A batch not written: evicting every file that may go would not make room for it (the rest
   * are being uploaded or read back). It is uploaded from memory.
   */
  noRoom(size: number): void {
    increment(this.#stats.writeFailures, 'no-room');
    this.#episodes.report(
      `spool-full:${this.#options.dir}`,
      'warn',
      `spool ${this.#options.dir} reached maxSpoolBytes (${this.#options.maxSpoolBytes}) with its other files being uploaded or read back: a batch's file of ${plural(size, 'byte')} is not written, the batch is uploaded from memory`,
      'OTEL_S3_SPOOL_FULL',
    );
  }

  /** A file is evicted to keep the spool under maxSpoolBytes. */
  evicted(): void {
    this.#stats.evicted++;
    this.#episodes.report(
      `spool-full:${this.#options.dir}`,
      'warn',
      `spool ${this.#options.dir} reached maxSpoolBytes (${this.#options.maxSpoolBytes}): evicting the oldest batches`,
      'OTEL_S3_SPOOL_FULL',
    );
  }

  /** A file larger than maxBufferedBytes: it stays on disk, reported once. */
  oversized(name: string, size: number, limit: number): void {
    if (this.#oversized.has(name)) return;
    this.#oversized.add(name);
    this.#stats.oversized++;
    log.warn(
      `spool file ${name} (${plural(size, 'byte')}) is larger than maxBufferedBytes (${limit}), ` +
        'so it cannot be read back; it stays on disk until maxBufferedBytes is raised',
    );
  }

  /**
   * A chain of the journal is damaged on disk (corruption before intact entries, or a header
   * length), not cut short by a crash: what is readable is replayed, the rest is lost.
   */
  journalDamaged(chain: string, what: string, lost: boolean): void {
    this.#stats.journalDamaged++;
    const message = `spool ${this.#options.dir}: the journal of batch ${chain} is damaged on disk (${what}); `;
    if (lost)
      alert(
        'error',
        'OTEL_S3_DATA_DROPPED',
        `${message}what is readable is replayed, the rest is lost (counted in stats().spool.journalDamaged)`,
      );
    else
      log.warn(
        `${message}no record of it is missing, and it is replayed (counted in stats().spool.journalDamaged)`,
      );
  }

  /**
   * A journal chain that cannot be replayed could not be moved to quarantine (no part of it):
   * it stays in the journal, and the next start finds it again.
   */
  journalQuarantineFailed(chain: string, why: string, error: unknown): void {
    log.warn(
      `spool ${this.#options.dir}: journal chain ${chain} is unusable (${why}) and could not be moved to quarantine (${describeError(error)}); ` +
        'it stays in the journal and is quarantined at the next start',
    );
  }

  /**
   * A spool file or journal chain of another signal's exporter is in this spool: left alone,
   * told once a file or chain.
   */
  foreign(
    name: string,
    signal: string,
    what: 'spool file' | 'journal chain' = 'spool file',
    mine: string | undefined = this.#options.signal,
  ): void {
    const key = `${what} ${name}`;
    if (this.#foreign.has(key)) return;
    this.#foreign.add(key);
    this.#stats.foreign++;
    const where = what === 'spool file' ? this.#options.dir : join(this.#options.dir, 'journal');
    alert(
      'warn',
      'OTEL_S3_SPOOL_FOREIGN_FILE',
      `${what} ${name} in ${where} holds ${signal}, not ${mine ?? "this exporter's"}; ` +
        `left where it is, neither ${what === 'spool file' ? 'uploaded' : 'replayed'} nor deleted (is spoolDir shared with the exporter of another signal?)`,
    );
  }

  /**
   * A spool file, or a journal chain, that failed its checks was moved to quarantine: its batch
   * is lost.
   */
  quarantined(
    name: string,
    why: string,
    what: 'spool file' | 'journal chain' = 'spool file',
  ): void {
    this.#stats.quarantined++;
    alert('error', 'OTEL_S3_DATA_DROPPED', `${what} ${name} ${why}`);
  }
}
