import { settleWithin } from '../deadline.js';
import { type Episodes, log, plural } from '../log.js';
import { describeError } from '../s3-errors.js';
import { type PendingBatches, SealedBatch } from '../sealed-batch.js';
import { increment, type SpoolStats } from '../stats.js';
import { spoolFileBytes } from './file-format.js';
import { type Spool, type SpoolEntry, SpoolWriteError } from './spool.js';

export interface KeeperHooks {
  pending: PendingBatches;
  stats: SpoolStats;
  episodes: Episodes;
  /** True if `bytes` more fit under maxBufferedBytes. */
  hasRoom(bytes: number): boolean;
  /** Queues a batch (state `queued`) for upload. */
  submit(batch: SealedBatch): void;
  /** Gives a batch up for good, counted under `reason`. */
  drop(batch: SealedBatch, reason: string): void;
  /** A sequence number for a batch restored from disk. */
  nextSeq(): number;
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
export class SpoolKeeper {
  readonly #spool: Spool;
  readonly #options: KeeperOptions;
  readonly #hooks: KeeperHooks;
  /** Batches with a file, by file name; Map order is write order, oldest first. */
  readonly #byFile = new Map<string, SealedBatch>();
  readonly #writes = new Set<Promise<void>>();
  #loading = 0;
  #reserved = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(spool: Spool, options: KeeperOptions, hooks: KeeperHooks) {
    this.#spool = spool;
    this.#options = options;
    this.#hooks = hooks;
    this.#syncGauges();
  }

  get dir(): string {
    return this.#spool.dir;
  }

  /** Restores the batches an earlier run left, oldest first, and starts uploading them. */
  async restore(): Promise<void> {
    const { entries, quarantined } = await this.#spool.scan();
    for (const q of quarantined) {
      this.#hooks.stats.quarantined++;
      log.error(
        `spool file ${q.name} is unusable (${q.reason}); moved to ${this.#spool.dir}/quarantine`,
      );
    }
    for (const entry of entries) {
      const m = entry.meta;
      const batch = new SealedBatch(
        this.#hooks.nextSeq(),
        new Date(m.sealedAt),
        undefined,
        m.rawBytes,
        m.points,
      );
      batch.key = m.key;
      batch.contentType = m.contentType;
      batch.heldBytes = 0;
      batch.state = 'spooled';
      batch.spool = entry;
      batch.restored = true;
      this.#byFile.set(entry.name, batch);
      this.#hooks.pending.add(batch);
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
      if (batch.state === 'settled') {
        // Dropped (shutdown) while writing: the file would only replay a batch counted as lost.
        await this.#spool.remove(entry).catch(() => {});
        return;
      }
      batch.spool = entry;
      this.#byFile.set(entry.name, batch);
      this.#hooks.stats.written++;
      this.#hooks.episodes.clear(
        'spool-write',
        () => `spool ${this.#spool.dir}: writes work again`,
      );
    } catch (error) {
      const code = error instanceof SpoolWriteError ? error.code : 'unknown';
      increment(this.#hooks.stats.writeFailures, code);
      this.#hooks.episodes.report(
        'spool-write',
        'error',
        `spool ${this.#spool.dir}: ${describeError(error)}; keeping batches in memory (bounded by maxBufferedBytes) ` +
          'and writing fresh files later, never reusing a file whose write or fsync failed',
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
      if (batch.state === 'loading' || batch.state === 'uploading') continue;
      this.#byFile.delete(name);
      const entry = batch.spool;
      batch.spool = undefined;
      if (entry !== undefined) void this.#spool.remove(entry).catch(() => {});
      this.#hooks.stats.evicted++;
      if (batch.body === undefined) {
        // Only on disk: evicting it loses it.
        this.#hooks.drop(batch, 'spool-full');
      }
      this.#hooks.episodes.report(
        'spool-full',
        'warn',
        `spool ${this.#spool.dir} reached maxSpoolBytes (${this.#options.maxSpoolBytes}): evicting the oldest batches`,
      );
    }
    this.#syncGauges();
  }

  /**
   * Memory pressure: if the batch is on disk, releases its bytes (it stays pending and is read
   * back later) and returns true; false if it has no durable copy.
   */
  pageOut(batch: SealedBatch): boolean {
    if (batch.spool === undefined || !batch.isDroppable) return false;
    batch.state = 'spooled';
    batch.body = undefined;
    this.#hooks.pending.resize(batch, 0);
    this.#arm();
    return true;
  }

  /** After S3 acknowledged a batch: its file is no longer needed. */
  uploaded(batch: SealedBatch): void {
    if (batch.restored) this.#hooks.stats.replayed++;
    this.forget(batch);
    this.pump();
  }

  /** Deletes the file of a batch that is settled (stored, or dropped for good). */
  forget(batch: SealedBatch): void {
    const entry = batch.spool;
    if (entry === undefined) return;
    batch.spool = undefined;
    this.#byFile.delete(entry.name);
    void this.#spool.remove(entry).then(
      () => this.#syncGauges(),
      (error: unknown) =>
        log.warn(`spool: could not delete ${entry.name}: ${describeError(error)}`),
    );
  }

  /** Reads spooled batches back into memory, oldest first, while memory and load slots allow. */
  pump(): void {
    if (this.#closed) return;
    for (const batch of this.#byFile.values()) {
      if (this.#loading >= this.#options.loadConcurrency) break;
      const entry = batch.spool;
      if (batch.state !== 'spooled' || entry === undefined) continue;
      const size = entry.fileBytes;
      if (!this.#hooks.hasRoom(size)) break;
      batch.state = 'loading';
      this.#hooks.pending.resize(batch, size);
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
      if (batch.state !== 'loading') return;
      batch.body = body;
      this.#hooks.pending.resize(batch, body.length);
      this.#hooks.submit(batch);
    } catch (error) {
      if (batch.state !== 'loading') return;
      batch.spool = undefined;
      this.#byFile.delete(entry.name);
      await this.#spool.quarantine(entry).catch(() => {});
      this.#hooks.stats.quarantined++;
      log.error(
        `spool file ${entry.name} failed to read back (${describeError(error)}); moved to quarantine`,
      );
      this.#hooks.drop(batch, 'spool-corrupt');
      this.#syncGauges();
    }
  }

  /** While batches wait on disk, try them again now and then (S3 may be back). */
  #arm(): void {
    if (this.#closed || this.#timer !== undefined) return;
    let spooled = false;
    for (const batch of this.#byFile.values()) if (batch.state === 'spooled') spooled = true;
    if (!spooled) return;
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
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#spool.close();
  }

  #syncGauges(): void {
    this.#hooks.stats.files = this.#spool.files;
    this.#hooks.stats.bytes = this.#spool.bytes;
  }
}
