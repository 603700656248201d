import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, expect, test, vi } from 'vitest';
import { nodeFileSystem } from '../../../src/spool/file-system.js';
import { tempDir } from '../../support/temp-dir.js';

/** A directory that refuses new entries as a read-only mount does: `mkdir(2)` fails EROFS. */
const readOnly: { dir: string | undefined } = { dir: undefined };

vi.mock('node:fs/promises', async (original) => {
  const fs = await original<typeof import('node:fs/promises')>();
  return {
    ...fs,
    mkdir: async (...args: Parameters<typeof fs.mkdir>) => {
      const [path, options] = args;
      const ro = readOnly.dir;
      if (ro !== undefined && String(path).startsWith(`${ro}/`)) {
        // What Node 24 answers on a read-only tmpfs (seen with `mount -o ro`): the recursive
        // mkdir says ENOENT, the plain one the errno the system call returned.
        const recursive = typeof options === 'object' && options?.recursive === true;
        const code = recursive ? 'ENOENT' : 'EROFS';
        throw Object.assign(new Error(`${code}: injected, mkdir '${String(path)}'`), { code });
      }
      return fs.mkdir(...args);
    },
  };
});

let dir: string;
beforeEach(async () => {
  const remove = await tempDir('otel-s3-file-system-', (path) => (dir = path));
  return async () => {
    readOnly.dir = undefined;
    await remove();
  };
});

test('a spool directory on a read-only file system is reported as EROFS, not as missing', async () => {
  readOnly.dir = dir;
  const error = await nodeFileSystem.mkdir(join(dir, 'spool', 'batches')).catch((e) => e);
  expect((error as NodeJS.ErrnoException).code).toBe('EROFS');
});

test('directories that exist, or can be made, are no error', async () => {
  readOnly.dir = join(dir, 'elsewhere');
  await nodeFileSystem.mkdir(join(dir, 'a', 'b', 'c'));
  await nodeFileSystem.mkdir(join(dir, 'a', 'b', 'c'));
  expect(statSync(join(dir, 'a', 'b', 'c')).isDirectory()).toBe(true);
});
