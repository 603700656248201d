import { settleWithin } from '../deadline.js';
import { alert, type Episodes, log, plural } from '../log.js';
import type { MemoryBudget, Pager } from '../pipeline/budget.js';
import { type BatchOutcome, SealedBatch } from '../pipeline/sealed-batch.js';
import { describeError } from '../s3-errors.js';
import { increment, type SpoolStats } from '../stats.js';
import type { Uploader } from '../upload/uploader.js';
import { spoolFileBytes } from './file-format.js';
import { type Spool, type SpoolEntry, SpoolWriteError } from './spool.js';

/** What the keeper works with besides the disk: the exporter's parts it hands batches to. */
export interface KeeperParts {
  budget: MemoryBudget;
  uploader: Uploader;
  stats: SpoolStats;
  episodes: Episodes;
}

export interface KeeperOptions {
  maxSpoolBytes: number;
  /** Spooled batches read back into memory at once. */
  loadConcurrency: number;
  /** How often spooled batches are tried again while S3 fails. */
  retryEveryMillis: number;
}

/** A spool write still running at the shutdown deadline gets this long to finish. */
const SHUTDOWN_WRITE_GRACE_MILLIS = 250;

/**
 * The exporter's side of the spool: makes every sealed batch durable before its first upload
 * (write-ahead), deletes the file once S3 acknowledged it, lets memory pressure page batches
 * out to disk instead of dropping them, reads them back when there is room, restores what an
 * earlier run left, and keeps the spool under maxSpoolBytes by evicting the oldest files.
 */
export class SpoolKeeper implements Pager {
  readonly #spool: Spool;
  readonly #options: KeeperOptions;
  readonly #parts: KeeperParts;
  /** Batches with a file, by file name; Map order is write order, oldest first. */
  readonly #byFile = new Map<string, SealedBatch>();
  readonly #writes = new Set<Promise<void>>();
  #loading = 0;
  #reserved = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(spool: Spool, options: KeeperOptions, parts: KeeperParts) {
    this.#spool = spool;
    this.#options = options;
    this.#parts = parts;
    parts.budget.attachPager(this);
    this.#syncGauges();
  }

  /** Restores the batches an earlier run left, oldest first, and starts uploading them. */
  async restore(): Promise<void> {
    const { entries, quarantined } = await this.#spool.scan();
    for (const q of quarantined) {
      this.#parts.stats.quarantined++;
      log.error(
        `spool file ${q.name} is unusable (${q.reason}); moved to ${this.#spool.dir}/quarantine`,
      );
    }
    for (const entry of entries) {
      const batch = SealedBatch.restore(entry);
      this.#byFile.set(entry.name, batch);
      this.#parts.budget.admit(batch, 0);
    }
    if (entries.length > 0) {
      log.info(
        `spool ${this.#spool.dir}: restoring ${plural(entries.length, 'batch', 'batches')} from an earlier run`,
      );
    }
    this.#syncGauges();
    this.pump();
  }

  /**
   * Makes a compressed, named batch durable before its first upload. A failed write leaves the
   * batch in memory (counted, reported once per episode); the next write uses a fresh file.
   */
  persist(batch: SealedBatch): Promise<void> {
    const write = this.#persist(batch);
    this.#writes.add(write);
    return write.finally(() => this.#writes.delete(write));
  }

  async #persist(batch: SealedBatch): Promise<void> {
    const body = batch.body;
    if (body === undefined || this.#closed) return;
    const meta = {
      key: batch.key,
      contentType: batch.contentType,
      points: batch.points,
      rawBytes: batch.rawBytes,
      sealedAt: batch.sealedAt.getTime(),
    };
    const size = spoolFileBytes(meta, body.length);
    this.#evictFor(size);
    // Reserved while writing, so concurrent writes cannot overshoot maxSpoolBytes together.
    this.#reserved += size;
    try {
      const entry = await this.#spool.write(meta, body);
      if (batch.isSettled) {
        // Dropped (shutdown) while writing: the file would only replay a batch counted as lost.
        await this.#spool.remove(entry).catch(() => {});
        return;
      }
      batch.spool = entry;
      this.#byFile.set(entry.name, batch);
      this.#parts.stats.written++;
      this.#parts.episodes.clear(
        'spool-write',
        () => `spool ${this.#spool.dir}: writes work again`,
      );
    } catch (error) {
      const code = error instanceof SpoolWriteError ? error.code : 'unknown';
      increment(this.#parts.stats.writeFailures, code);
      this.#parts.episodes.report(
        'spool-write',
        'error',
        `spool ${this.#spool.dir}: ${describeError(error)}; keeping batches in memory (bounded by maxBufferedBytes) ` +
          'and writing fresh files later, never reusing a file whose write or fsync failed',
        'OTEL_S3_SPOOL_WRITE_FAILED',
      );
    } finally {
      this.#reserved -= size;
    }
    this.#syncGauges();
  }

  /** Evicts the oldest files until `bytes` more fit under maxSpoolBytes. */
  #evictFor(bytes: number): void {
    for (const [name, batch] of this.#byFile) {
      if (this.#spool.bytes + this.#reserved + bytes <= this.#options.maxSpoolBytes) break;
      if (batch.state === 'paging-in' || batch.state === 'uploading') continue;
      this.#parts.stats.evicted++;
      this.#parts.episodes.report(
        'spool-full',
        'warn',
        `spool ${this.#spool.dir} reached maxSpoolBytes (${this.#options.maxSpoolBytes}): evicting the oldest batches`,
        'OTEL_S3_SPOOL_FULL',
      );
      if (batch.body === undefined) {
        // Only on disk: evicting it loses it (settling it deletes the file).
        this.#parts.budget.drop(batch, 'spool-full');
      } else {
        this.#byFile.delete(name);
        this.#removeFile(batch);
      }
    }
    this.#syncGauges();
  }

  /** The budget released a batch's bytes: it waits on disk until memory and S3 allow. */
  pagedOut(_batch: SealedBatch): void {
    this.#arm();
  }

  /** A batch ended: its file is no longer needed, unless it was left for the next run. */
  settled(batch: SealedBatch, outcome: BatchOutcome): void {
    const entry = batch.spool;
    if (entry === undefined) return;
    if (outcome === 'uploaded' && batch.restored) this.#parts.stats.replayed++;
    if (outcome === 'left-in-spool') return;
    this.#byFile.delete(entry.name);
    this.#removeFile(batch);
    if (outcome === 'uploaded') this.pump();
  }

  #removeFile(batch: SealedBatch): void {
    const entry = batch.spool;
    if (entry === undefined) return;
    batch.spool = undefined;
    void this.#spool.remove(entry).then(
      () => this.#syncGauges(),
      (error: unknown) =>
        log.warn(`spool: could not delete ${entry.name}: ${describeError(error)}`),
    );
  }

  /** Reads paged-out batches back into memory, oldest first, while memory and load slots allow. */
  pump(): void {
    if (this.#closed) return;
    const budget = this.#parts.budget;
    for (const batch of this.#byFile.values()) {
      if (this.#loading >= this.#options.loadConcurrency) break;
      const entry = batch.spool;
      if (batch.state !== 'paged-out' || entry === undefined) continue;
      const size = entry.fileBytes;
      if (!budget.fits(size)) break;
      batch.startPageIn();
      budget.resize(batch, size);
      this.#loading++;
      void this.#load(batch, entry).finally(() => {
        this.#loading--;
        this.pump();
      });
    }
    this.#arm();
  }

  async #load(batch: SealedBatch, entry: SpoolEntry): Promise<void> {
    try {
      const body = await this.#spool.read(entry);
      if (!batch.pagedIn(body)) return;
      this.#parts.budget.resize(batch, body.length);
      if (batch.queue()) this.#parts.uploader.submit(batch);
    } catch (error) {
      if (batch.state !== 'paging-in') return;
      batch.spool = undefined;
      this.#byFile.delete(entry.name);
      await this.#spool.quarantine(entry).catch(() => {});
      this.#parts.stats.quarantined++;
      alert(
        'error',
        'OTEL_S3_DATA_DROPPED',
        `spool file ${entry.name} failed to read back (${describeError(error)}); moved to quarantine`,
      );
      this.#parts.budget.drop(batch, 'spool-corrupt');
      this.#syncGauges();
    }
  }

  /** While batches wait on disk, try them again now and then (S3 may be back). */
  #arm(): void {
    if (this.#closed || this.#timer !== undefined) return;
    let pagedOut = false;
    for (const batch of this.#byFile.values()) if (batch.state === 'paged-out') pagedOut = true;
    if (!pagedOut) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.pump();
    }, this.#options.retryEveryMillis);
    this.#timer.unref();
  }

  /** Shutdown: lets writes still running finish, briefly. */
  async settleWrites(): Promise<void> {
    await settleWithin(Promise.all(this.#writes), SHUTDOWN_WRITE_GRACE_MILLIS);
  }

  /** Stops the timer and releases the directory lock; files stay for the next run. */
  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#spool.close();
  }

  #syncGauges(): void {
    this.#parts.stats.files = this.#spool.files;
    this.#parts.stats.bytes = this.#spool.bytes;
  }
}
