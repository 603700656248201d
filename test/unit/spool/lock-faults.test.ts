import {
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, test, vi } from 'vitest';
import type { SpoolOwner } from '../../../src/spool/lock.js';
import { tryLockSpoolDir } from '../../../src/spool/lock.js';
import { captureDiag } from '../../support/diag-capture.js';
import { tempDir } from '../../support/temp-dir.js';
import { sleep } from '../../support/wait.js';

const messages = captureDiag();

/** Runs once, when the taker makes its candidate lock: between its inspection and its takeover. */
const between: { hook: (() => void) | undefined } = { hook: undefined };
/** Errno codes the next reads of an owner.json fail with, one per read. */
const ownerReadFaults: string[] = [];

vi.mock('node:fs/promises', async (original) => {
  const fs = await original<typeof import('node:fs/promises')>();
  return {
    ...fs,
    mkdir: async (...args: Parameters<typeof fs.mkdir>) => {
      const hook = between.hook;
      between.hook = undefined;
      if (String(args[0]).endsWith('.tmp')) hook?.();
      return fs.mkdir(...args);
    },
    readFile: async (...args: Parameters<typeof fs.readFile>) => {
      const code = String(args[0]).endsWith('owner.json') ? ownerReadFaults.shift() : undefined;
      if (code !== undefined)
        throw Object.assign(new Error(`${code}: injected read failure`), { code });
      return fs.readFile(...args);
    },
  };
});

let dir: string;
beforeEach(() => tempDir('otel-s3-lock-faults-', (path) => (dir = path)));

const lockDir = () => join(dir, 'owner.lock');
const writeLock = (owner: Partial<SpoolOwner>) => {
  rmSync(lockDir(), { recursive: true, force: true });
  mkdirSync(lockDir());
  writeFileSync(join(lockDir(), 'owner.json'), JSON.stringify(owner));
};

describe('taking over a stale lock', () => {
  // Two processes find the same stale lock; the other one takes it over first. Ours must not
  // then move the other's fresh lock aside (it judged the old one, not this one).
  test('a lock that another taker made after we judged the old one stale is not taken', async () => {
    writeLock({
      pid: 999_999,
      host: hostname(),
      bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      pidNamespace: readlinkSync('/proc/self/ns/pid'),
      token: 'dead-owner',
      since: new Date(0).toISOString(),
    });
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockDir(), old, old);
    // The other taker wins the race: a fresh lock, owned from another pid namespace (nothing
    // here can prove it gone).
    between.hook = () =>
      writeLock({
        pid: 1,
        host: hostname(),
        bootId: undefined,
        pidNamespace: 'pid:[1]',
        token: 'the-winner',
        since: new Date().toISOString(),
      });
    const attempt = await tryLockSpoolDir(dir);
    if (attempt.kind === 'taken') await attempt.lock.release();
    expect(attempt.kind).toBe('held');
    expect(JSON.parse(readFileSync(join(lockDir(), 'owner.json'), 'utf8')).token).toBe(
      'the-winner',
    );
  });
});

describe('refreshing a held lock', () => {
  // A read of owner.json that fails for a while (EMFILE, EIO) says nothing about who owns the
  // lock: taking it as lost would stop the refreshes for good, and the lock would go stale under
  // an owner that still uses the directory.
  test('a transient failure to read the owner does not lose the lock: refreshes go on', async () => {
    const timing = { refreshMillis: 50, staleMillis: 10_000, retryMillis: 1_000 };
    const attempt = await tryLockSpoolDir(dir, timing);
    if (attempt.kind !== 'taken') throw new Error('not taken');
    try {
      ownerReadFaults.push('EMFILE');
      await sleep(200);
      const old = new Date(Date.now() - 60_000);
      utimesSync(lockDir(), old, old);
      await sleep(200);
      expect(Date.now() - statSync(lockDir()).mtimeMs).toBeLessThan(5_000);
      expect(messages.filter((m) => /was taken by another process/.test(m.text))).toEqual([]);
    } finally {
      await attempt.lock.release();
    }
  });

  test('a lock that names another owner is lost, and said so', async () => {
    const timing = { refreshMillis: 50, staleMillis: 10_000, retryMillis: 1_000 };
    const attempt = await tryLockSpoolDir(dir, timing);
    if (attempt.kind !== 'taken') throw new Error('not taken');
    try {
      writeLock({ pid: 1, host: 'elsewhere', token: 'a-taker' });
      await sleep(200);
      expect(messages.filter((m) => /was taken by another process/.test(m.text))).toHaveLength(1);
    } finally {
      await attempt.lock.release();
    }
    // The other owner's lock stays.
    expect(JSON.parse(readFileSync(join(lockDir(), 'owner.json'), 'utf8')).token).toBe('a-taker');
  });
});
