import { readdirSync, statSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { LOCK_TIMING } from '../../src/spool/lock.js';
import type { Child } from '../support/child.js';
import {
  backdateLock,
  type HolderLine,
  lockDirOf,
  lockOwnerOf,
  settledState,
  spawnHolder,
} from '../support/spool-lock.js';
import { tempDir } from '../support/temp-dir.js';
import { sleep, waitFor } from '../support/wait.js';

/**
 * Two or more exporters in child processes on one spool directory at once, each through its own
 * lock, on the lock's real intervals (no S3 server needed). An exporter of the test process
 * against one other owner: test/unit/spool/spool-lock.test.ts.
 */
let dir: string;
const children: Child[] = [];
beforeEach(() => tempDir('otel-s3-lock-processes-', (path) => (dir = path)));
afterEach(() => {
  // Our own children, by their process: unshare --kill-child takes a namespace's node with it.
  for (const child of children.splice(0)) child.process.kill('SIGKILL');
});

/** The holder child (optionally as pid 1 of a pid namespace of its own) on `dir`. */
const holder = (ownPidNamespace = false) => spawnHolder(dir, children, ownPidNamespace);
const lockDir = () => lockDirOf(dir);
const ownerOf = () => lockOwnerOf(dir);
const backdate = (millis: number) => backdateLock(dir, millis);

// Each test starts child processes through tsx: slow on a loaded machine, and on Node 20.
describe('the spool lock across processes', { timeout: 60_000 }, () => {
  test('two owners that both are pid 1 on the same host, in separate pid namespaces: the second waits while the first lives, and adopts once its lock is stale', async () => {
    const first = holder(true);
    expect(await settledState(first)).toMatchObject({ state: 'active', pid: 1 });
    const firstOwner = ownerOf();
    // It keeps its lock fresh (asynchronously) while it lives: even an old-looking lock is
    // touched again within the refresh interval.
    backdate(60_000);
    await waitFor(() => Date.now() - statSync(lockDir()).mtimeMs < 5_000, 5_000, 'a refresh');
    const second = holder(true);
    expect(await second.waitForJson<HolderLine>((l) => l.constructed === true)).toMatchObject({
      pid: 1,
    });
    expect((await settledState(second)).state).toBe('waiting-for-lock');
    // Several tries later, the second has not taken it.
    await sleep(LOCK_TIMING.retryMillis * 2.5);
    expect(ownerOf().token).toBe(firstOwner.token);
    // Killed: nothing can prove from another namespace that it is gone, until its lock is stale.
    first.process.kill('SIGKILL');
    await first.exited;
    await sleep(LOCK_TIMING.retryMillis * 1.5);
    expect(ownerOf().token).toBe(firstOwner.token);
    expect(second.lines.map((l) => JSON.parse(l).state).filter(Boolean)).not.toContain('active');
    backdate(LOCK_TIMING.staleMillis + 1_000);
    await second.waitForJson<HolderLine>(
      (l) => l.state === 'active',
      LOCK_TIMING.retryMillis + 5_000,
    );
    expect(ownerOf()).toMatchObject({ pid: 1 });
    expect(ownerOf().token).not.toBe(firstOwner.token);
  });

  test('of many processes taking a free directory at once, exactly one wins; the others wait', async () => {
    const racers = Array.from({ length: 4 }, () => holder());
    const states = await Promise.all(racers.map(async (r) => (await settledState(r)).state));
    expect(states.filter((s) => s === 'active')).toHaveLength(1);
    expect(states.filter((s) => s === 'waiting-for-lock')).toHaveLength(3);
    // The owner is inside the lock from the moment it exists: no half-made lock is ever left.
    expect(readdirSync(dir).filter((n) => n.startsWith('owner.lock'))).toEqual(['owner.lock']);
  });
});
