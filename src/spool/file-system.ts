import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { makeDirectory } from '../base/make-directory.js';

/** An open file being written. */
export interface SpoolFileHandle {
  /** Writes all of `parts`, in order, at the end of the file. */
  write(parts: readonly Buffer[]): Promise<void>;
  /** fsync: the data (and metadata) reach stable storage, or it throws. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The file operations the spool needs, and nothing else: a seam where tests inject EIO and
 * ENOSPC (and where exotic storage could be plugged in).
 */
export interface SpoolFileSystem {
  mkdir(path: string): Promise<void>;
  /** Creates `path`, failing if it exists (O_CREAT | O_EXCL). */
  create(path: string): Promise<SpoolFileHandle>;
  /** fsync of a directory, so a rename in it is durable. */
  syncDirectory(path: string): Promise<void>;
  /** fsync of a file that exists (one an earlier run wrote and may not have fsynced). */
  syncFile(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  readFile(path: string): Promise<Buffer>;
  readdir(path: string): Promise<string[]>;
}

export const nodeFileSystem: SpoolFileSystem = {
  mkdir: async (path) => {
    try {
      await makeDirectory(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      throw (await mkdirCause(path)) ?? error;
    }
  },
  async create(path) {
    const handle = await open(path, 'wx', 0o600);
    return {
      async write(parts) {
        let pending = parts.filter((p) => p.length > 0);
        while (pending.length > 0) {
          const { bytesWritten } = await handle.writev(pending);
          // writev may write less than asked: skip what went out and go on with the rest.
          let skip = bytesWritten;
          const rest: Buffer[] = [];
          for (const part of pending) {
            if (skip >= part.length) skip -= part.length;
            else {
              rest.push(part.subarray(skip));
              skip = 0;
            }
          }
          pending = rest;
        }
      },
      sync: () => handle.sync(),
      close: () => handle.close(),
    };
  },
  syncFile: (path) => fsyncAt(path, 'r+'),
  syncDirectory: (path) => fsyncAt(path, 'r'),
  rename,
  unlink,
  readFile: (path) => readFile(path),
  readdir: (path) => readdir(path),
};

/**
 * Why a recursive mkdir of `path` failed with ENOENT. Node answers ENOENT for a directory it
 * could not make for another reason (`EROFS` on a read-only mount), which reads as a path
 * that does not exist: the plain mkdir of the first missing directory, under one that exists,
 * returns the system's errno. Undefined when that finds no other cause.
 */
async function mkdirCause(path: string): Promise<Error | undefined> {
  for (let missing = path; dirname(missing) !== missing; missing = dirname(missing)) {
    const parentExists = await stat(dirname(missing)).then(
      () => true,
      () => false,
    );
    if (!parentExists) continue;
    return mkdir(missing).then(
      () => undefined,
      (error: NodeJS.ErrnoException) =>
        error.code === 'EEXIST' || error.code === 'ENOENT' ? undefined : error,
    );
  }
  return undefined;
}

/** fsync of what is at `path`, opened with `flags` (a directory can only be opened to read). */
async function fsyncAt(path: string, flags: 'r' | 'r+'): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
