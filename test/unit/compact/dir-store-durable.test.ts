import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { type DirFiles, dirStore, nodeDirFiles } from '../../../src/compact/dir-store.js';
import { tempDir } from '../../support/temp-dir.js';

/**
 * A directory store's put is the compactor's PUT: once it returns, the run may delete the inputs
 * the file replaces. So the file's bytes, and its name in its directory (and the name of every
 * directory made for it), must be on stable storage before it returns: else a power cut after
 * the inputs' unlinks can leave neither the inputs nor the output's points.
 */
describe('a directory store writes durably before it answers', () => {
  let dir: string;
  beforeEach(() => tempDir('otel-s3-dir-durable-', (path) => (dir = path)));

  const recording = () => {
    const calls: string[] = [];
    const rel = (path: string) => path.slice(dir.length + 1) || '.';
    const tmpOr = (path: string) =>
      rel(path).startsWith('p/_otel_s3_compaction/tmp/') ? 'tmp' : rel(path);
    const files: DirFiles = {
      ...nodeDirFiles,
      async writeFile(path, body) {
        calls.push(`write ${tmpOr(path)}`);
        return nodeDirFiles.writeFile(path, body);
      },
      async link(from, to) {
        calls.push(`link ${rel(to)}`);
        return nodeDirFiles.link(from, to);
      },
      async rename(from, to) {
        calls.push(`rename ${rel(to)}`);
        return nodeDirFiles.rename(from, to);
      },
      async syncFile(path) {
        calls.push(`sync ${tmpOr(path)}`);
        return nodeDirFiles.syncFile(path);
      },
      async syncDirectory(path) {
        calls.push(`sync dir ${rel(path)}`);
        return nodeDirFiles.syncDirectory(path);
      },
    };
    return { calls, files };
  };

  test('a new file: its bytes, then its name and the directories made for it', async () => {
    await mkdir(join(dir, 'p'), { recursive: true });
    const { calls, files } = recording();
    const store = dirStore(dir, 'p/_otel_s3_compaction/tmp', files);
    const signal = new AbortController().signal;
    const key = 'p/year=2026/hour=01/out.parquet';
    expect(await store.put(key, new Uint8Array([1, 2, 3]), true, signal)).toBe('created');
    expect(calls).toEqual([
      'write tmp',
      'sync tmp',
      'link p/year=2026/hour=01/out.parquet',
      'sync dir p/year=2026/hour=01',
      'sync dir p/year=2026',
      'sync dir p',
    ]);
    // An overwrite (a skip record) into a directory that is there: the same, by rename.
    calls.length = 0;
    expect(await store.put(key, new Uint8Array([4]), false, signal)).toBe('created');
    expect(calls).toEqual([
      'write tmp',
      'sync tmp',
      'rename p/year=2026/hour=01/out.parquet',
      'sync dir p/year=2026/hour=01',
    ]);
    expect([...(await readFile(join(dir, ...key.split('/'))))]).toEqual([4]);
    store.close();
  });
});
