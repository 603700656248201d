import { randomUUID } from 'node:crypto';
import { link, open, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { makeDirectory } from '../base/make-directory.js';
import { dirSource } from '../reader/dir-source.js';
import type { CompactionStore } from './store.js';

/**
 * The compactor's store in a local directory laid out like the bucket (`{dir}/{key}`). A file is
 * written whole under a temporary name (`tmpKey`, in the bookkeeping directory the reader
 * ignores), then published: hard-linked to its key when it must not exist yet (link fails if it
 * does: the file system's If-None-Match), renamed over it otherwise. Readers never see a partial
 * file, and a put returns once the file and its name are on disk (fsync of the file, then of the
 * directories its name and any directory made for it are in).
 */
let blockingReads = false;

/**
 * From now on, this thread's directory stores read their files with blocking calls
 * (dir-source.ts): for the CLI's compaction worker (compact-worker.ts), a thread that waits for
 * nothing else meanwhile. Elsewhere (the API in a caller's thread) the reads stay async.
 */
export function readFilesBlocking(): void {
  blockingReads = true;
}

/** The file operations of a directory store: node:fs, or a test's recording of them. */
export interface DirFiles {
  /** mkdir -p: the first directory it created, if any. */
  mkdir(path: string): Promise<string | undefined>;
  writeFile(path: string, body: Uint8Array): Promise<void>;
  link(from: string, to: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** fsync of a file's bytes. */
  syncFile(path: string): Promise<void>;
  /** fsync of a directory, so that a name made in it lasts. */
  syncDirectory(path: string): Promise<void>;
}

export const nodeDirFiles: DirFiles = {
  mkdir: makeDirectory,
  writeFile: (path, body) => writeFile(path, body),
  link,
  rename,
  unlink,
  syncFile: (path) => fsyncAt(path, 'r+'),
  syncDirectory: (path) => fsyncAt(path, 'r'),
};

/** fsync of what is at `path`, opened with `flags` (a directory can only be opened to read). */
async function fsyncAt(path: string, flags: 'r' | 'r+'): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function dirStore(dir: string, tmpKey: string, files = nodeDirFiles): CompactionStore {
  const pathOf = (key: string) => join(dir, ...key.split('/'));
  const source = dirSource(dir, { blocking: blockingReads });
  return {
    source,
    async put(key, body, ifAbsent, signal) {
      signal.throwIfAborted();
      const tmp = pathOf(`${tmpKey}/${randomUUID()}`);
      await files.mkdir(dirname(tmp));
      await files.writeFile(tmp, body);
      try {
        // Once this returns, the inputs an output replaces may be deleted: its bytes, its name
        // and the names of the directories made for it are on disk first.
        await files.syncFile(tmp);
        const target = pathOf(key);
        const made = await files.mkdir(dirname(target));
        if (!ifAbsent) await files.rename(tmp, target);
        else {
          try {
            await files.link(tmp, target);
          } catch (error) {
            if ((error as { code?: unknown }).code === 'EEXIST') return 'exists';
            throw error;
          }
        }
        await files.syncDirectory(dirname(target));
        if (made !== undefined) {
          for (let at = dirname(target); at !== dirname(made); at = dirname(at)) {
            await files.syncDirectory(dirname(at));
          }
        }
        return 'created';
      } finally {
        await files.unlink(tmp).catch(() => {});
      }
    },
    async delete(keys, signal) {
      const failed = new Map<string, string>();
      for (const key of keys) {
        signal.throwIfAborted();
        try {
          await files.unlink(pathOf(key));
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (code !== 'ENOENT')
            failed.set(key, error instanceof Error ? error.message : String(error));
        }
      }
      return failed;
    },
    close() {
      source.close();
    },
  };
}
