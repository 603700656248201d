import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach } from 'vitest';

/** A new directory under the OS temp directory, named `prefix` and a random suffix. */
export const makeTempDir = (prefix: string): Promise<string> => mkdtemp(join(tmpdir(), prefix));

/** Removes `path` and all it holds; nothing if it is gone already. */
export const removeDir = (path: string): Promise<void> =>
  // Retried: a file a released (hung) write creates meanwhile fails one pass with ENOTEMPTY.
  rm(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });

/**
 * A hook body that makes a temp directory, hands it to `use` and returns what removes it: in
 * `beforeEach(() => tempDir('p-', (d) => (dir = d)))` each test gets a directory of its own,
 * removed after it (even when it fails); in `beforeAll` the file's tests share one.
 */
export async function tempDir(
  prefix: string,
  use: (path: string) => void,
): Promise<() => Promise<void>> {
  const path = await makeTempDir(prefix);
  use(path);
  return () => removeDir(path);
}

/**
 * Makes temp directories during the tests of a file (or of a describe block) and removes them
 * after the last one: `const newDir = tempDirs();` at the top of the file or block (it registers
 * the afterAll), then `const dir = await newDir('p-');` in a test.
 */
export function tempDirs(): (prefix: string) => Promise<string> {
  const made: string[] = [];
  afterAll(async () => {
    for (const path of made.splice(0)) await removeDir(path);
  });
  return async (prefix) => {
    const path = await makeTempDir(prefix);
    made.push(path);
    return path;
  };
}

/**
 * Points TMPDIR (where the compactor spills its sorted runs) at a directory of each test's own,
 * removed after it, TMPDIR then as it was: `const spillDir = tmpdirEachTest('p-');` at the top
 * of a file registers the hooks; `spillDir()` is the current test's directory.
 */
export function tmpdirEachTest(prefix: string): () => string {
  let dir = '';
  let remove: () => Promise<void> = async () => {};
  const saved = process.env.TMPDIR;
  beforeEach(async () => {
    remove = await tempDir(prefix, (path) => (dir = path));
    process.env.TMPDIR = dir;
  });
  afterEach(async () => {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    await remove();
  });
  return () => dir;
}
