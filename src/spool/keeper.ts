import { settleWithin } from '../deadline.js';
import { type Episodes, log, plural } from '../log.js';
import type { MemoryBudget, Pager } from '../pipeline/budget.js';
import { type BatchOutcome, SealedBatch } from '../pipeline/sealed-batch.js';
import { describeError } from '../s3-errors.js';
import type { SpoolStats } from '../stats.js';
import type { Uploader } from '../upload/uploader.js';
import { DiskDeadline, type DiskOutcome } from './disk-deadline.js';
import { SpoolFormatError, spoolFileBytes } from './file-format.js';
import { KeeperReports } from './keeper-reports.js';
import {
  type MetaCheck,
  type ScanEvent,
  type Spool,
  type SpoolEntry,
  SpoolWriteError,
} from './spool.js';

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
  /** How often spooled batches are tried again while S3 fails (and unreadable files re-read). */
  retryEveryMillis: number;
  /** Deadline of one spool write or read; past it the disk counts as stalled. */
  diskTimeoutMillis: number;
  /** Whether a file's metadata is one this exporter's configuration could have written. */
  check: MetaCheck;
}

/** A spool write still running at the shutdown deadline gets this long to finish. */
const SHUTDOWN_WRITE_GRACE_MILLIS = 250;

/**
 * The exporter's side of the spool: makes every sealed batch durable before its first upload
 * (write-ahead), deletes the file once S3 acknowledged it, lets memory pressure page batches
 * out to disk instead of dropping them, reads them back when there is room, restores what an
 * earlier run left, and keeps the spool under maxSpoolBytes by evicting the oldest files.
 * Every disk operation has a deadline: a stalled disk costs durability, never uploads.
 */
export class SpoolKeeper implements Pager {
  readonly #spool: Spool;
  readonly #options: KeeperOptions;
  readonly #parts: KeeperParts;
  readonly #disk: DiskDeadline;
  readonly #reports: KeeperReports;
  /** Batches with a file, by file name, oldest first (names are UUIDv7s: write order). */
  #byFile = new Map<string, SealedBatch>();
  /** The greatest name ever registered: no key is above it, so a greater one appends in order. */
  #greatest: string | undefined;
  readonly #writes = new Set<Promise<void>>();
  /** Files of `batches/` that could not be read yet; read again on the next tick. */
  readonly #unread = new Set<string>();
  #loading = 0;
  #reserved = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(spool: Spool, options: KeeperOptions, parts: KeeperParts) {
    this.#spool = spool;
    this.#options = options;
    this.#parts = parts;
    this.#disk = new DiskDeadline(options.diskTimeoutMillis);
    this.#reports = new KeeperReports(parts.stats, parts.episodes, { dir: spool.dir, ...options });
    parts.budget.attachPager(this);
    this.#syncGauges();
  }

  /** Restores the batches an earlier run left, oldest first, and starts uploading them. */
  async restore(): Promise<void> {
    let restored = 0;
    await this.#spool.scan(this.#options.check, (event) => {
      if (this.#take(event)) restored++;
    });
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
        this.#unread.delete(event.entry.name);
        const batch = SealedBatch.restore(event.entry);
        this.#register(event.entry.name, batch);
        this.#parts.budget.admit(batch, 0);
        return true;
      }
      case 'quarantined':
        this.#unread.delete(event.name);
        this.#reports.quarantined(
          event.name,
          `is unusable (${event.reason}); moved to ${this.#spool.dir}/quarantine`,
        );
        return false;
      case 'unreadable':
        if ((event.error as NodeJS.ErrnoException)?.code === 'ENOENT') {
          this.#unread.delete(event.name); // deleted meanwhile: nothing to restore
          return false;
        }
        this.#unread.add(event.name);
        this.#reports.readFailed(event.name, event.error);
        return false;
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
   * fresh file, and an abandoned write's file is deleted if it ever completes.
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
      const written = await this.#disk.run(
        () => this.#spool.write(meta, body),
        // Finished after we gave up on it: never trusted, like a file whose fsync failed.
        (entry) => void this.#spool.remove(entry).catch(() => {}),
      );
      if (written.kind !== 'done') {
        this.#reports.writeFailed(written.kind === 'timeout' ? 'timeout' : 'stalled');
        return;
      }
      const entry = written.value;
      if (!batch.spooled(entry)) {
        // Dropped (shutdown) while writing: the file would only replay a batch counted as lost.
        await this.#spool.remove(entry).catch(() => {});
        return;
      }
      this.#register(entry.name, batch);
      this.#reports.written();
    } catch (error) {
      this.#reports.writeFailed(error instanceof SpoolWriteError ? error.code : 'unknown', error);
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
  }

  /** The budget released a batch's bytes: it waits on disk until memory and S3 allow. */
  pagedOut(_batch: SealedBatch): void {
    this.#arm();
  }

  /** A batch ended: its file is no longer needed, unless it was left for the next run. */
  settled(batch: SealedBatch, outcome: BatchOutcome): void {
    const entry = batch.spool;
    if (entry === undefined) return;
    this.#reports.settled(outcome, batch.restored);
    if (outcome === 'left-in-spool') return;
    this.#byFile.delete(entry.name);
    this.#removeFile(batch);
    if (outcome === 'uploaded') this.pump();
  }

  #removeFile(batch: SealedBatch): void {
    const entry = batch.unspool();
    if (entry === undefined) return;
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
    for (const [name, batch] of this.#byFile) {
      if (this.#loading >= this.#options.loadConcurrency || this.#disk.stalled) break;
      const entry = batch.spool;
      if (batch.state !== 'paged-out' || entry === undefined) continue;
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
    this.#arm();
  }

  async #load(batch: SealedBatch, entry: SpoolEntry): Promise<void> {
    let read: DiskOutcome<Buffer>;
    try {
      read = await this.#disk.run(
        () => this.#spool.read(entry),
        () => {},
      );
    } catch (error) {
      if (batch.state !== 'paging-in') return;
      if (error instanceof SpoolFormatError) this.#quarantine(batch, entry, error);
      else this.#backOnDisk(batch, entry.name, error);
      return;
    }
    if (read.kind !== 'done') {
      if (batch.state === 'paging-in') this.#backOnDisk(batch, entry.name, read.kind);
      return;
    }
    const body = read.value;
    if (!batch.pagedIn(body)) return;
    this.#parts.budget.resize(batch, body.length);
    if (batch.queue()) this.#parts.uploader.submit(batch);
  }

  /** A read that may work later (EMFILE, EIO, a stalled disk): the batch waits on disk again. */
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
    void this.#spool.quarantine(entry).catch(() => {});
    this.#reports.quarantined(
      entry.name,
      `failed to read back (${describeError(error)}); moved to quarantine`,
    );
    this.#parts.budget.drop(batch, 'spool-corrupt');
    this.#syncGauges();
  }

  /** While batches wait on disk or files are unread, try again now and then. */
  #arm(): void {
    if (this.#closed || this.#timer !== undefined) return;
    let waiting = this.#unread.size > 0;
    for (const batch of this.#byFile.values()) if (batch.state === 'paged-out') waiting = true;
    if (!waiting) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#rescan().then(() => this.pump());
    }, this.#options.retryEveryMillis);
    this.#timer.unref();
  }

  async #rescan(): Promise<void> {
    for (const name of [...this.#unread]) {
      if (this.#closed || this.#disk.stalled) return;
      this.#take(await this.#spool.scanOne(name, this.#options.check));
    }
    this.#syncGauges();
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
    this.#reports.gauges(this.#spool.files, this.#spool.bytes);
  }
}
