import { mkdirSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, test, vi } from 'vitest';
import type { SpoolOwner } from '../../../src/spool/lock.js';
import { tryLockSpoolDir } from '../../../src/spool/lock.js';
import { tempDir } from '../../support/temp-dir.js';

/** Runs once, when the taker makes its candidate lock: between its inspection and its takeover. */
const between: { hook: (() => void) | undefined } = { hook: undefined };

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
  };
});

let dir: string;
beforeEach(() => tempDir('otel-s3-lock-race-', (path) => (dir = path)));

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
