import { readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { dirStore } from '../../../src/compact/dir-store.js';
import {
  acquireLease,
  type Lease,
  LeaseLostError,
  type LeaseOptions,
} from '../../../src/compact/lease.js';
import type { CompactionStore } from '../../../src/compact/store.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';

/** Leases on a real file system: its exclusive link() is the If-None-Match of these tests. */
describe('the partition lease', () => {
  let root: string;
  let store: CompactionStore;
  let clock: number;
  const signal = new AbortController().signal;
  const directory = 'p/_otel_s3_compaction/leases/year=2026/month=03/day=04/hour=05';
  const as = (holder: string, extra: Partial<LeaseOptions> = {}): LeaseOptions => ({
    store,
    directory,
    holder,
    durationMillis: 10_000,
    clockSkewMillis: 1_000,
    now: () => clock,
    ...extra,
  });
  const generations = async () => (await readdir(join(root, directory))).sort();
  const take = async (holder: string, extra?: Partial<LeaseOptions>): Promise<Lease | string> => {
    const attempt = await acquireLease(as(holder, extra), signal);
    return 'lease' in attempt ? attempt.lease : attempt.busy.holder;
  };

  beforeEach(async () => {
    root = await makeTempDir('otel-s3-lease-');
    store = dirStore(root, 'p/_otel_s3_compaction/tmp');
    clock = 1_000_000;
    return () => removeDir(root);
  });

  test('the first compactor takes it; a second finds it busy, naming the holder', async () => {
    const lease = await take('a');
    expect(typeof lease).toBe('object');
    expect(await take('b')).toBe('a');
    expect(await generations()).toEqual(['000000000000.lease']);
  });

  test('an expired lease is taken over only after the clock-skew allowance', async () => {
    await take('a');
    clock += 10_000; // expired by a's clock
    expect(await take('b')).toBe('a');
    clock += 1_000;
    const b = await take('b');
    expect(typeof b).toBe('object');
    // The old generation is deleted; the new one is the highest, and the only one.
    expect(await generations()).toEqual(['000000000001.lease']);
  });

  test('two that take an expired lease at once: the store lets one create the next generation', async () => {
    await take('a');
    clock += 20_000;
    const [b, c] = await Promise.all([take('b'), take('c')]);
    expect([typeof b, typeof c].sort()).toEqual(['object', 'string']);
  });

  test('one that listed before a takeover and creates a lower generation backs off', async () => {
    await take('a');
    clock += 20_000;
    expect(typeof (await take('b'))).toBe('object'); // generation 1; generation 0 deleted
    // c listed while generation 0 was the highest and expired, and creates generation... 0
    // again (it was deleted): it then sees generation 1 above it and gives way.
    const stale = (await import('../../../src/compact/lease.js')).Lease;
    const lease = new stale(as('c'), 0, clock + 10_000);
    const claimed = await lease.claim(0, clock + 10_000, signal);
    expect(claimed).toMatchObject({ holder: 'b' });
  });

  test('keep() renews when less than asked is left, and throws once another took the lease over', async () => {
    const a = (await take('a')) as Lease;
    clock += 2_000;
    await a.keep(5_000, signal); // 8 s left: nothing to do
    expect(a.generation).toBe(0);
    clock += 4_000;
    await a.keep(5_000, signal); // 4 s left: renewed
    expect(a.generation).toBe(1);
    expect(a.expiresAt).toBe(clock + 10_000);
    clock += 20_000; // a overran; b takes over
    expect(typeof (await take('b'))).toBe('object');
    await expect(a.keep(5_000, signal)).rejects.toThrow(LeaseLostError);
  });

  test('release() lets the next compactor in at once, and numbers never go back', async () => {
    const a = (await take('a')) as Lease;
    await a.release(signal);
    const b = (await take('b')) as Lease;
    expect(b.generation).toBe(2);
    expect(await generations()).toEqual(['000000000002.lease']);
  });

  test('a lease object that cannot be read counts as held (busy), never as free', async () => {
    await take('a');
    await writeFile(join(root, directory, '000000000000.lease'), 'not json');
    expect(await take('b')).toBe('unknown');
  });

  test('one that cannot be read is taken as expired once older than a lease and the skew', async () => {
    clock = Date.now();
    await take('a');
    const key = `${directory}/000000000000.lease`;
    await writeFile(join(root, key), 'not json');
    const written = (await stat(join(root, key))).mtimeMs;
    // Younger than a lease (10 s) and the skew (1 s): busy, with when it counts as expired.
    clock = written + 11_000;
    const young = await acquireLease(as('b'), signal);
    expect(young).toEqual({
      busy: {
        holder: 'unknown',
        expiresAt: undefined,
        unreadable: {
          key,
          reason: expect.stringMatching(/JSON/),
          expiredAt: written + 11_000,
        },
      },
    });
    clock = written + 11_001;
    const old = await acquireLease(as('b'), signal);
    expect('lease' in old && old.lease.generation).toBe(1);
    expect('lease' in old && old.tookOver).toEqual({
      key,
      reason: expect.stringMatching(/JSON/),
      expiredAt: written + 11_000,
    });
    expect(await generations()).toEqual(['000000000001.lease']);
  });
});
