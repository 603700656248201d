/**
 * Compiled code outlives a batch: a full garbage collection between two batches, when nothing of
 * the last one is left, leaves the column store's and the writer's functions optimized
 * (src/base/kept-shapes.js keeps their instances' shapes). Without it, V8 dropped the shapes and
 * with them every function compiled for them, and the next batches ran unoptimized until they
 * compiled again (docs/performance.md, "Compiled code that outlives a batch").
 */
import { expect, test } from 'vitest';
import { spawnTs } from '../../support/child.js';

test('a full collection between batches keeps the hot functions optimized', async () => {
  const child = spawnTs('test/support/children/kept-shapes.ts', {}, [
    '--allow-natives-syntax',
    '--expose-gc',
  ]);
  const got = await child.waitForJson<{ before: string[]; after: string[] }>(
    (v) => Array.isArray(v.before),
    60_000,
  );
  expect((await child.exited).code, child.stderr()).toBe(0);
  // Optimized by then, all of them (else the test proves nothing).
  expect(got.before).toEqual([
    'FlatStore#text',
    'FlatStore#string',
    'Strings#id',
    'ByteWriter#reserve',
    'BitPacker#repeat',
    'dictionaryOfIds',
  ]);
  expect(got.after).toEqual(got.before);
}, 90_000);
