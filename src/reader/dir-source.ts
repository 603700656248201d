import { createReadStream, type Dirent } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { compareKeys } from '../layout/listing-range.js';
import { exactly, readAtMost } from './bounded-read.js';
import { ReadAccessError } from './errors.js';
import { ObjectTooLargeError } from './read-limits.js';
import type { ListedKey, ObjectSource } from './source.js';

/**
 * Objects in a local directory laid out like the bucket: the file at `{dir}/{key}` is the object
 * `key` (what `aws s3 sync s3://bucket/prefix dir/prefix` leaves). Listed in S3's key order, so a
 * time range skips whole partition directories.
 */
export function dirSource(dir: string): ObjectSource {
  const pathOf = (key: string) => join(dir, ...key.split('/'));
  return {
    description: `directory ${dir}`,
    async *list(prefix, startAfter, signal): AsyncGenerator<ListedKey> {
      await assertDirectory(dir);
      yield* walk(prefix === '' ? dir : pathOf(prefix), prefix === '' ? '' : `${prefix}/`);

      async function* walk(path: string, keyBase: string): AsyncGenerator<ListedKey> {
        signal.throwIfAborted();
        let entries: Dirent[];
        try {
          entries = await readdir(path, { withFileTypes: true });
        } catch (error) {
          if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return; // nothing stored there
          if (isCode(error, 'EACCES') || isCode(error, 'EPERM')) {
            throw new ReadAccessError(
              `cannot list ${path}`,
              'access-denied',
              'permission denied',
              'check the permissions of the directory',
              error,
            );
          }
          throw error;
        }
        const children: { name: string; key: string; directory: boolean }[] = [];
        for (const entry of entries) {
          const directory = entry.isSymbolicLink()
            ? (await stat(join(path, entry.name)).catch(() => undefined))?.isDirectory() === true
            : entry.isDirectory();
          // Everything under a directory `a` has keys starting `a/`: sort it as that.
          children.push({
            name: entry.name,
            key: keyBase + entry.name + (directory ? '/' : ''),
            directory,
          });
        }
        children.sort((a, b) => compareKeys(a.key, b.key));
        for (const child of children) {
          if (child.directory) {
            // Skip a directory whose every key sorts at or before startAfter.
            if (
              startAfter !== undefined &&
              compareKeys(child.key, startAfter) < 0 &&
              !startAfter.startsWith(child.key)
            ) {
              continue;
            }
            yield* walk(join(path, child.name), child.key);
          } else {
            if (startAfter !== undefined && compareKeys(child.key, startAfter) <= 0) continue;
            const info = await stat(join(path, child.name)).catch(() => undefined);
            if (info?.isFile() === true) yield { key: child.key, size: info.size };
          }
        }
      }
    },
    async get(key, signal, maxBytes) {
      const path = pathOf(key);
      const { size } = await stat(path);
      if (size > maxBytes) throw new ObjectTooLargeError('maxObjectBytes', maxBytes, size);
      // `end` is inclusive: a file grown past the limit since stat() is read one byte past it.
      const file = createReadStream(path, { end: maxBytes, signal, highWaterMark: 1024 * 1024 });
      return readAtMost(file, maxBytes, size);
    },
    async getRange(key, start, end, signal) {
      signal.throwIfAborted();
      const file = await open(pathOf(key), 'r');
      try {
        const bytes = Buffer.allocUnsafe(end - start);
        const { bytesRead } = await file.read(bytes, 0, bytes.length, start);
        return exactly(bytes.subarray(0, bytesRead), start, end);
      } finally {
        await file.close();
      }
    },
    close() {},
  };
}

async function assertDirectory(dir: string): Promise<void> {
  const info = await stat(dir).catch((error: unknown) => {
    if (isCode(error, 'ENOENT')) return undefined;
    throw error;
  });
  if (info === undefined || !info.isDirectory()) {
    throw new ReadAccessError(
      `cannot read directory ${dir}`,
      'no-such-directory',
      info === undefined ? 'it does not exist' : 'it is not a directory',
      'check the directory path',
    );
  }
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
