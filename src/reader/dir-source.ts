import { closeSync, type Dirent, fstatSync, openSync, readSync, statSync } from 'node:fs';
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
 *
 * `blocking`: files are statted and read with blocking calls, for a thread that does nothing
 * else meanwhile (the CLI's compaction worker). Each async call is a trip through libuv's pool:
 * four a file (open, stat, read, close), which for the small files a compaction reads by the
 * thousand cost more than the reading (in a day of log records' compaction, 2,880 files, 0.7 s
 * of the worker's CPU and 0.6 s of it waiting, of 7.5 s).
 */
export function dirSource(dir: string, { blocking = false } = {}): ObjectSource {
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
            const file = join(path, child.name);
            const info = blocking ? statOrNone(file) : await stat(file).catch(() => undefined);
            if (info?.isFile() === true) {
              yield { key: child.key, size: info.size, lastModified: info.mtimeMs };
            }
          }
        }
      }
    },
    async get(key, signal, maxBytes) {
      signal.throwIfAborted();
      if (blocking) return getBlocking(pathOf(key), signal, maxBytes);
      const file = await open(pathOf(key), 'r');
      try {
        const { size } = await file.stat();
        if (size > maxBytes) throw new ObjectTooLargeError('maxObjectBytes', maxBytes, size);
        const read = async (buffer: Buffer, length: number) =>
          (await file.read(buffer, 0, length, null)).bytesRead;
        return await readAtMost(chunksOf(read, size, signal), maxBytes, size);
      } finally {
        await file.close();
      }
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

/**
 * A file's bytes (`read` fills a buffer's first `length` bytes from where the last read ended:
 * async or blocking), from its start to its end: first as much as stat() said (one read for most
 * files), then EXTRA_READ_BYTES at a time (a file that grew since; readAtMost stops past the
 * limit). Not a read stream: that reads into a buffer of its highWaterMark (or more) a call, for
 * files of a few KB (a compaction reads hundreds of them an hour), and every such buffer is
 * memory outside the heap that V8 collects against.
 */
async function* chunksOf(
  read: (buffer: Buffer, length: number) => number | Promise<number>,
  size: number,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  let length = Math.max(1, size);
  for (;;) {
    signal.throwIfAborted();
    const buffer = Buffer.allocUnsafe(length);
    const bytesRead = await read(buffer, length);
    if (bytesRead === 0) return;
    yield buffer.subarray(0, bytesRead);
    length = EXTRA_READ_BYTES;
  }
}

const EXTRA_READ_BYTES = 4096;

/** A file's stat, undefined if it cannot be had (as the listing's stat().catch()). */
function statOrNone(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** dirSource's get() with blocking calls: the same reads, in the same sizes. */
async function getBlocking(
  path: string,
  signal: AbortSignal,
  maxBytes: number,
): Promise<Uint8Array> {
  const fd = openSync(path, 'r');
  try {
    const { size } = fstatSync(fd);
    if (size > maxBytes) throw new ObjectTooLargeError('maxObjectBytes', maxBytes, size);
    const read = (buffer: Buffer, length: number) => readSync(fd, buffer, 0, length, null);
    return await readAtMost(chunksOf(read, size, signal), maxBytes, size);
  } finally {
    closeSync(fd);
  }
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
