import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { uuidv7 } from 'uuidv7';
import {
  decodeSpoolFile,
  encodeSpoolFile,
  SpoolFormatError,
  type SpoolMeta,
} from './file-format.js';
import { nodeFileSystem, type SpoolFileSystem } from './file-system.js';
import { lockSpoolDir, type SpoolLock } from './lock.js';

/** A batch that is durably on disk. */
export interface SpoolEntry {
  /** File name inside `batches/`; names sort by write time (UUIDv7). */
  readonly name: string;
  /** Bytes the file takes. */
  readonly fileBytes: number;
  readonly meta: SpoolMeta;
}

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
  /** Torn, corrupt, or not a file this exporter could have written: moved to `quarantine/`. */
  | { kind: 'quarantined'; name: string; reason: string }
  /** Could not be read now (EMFILE, EIO, EACCES, ...): left in place, to be read again later. */
  | { kind: 'unreadable'; name: string; error: unknown };

/** Checks a valid file's metadata against the configuration; a reason if it is not ours. */
export type MetaCheck = (meta: SpoolMeta) => string | undefined;

/**
 * The durable disk spool: one file per batch, written to `tmp/`, fsynced, renamed into
 * `batches/`, and the directory fsynced, so a file in `batches/` is whole. A failed write or
 * fsync is never retried on the same file (the page cache may hold anything after a failed
 * fsync): the caller keeps the bytes and a later write uses a fresh name.
 */
export class Spool {
  readonly dir: string;
  readonly #fs: SpoolFileSystem;
  readonly #batches: string;
  readonly #tmp: string;
  readonly #quarantine: string;
  readonly #lock: SpoolLock;
  #bytes = 0;
  #files = 0;
  /** Files this process writes or wrote (until removed): not an earlier run's. */
  readonly #ours = new Set<string>();

  private constructor(dir: string, fs: SpoolFileSystem, lock: SpoolLock) {
    this.dir = dir;
    this.#fs = fs;
    this.#batches = join(dir, 'batches');
    this.#tmp = join(dir, 'tmp');
    this.#quarantine = join(dir, 'quarantine');
    this.#lock = lock;
  }

  /** Creates the directories and takes the lock (throws SpoolLockedError if another owner lives). */
  static open(dir: string, fs: SpoolFileSystem = nodeFileSystem): Spool {
    for (const sub of ['batches', 'tmp', 'quarantine'])
      mkdirSync(join(dir, sub), { recursive: true });
    return new Spool(dir, fs, lockSpoolDir(dir));
  }

  /** Bytes of the files in `batches/`. */
  get bytes(): number {
    return this.#bytes;
  }

  get files(): number {
    return this.#files;
  }

  /**
   * Reads what an earlier run left, oldest first, reporting each file as it goes: every file
   * of `batches/` is validated; complete files left in `tmp/` (a crash between fsync and rename)
   * are adopted; torn, corrupt and foreign files go to `quarantine/`; files that cannot be read
   * now stay where they are.
   */
  async scan(check: MetaCheck, report: (event: ScanEvent) => void): Promise<void> {
    for (const name of (await this.#fs.readdir(this.#tmp)).sort()) {
      if (this.#ours.has(name.replace(/\.tmp$/, ''))) continue;
      const path = join(this.#tmp, name);
      const read = await this.#readChecked(path, check);
      if ('meta' in read)
        await this.#fs.rename(path, join(this.#batches, name.replace(/\.tmp$/, '')));
      else if ('reason' in read) report(await this.#moveToQuarantine(path, name, read.reason));
      else report({ kind: 'unreadable', name, error: read.error });
    }
    for (const name of (await this.#fs.readdir(this.#batches)).sort()) {
      if (!this.#ours.has(name)) report(await this.scanOne(name, check));
    }
  }

  /** Reads and checks one file of `batches/` (see scan()). */
  async scanOne(name: string, check: MetaCheck): Promise<ScanEvent> {
    const path = join(this.#batches, name);
    const read = await this.#readChecked(path, check);
    if ('reason' in read) return this.#moveToQuarantine(path, name, read.reason);
    if ('error' in read) return { kind: 'unreadable', name, error: read.error };
    this.#bytes += read.fileBytes;
    this.#files++;
    return { kind: 'entry', entry: { name, fileBytes: read.fileBytes, meta: read.meta } };
  }

  async #readChecked(
    path: string,
    check: MetaCheck,
  ): Promise<{ meta: SpoolMeta; fileBytes: number } | { reason: string } | { error: unknown }> {
    let file: Buffer;
    try {
      file = await this.#fs.readFile(path);
    } catch (error) {
      return { error };
    }
    try {
      const { meta } = decodeSpoolFile(file);
      const reason = check(meta);
      return reason === undefined ? { meta, fileBytes: file.length } : { reason };
    } catch (error) {
      if (error instanceof SpoolFormatError) return { reason: error.message };
      throw error;
    }
  }

  async #moveToQuarantine(path: string, name: string, reason: string): Promise<ScanEvent> {
    await this.#fs.rename(path, join(this.#quarantine, name));
    return { kind: 'quarantined', name, reason };
  }

  /** Writes a batch durably; throws SpoolWriteError (after cleaning up) if it did not become durable. */
  async write(meta: SpoolMeta, body: Buffer): Promise<SpoolEntry> {
    const name = `${uuidv7()}.batch`;
    // Known before it exists, so a scan running meanwhile never takes it for an earlier run's.
    this.#ours.add(name);
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
      // Not durable: remove what we made so a replay never finds it, and let the caller keep the bytes.
      await this.#fs.unlink(renamed ? finalPath : tmpPath).catch(() => {});
      throw new SpoolWriteError(step, error);
    }
    this.#bytes += fileBytes;
    this.#files++;
    return { name, fileBytes, meta };
  }

  /** The body of an entry, validated again (the disk may have changed it since). */
  async read(entry: SpoolEntry): Promise<Buffer> {
    return decodeSpoolFile(await this.#fs.readFile(join(this.#batches, entry.name))).body;
  }

  /** Deletes an entry, after S3 acknowledged it or when it is evicted. */
  async remove(entry: SpoolEntry): Promise<void> {
    this.#forget(entry);
    await this.#fs.unlink(join(this.#batches, entry.name));
  }

  /** Moves an entry that failed to read back to `quarantine/`. */
  async quarantine(entry: SpoolEntry): Promise<void> {
    this.#forget(entry);
    await this.#fs.rename(join(this.#batches, entry.name), join(this.#quarantine, entry.name));
  }

  #forget(entry: SpoolEntry): void {
    this.#ours.delete(entry.name);
    this.#bytes -= entry.fileBytes;
    this.#files--;
  }

  /** Releases the directory lock at once: the exporter's constructor failed after open(). */
  abandon(): void {
    this.#lock.releaseNow();
  }

  /** Releases the directory lock (bounded in time). */
  close(): Promise<void> {
    return this.#lock.release();
  }
}
