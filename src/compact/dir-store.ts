import { randomUUID } from 'node:crypto';
import { link, mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { dirSource } from '../reader/dir-source.js';
import type { CompactionStore } from './store.js';

/**
 * The compactor's store in a local directory laid out like the bucket (`{dir}/{key}`). A file is
 * written whole under a temporary name (`tmpKey`, in the bookkeeping directory the reader
 * ignores), then published: hard-linked to its key when it must not exist yet (link fails if it
 * does: the file system's If-None-Match), renamed over it otherwise. Readers never see a partial
 * file.
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

export function dirStore(dir: string, tmpKey: string): CompactionStore {
  const pathOf = (key: string) => join(dir, ...key.split('/'));
  const source = dirSource(dir, { blocking: blockingReads });
  return {
    source,
    async put(key, body, ifAbsent, signal) {
      signal.throwIfAborted();
      const tmp = pathOf(`${tmpKey}/${randomUUID()}`);
      await mkdir(dirname(tmp), { recursive: true });
      await writeFile(tmp, body);
      try {
        await mkdir(dirname(pathOf(key)), { recursive: true });
        if (!ifAbsent) {
          await rename(tmp, pathOf(key));
          return 'created';
        }
        try {
          await link(tmp, pathOf(key));
          return 'created';
        } catch (error) {
          if ((error as { code?: unknown }).code === 'EEXIST') return 'exists';
          throw error;
        }
      } finally {
        await unlink(tmp).catch(() => {});
      }
    },
    async delete(keys, signal) {
      const failed = new Map<string, string>();
      for (const key of keys) {
        signal.throwIfAborted();
        try {
          await unlink(pathOf(key));
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
