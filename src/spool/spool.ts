import { basename, join } from 'node:path';
import { uuidv7 } from 'uuidv7';
import type { DurableCopy } from '../pipeline/sealed-batch.js';
import type { DiskDeadline } from './disk-deadline.js';
import {
  decodeSpoolFile,
  encodeSpoolFile,
  type LostBatch,
  lostBatch,
  SpoolFormatError,
  type SpoolMeta,
} from './file-format.js';
import type { SpoolFileSystem } from './file-system.js';
import {
  LOCK_TIMING,
  type LockHolder,
  type LockTiming,
  type SpoolLock,
  tryLockSpoolDir,
} from './lock.js';

/** A batch that is durably on disk; its name is the file's inside `batches/` (a UUIDv7). */
export type SpoolEntry = DurableCopy;

/** A spool write that did not become durable; the bytes are still the caller's. */
export class SpoolWriteError extends Error {
  /** errno code (EIO, ENOSPC, ...) or 'unknown'. */
  readonly code: string;
  constructor(step: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException)?.code ?? 'unknown';
    super(`spool ${step} failed: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'SpoolWriteError';
    this.code = code;
  }
}

/** What a scan did with one file of `batches/` or `tmp/`. */
export type ScanEvent =
  | { kind: 'entry'; entry: SpoolEntry }
  /**
   * Torn, corrupt, or not a file this exporter could have written: moved to `quarantine/`.
   * `lost`: the batch of a spool file of `batches/` (of `tmp/`: one whose checksum held, as one
   * a crash cut short was never durable here), for the drop counts.
   */
  | { kind: 'quarantined'; name: string; reason: string; lost?: LostBatch | undefined }
  /**
   * A whole file of another signal's exporter (its metadata names that signal): left where it
   * is, neither used nor counted in bytes and files.
   */
  | { kind: 'foreign'; name: string; signal: string }
  /** Could not be read now (EMFILE, EIO, EACCES, ...): left in place, to be read again later. */
  | { kind: 'unreadable'; name: string; error: unknown };

/** Checks a valid file's metadata against the configuration; a reason if it is not ours. */
export type MetaCheck = (meta: SpoolMeta) => string | undefined;

/** What opening a spool directory came to: ours now, or someone else's for the moment. */
export type SpoolOpening = { kind: 'open'; spool: Spool } | { kind: 'held'; holder: LockHolder };

/** How scanOne() names a file of `tmp/` (no name in a directory has a slash). */
const TMP = 'tmp/';

/** The name in `batches/` of a file adopted from `tmp/`. */
const adoptedName = (tmpName: string) => tmpName.replace(/\.tmp$/, '');

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === 'ENOENT';

/**
 * The durable disk spool: one file per batch, written to `tmp/`, fsynced, renamed into
 * `batches/`, and the directory fsynced, so a file in `batches/` is whole. A failed write or
 * fsync is never retried on the same file (the page cache may hold anything after a failed
 * fsync): the caller keeps the bytes and a later write uses a fresh name.
 *
 * Every file-system call runs under the disk deadline: past it, or while an overdue call has not
 * returned, the operation fails with DiskDeadlineError (`timeout`, `stalled`) and the caller
 * goes on without the disk.
 */
export class Spool {
  readonly dir: string;
  readonly #fs: SpoolFileSystem;
  readonly #disk: DiskDeadline;
  readonly #batches: string;
  readonly #tmp: string;
  readonly #quarantine: string;
  readonly #lock: SpoolLock;
  /**
   * The signal of the exporter whose spool this is, for the metadata of its files (see write());
   * a file naming another is left alone.
   */
  readonly signal: string | undefined;
  /** Files of `batches/` counted in bytes and files, with their sizes. */
  readonly #counted = new Map<string, number>();
  #bytes = 0;
  /** Files this process writes or wrote (until removed): not an earlier run's. */
  readonly #ours = new Set<string>();
  /** Files whose deletion or move to quarantine failed or overran, by path: see retryUndone(). */
  readonly #undone = new Map<string, 'remove' | 'quarantine'>();

  private constructor(
    dir: string,
    fs: SpoolFileSystem,
    disk: DiskDeadline,
    lock: SpoolLock,
    signal: string | undefined,
  ) {
    this.dir = dir;
    this.signal = signal;
    this.#fs = fs;
    this.#disk = disk;
    this.#batches = join(dir, 'batches');
    this.#tmp = join(dir, 'tmp');
    this.#quarantine = join(dir, 'quarantine');
    this.#lock = lock;
  }

  /**
   * Creates the directories and tries once to take the lock (see tryLockSpoolDir), off the
   * event loop. The caller holds a claim on `dir` and runs this under `disk`'s deadline, which
   * the spool then uses for every operation. `lock`: the lock's intervals. `signal`: the
   * exporter's, written into each file (undefined: none, and every file is taken as its own).
   */
  static async open(
    dir: string,
    fs: SpoolFileSystem,
    disk: DiskDeadline,
    lock: LockTiming = LOCK_TIMING,
    signal?: string,
  ): Promise<SpoolOpening> {
    for (const sub of ['batches', 'tmp', 'quarantine', 'journal']) await fs.mkdir(join(dir, sub));
    const attempt = await tryLockSpoolDir(dir, lock);
    if (attempt.kind === 'held') return attempt;
    return { kind: 'open', spool: new Spool(dir, fs, disk, attempt.lock, signal) };
  }

  /** Bytes of the files in `batches/`. */
  get bytes(): number {
    return this.#bytes;
  }

  get files(): number {
    return this.#counted.size;
  }

  /** True while a disk operation overran its deadline and has not returned: nothing new starts. */
  get stalled(): boolean {
    return this.#disk.stalled;
  }

  /**
   * Reads what an earlier run left, oldest first, reporting each file as it goes: every file
   * of `batches/` is validated; complete files left in `tmp/` (a crash between fsync and rename)
   * are adopted; torn and corrupt files go to `quarantine/`; another signal's files are left where
   * they are (`foreign` events); files that cannot be read
   * now (an errno error, the disk deadline) stay where they are. Throws only when a directory
   * cannot be listed: then no file of `batches/` was reported, and the scan can be run again.
   * Once `stopped()` is true (shutdown), no further file is read.
   */
  async scan(
    check: MetaCheck,
    report: (event: ScanEvent) => void,
    stopped: () => boolean = () => false,
  ): Promise<void> {
    for (const name of (await this.#disk.run(() => this.#fs.readdir(this.#tmp))).sort()) {
      if (stopped()) return;
      if (this.#ours.has(adoptedName(name)) || this.#undone.has(join(this.#tmp, name))) continue;
      const event = await this.#adopt(name, check);
      if (event !== undefined) report(event);
    }
    for (const name of (await this.#disk.run(() => this.#fs.readdir(this.#batches))).sort()) {
      if (stopped()) return;
      // Not ours, and not set aside already by a scan run before (see #moveToQuarantine).
      if (this.#ours.has(name) || this.#undone.has(join(this.#batches, name))) continue;
      report(await this.scanOne(name, check));
    }
  }

  /**
   * Adopts a complete file of `tmp/` into `batches/`; undefined once adopted (the listing of
   * `batches/` then finds it). One that cannot be read or moved now is reported under
   * `tmp/{name}`, the name scanOne() adopts it by when it is tried again.
   */
  async #adopt(name: string, check: MetaCheck): Promise<ScanEvent | undefined> {
    const path = join(this.#tmp, name);
    const read = await this.#readChecked(path, check);
    if ('reason' in read) {
      const lost = read.lost?.whole ? read.lost : undefined;
      return this.#moveToQuarantine(path, name, read.reason, lost);
    }
    if ('error' in read) return { kind: 'unreadable', name: `${TMP}${name}`, error: read.error };
    if ('foreign' in read) return { kind: 'foreign', name: `${TMP}${name}`, signal: read.foreign };
    const adopted = join(this.#batches, adoptedName(name));
    try {
      // Complete, yet perhaps never fsynced (the crash came before its fsync returned): made
      // durable before it is a spool file, whose journal chain is deleted once it is.
      await this.#disk.run(async () => {
        await this.#fs.syncFile(path);
        await this.#fs.rename(path, adopted);
        await this.#fs.syncDirectory(this.#batches);
      });
    } catch (error) {
      return { kind: 'unreadable', name: `${TMP}${name}`, error };
    }
    return undefined;
  }

  /**
   * Reads and checks one file of `batches/` (see scan()); `tmp/{name}`, a file of `tmp/` that
   * scan() could not adopt, is adopted first.
   */
  async scanOne(name: string, check: MetaCheck): Promise<ScanEvent> {
    if (name.startsWith(TMP)) {
      const tmpName = name.slice(TMP.length);
      const event = await this.#adopt(tmpName, check);
      // Gone from tmp/: adopted by a move that completed after its deadline, or by a scan.
      const gone = event?.kind === 'unreadable' && isMissing(event.error);
      if (event !== undefined && !gone) return event;
      return this.scanOne(adoptedName(tmpName), check);
    }
    const path = join(this.#batches, name);
    const read = await this.#readChecked(path, check);
    if ('reason' in read) return this.#moveToQuarantine(path, name, read.reason, read.lost);
    if ('error' in read) return { kind: 'unreadable', name, error: read.error };
    if ('foreign' in read) return { kind: 'foreign', name, signal: read.foreign };
    this.#count(name, read.fileBytes);
    return { kind: 'entry', entry: { name, fileBytes: read.fileBytes, meta: read.meta } };
  }

  async #readChecked(
    path: string,
    check: MetaCheck,
  ): Promise<
    | { meta: SpoolMeta; fileBytes: number }
    | { reason: string; lost?: LostBatch | undefined }
    | { error: unknown }
    | { foreign: string }
  > {
    let file: Buffer;
    try {
      file = await this.#disk.run(() => this.#fs.readFile(path));
    } catch (error) {
      // A directory is no spool file and never becomes one: unusable, not a read to try again
      // (an unread file keeps the journal from being replayed).
      if ((error as NodeJS.ErrnoException)?.code === 'EISDIR') return { reason: 'a directory' };
      return { error };
    }
    try {
      const { meta } = decodeSpoolFile(file);
      // Another signal's batch: not this exporter's to upload, to drop or to count.
      if (meta.signal !== undefined && this.signal !== undefined && meta.signal !== this.signal)
        return { foreign: meta.signal };
      const reason = check(meta);
      return reason === undefined
        ? { meta, fileBytes: file.length }
        : { reason, lost: lostBatch(file) };
    } catch (error) {
      if (error instanceof SpoolFormatError)
        return { reason: error.message, lost: lostBatch(file) };
      throw error;
    }
  }

  /**
   * A file that failed its checks is set aside: moved to `quarantine/`, or, if the disk does
   * not do it now, kept for retryUndone(). Either way it is never used, and reported once.
   */
  async #moveToQuarantine(
    path: string,
    name: string,
    reason: string,
    lost: LostBatch | undefined,
  ): Promise<ScanEvent> {
    await this.#discard(path, 'quarantine').catch(() => {});
    return { kind: 'quarantined', name, reason, lost };
  }

  /**
   * Writes a batch durably; throws SpoolWriteError (after cleaning up) if it did not become
   * durable, or DiskDeadlineError. `meta` names the spool's signal (its size is the caller's
   * room to make). A write that completes after its deadline is handed to
   * `late`: it was never trusted, and the caller removes it.
   */
  async write(
    meta: SpoolMeta,
    body: Buffer,
    late: (entry: SpoolEntry) => void = () => {},
  ): Promise<SpoolEntry> {
    const name = `${uuidv7()}.batch`;
    // Known before it exists, so a scan running meanwhile never takes it for an earlier run's.
    this.#ours.add(name);
    return this.#disk.run(() => this.#write(name, meta, body), late);
  }

  async #write(name: string, meta: SpoolMeta, body: Buffer): Promise<SpoolEntry> {
    const tmpPath = join(this.#tmp, `${name}.tmp`);
    const finalPath = join(this.#batches, name);
    const parts = encodeSpoolFile(meta, body);
    const fileBytes = parts.reduce((n, p) => n + p.length, 0);
    let step = 'create';
    let renamed = false;
    try {
      const handle = await this.#fs.create(tmpPath);
      try {
        step = 'write';
        await handle.write(parts);
        step = 'fsync';
        await handle.sync();
      } finally {
        await handle.close().catch(() => {});
      }
      step = 'rename';
      await this.#fs.rename(tmpPath, finalPath);
      renamed = true;
      step = 'directory fsync';
      await this.#fs.syncDirectory(this.#batches);
    } catch (error) {
      // Not durable: remove what we made so a replay never finds it, and let the caller keep the
      // bytes. A removal that fails is tried again (retryUndone), and no scan takes the file.
      const made = renamed ? finalPath : tmpPath;
      await this.#fs.unlink(made).catch((cleanup: unknown) => {
        if (!isMissing(cleanup)) this.#undone.set(made, 'remove');
      });
      this.#ours.delete(name);
      throw new SpoolWriteError(step, error);
    }
    this.#count(name, fileBytes);
    return { name, fileBytes, meta };
  }

  /** The body of an entry, validated again (the disk may have changed it since). */
  async read(entry: SpoolEntry): Promise<Buffer> {
    const file = await this.#disk.run(() => this.#fs.readFile(join(this.#batches, entry.name)));
    return decodeSpoolFile(file).body;
  }

  /**
   * Deletes an entry, after S3 acknowledged it or when it is evicted. It stops counting at
   * once. If the deletion fails or overruns its deadline, it throws and the file is kept for
   * retryUndone() (until then a restart would replay it, and a conditional write refuses it).
   */
  remove(entry: SpoolEntry): Promise<void> {
    this.#forget(entry.name);
    return this.#discard(join(this.#batches, entry.name), 'remove');
  }

  /** Moves an entry that failed to read back to `quarantine/`; a failure as for remove(). */
  quarantine(entry: SpoolEntry): Promise<void> {
    this.#forget(entry.name);
    return this.#discard(join(this.#batches, entry.name), 'quarantine');
  }

  /** Deletions and moves that failed or overran, waiting for retryUndone(). */
  get undone(): number {
    return this.#undone.size;
  }

  /** Tries the failed deletions and moves again, one at a time, while the disk is not stalled. */
  async retryUndone(): Promise<void> {
    for (const [path, action] of [...this.#undone]) {
      if (this.stalled) return;
      await this.#discard(path, action).catch(() => {});
    }
  }

  async #discard(path: string, action: 'remove' | 'quarantine'): Promise<void> {
    this.#undone.delete(path);
    try {
      await this.#disk.run(() =>
        action === 'remove'
          ? this.#fs.unlink(path)
          : this.#fs.rename(path, join(this.#quarantine, basename(path))),
      );
    } catch (error) {
      if (isMissing(error)) return; // done already (by a late or an earlier try)
      this.#undone.set(path, action);
      throw error;
    }
  }

  /**
   * Stops counting an entry in bytes and files at once, for a file whose deletion waits (for its
   * journal chain): what it held is free for eviction and gauges now. remove() deletes it later.
   */
  uncount(name: string): void {
    const fileBytes = this.#counted.get(name);
    if (fileBytes === undefined) return;
    this.#counted.delete(name);
    this.#bytes -= fileBytes;
  }

  /**
   * Counts an entry again: a file uncount() let go of that stays on disk after all (its deletion
   * could not be started), so the bound and the gauges see it until remove() deletes it.
   */
  recount(entry: SpoolEntry): void {
    this.#count(entry.name, entry.fileBytes);
  }

  #count(name: string, fileBytes: number): void {
    if (this.#counted.has(name)) return;
    this.#counted.set(name, fileBytes);
    this.#bytes += fileBytes;
  }

  #forget(name: string): void {
    this.#ours.delete(name);
    this.uncount(name);
  }

  /** Releases the directory lock (bounded in time); false if a hung disk still holds it. */
  close(): Promise<boolean> {
    return this.#lock.release();
  }
}
