import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * `mkdir -p`: `path` and its missing parents, each made once; the first directory made (the
 * outermost), or undefined if `path` was there. Not Node's recursive mkdir, which loops for ever
 * where mkdir says ENOENT of a path whose parent exists (under /proc or /sys, on some FUSE file
 * systems): each call held a thread of libuv's pool at full CPU, and a spool that tried its
 * directory again every second took more of the machine every second.
 */
export async function makeDirectory(path: string): Promise<string | undefined> {
  try {
    await mkdir(path);
    return path;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return existingDirectory(path, error);
    if (code !== 'ENOENT' || dirname(path) === path) throw error;
  }
  const made = await makeDirectory(dirname(path));
  try {
    await mkdir(path);
    return made ?? path;
  } catch (error) {
    // Its parent is there now: ENOENT again is this file system's refusal, said as it is.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return existingDirectory(path, error).then(() => made);
  }
}

/** A path that exists is fine as a directory (nothing made), else mkdir's EEXIST stands. */
async function existingDirectory(path: string, error: unknown): Promise<undefined> {
  const found = await stat(path).catch(() => undefined);
  if (found?.isDirectory() !== true) throw error;
  return undefined;
}
