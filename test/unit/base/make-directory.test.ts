import { mkdir as nodeMkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { makeDirectory } from '../../../src/base/make-directory.js';
import { tempDirs } from '../../support/temp-dir.js';

const newDir = tempDirs();

describe('makeDirectory (mkdir -p)', () => {
  test('makes the missing parents and says the outermost made, as Node does', async () => {
    const dir = await newDir('mkdir-');
    const path = join(dir, 'a', 'b', 'c');
    const ours = await makeDirectory(path);
    expect((await stat(path)).isDirectory()).toBe(true);
    const theirs = await nodeMkdir(join(dir, 'x', 'y', 'z'), { recursive: true });
    expect([ours, theirs]).toEqual([join(dir, 'a'), join(dir, 'x')]);
    expect(await makeDirectory(path)).toBeUndefined();
    expect(await makeDirectory(join(path, 'd'))).toBe(join(path, 'd'));
  });

  test('a file in the way is refused', async () => {
    const dir = await newDir('mkdir-');
    await writeFile(join(dir, 'f'), '');
    await expect(makeDirectory(join(dir, 'f'))).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(makeDirectory(join(dir, 'f', 'g'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  test.runIf(process.platform === 'linux')(
    'a file system that refuses the directory (under /proc) fails at once, where Node loops for ever',
    async () => {
      const started = Date.now();
      await expect(makeDirectory('/proc/otel-s3-test/spool')).rejects.toMatchObject({
        code: 'ENOENT',
      });
      expect(Date.now() - started).toBeLessThan(1_000);
    },
  );
});
