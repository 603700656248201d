import { existsSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { LOCK_TIMING } from '../../src/spool/lock.js';
import type { Child } from '../support/child.js';
import { captureDiag } from '../support/diag-capture.js';
import { spoolStateOf, spoolTestDirs } from '../support/spool-exporter.js';
import {
  backdateLock,
  type HolderLine,
  lockDirOf,
  lockOwnerOf,
  settledState,
  spawnHolder,
} from '../support/spool-lock.js';
import { sleep, waitFor } from '../support/wait.js';

// This process's exporters try a held directory every 50 ms; the children's run on the lock's
// real intervals (they do not load this mock).
vi.mock('../../src/spool/lock.js', async (original) =>
  (await import('../support/spool-lock.js')).shortLockRetry(original),
);

/**
 * Exporters in child processes (test/support/children/spool-holder.ts) on one spool directory:
 * against an exporter of the test process, or against each other (no S3 server needed). An
 * earlier incarnation's lock, without a child: test/unit/spool/spool-lock.test.ts.
 */
const messages = captureDiag();

let dir: string;
const children: Child[] = [];
afterEach(() => {
  // Our own children, by their process: unshare --kill-child takes a namespace's node with it.
  for (const child of children.splice(0)) child.process.kill('SIGKILL');
});
const { exporterOn } = spoolTestDirs('otel-s3-lock-processes-', (path) => (dir = path));

/** The holder child (optionally as pid 1 of a pid namespace of its own) on `dir`. */
const holder = (ownPidNamespace = false) => spawnHolder(dir, children, ownPidNamespace);
const stateOf = spoolStateOf;
const lockDir = () => lockDirOf(dir);
const ownerOf = () => lockOwnerOf(dir);
const backdate = (millis: number) => backdateLock(dir, millis);

// Each test starts child processes through tsx: slow on a loaded machine, and on Node 20.
describe('the spool lock across processes', { timeout: 60_000 }, () => {
  test('a live owner in another process keeps the directory: this exporter starts, waits, says so once, and adopts the spool when that process exits', async () => {
    const child = holder();
    expect((await settledState(child)).state).toBe('active');
    const { pid, token } = ownerOf();
    const exporter = exporterOn(); // no SpoolLockedError: the exporter runs from memory meanwhile
    await waitFor(() => stateOf(exporter) === 'waiting-for-lock', 5_000, 'waiting');
    // Several tries later the live owner still has its lock.
    await sleep(LOCK_TIMING.retryMillis * 2.5);
    expect(stateOf(exporter)).toBe('waiting-for-lock');
    expect(ownerOf().token).toBe(token);
    const reports = messages.filter((m) => /is in use by pid \d+/.test(m.text));
    expect(reports).toHaveLength(1);
    expect(reports[0]?.level).toBe('error');
    expect(reports[0]?.text).toContain(`in use by pid ${pid} on ${hostname()}, a running process`);
    // It exits (killed): provably gone, so its lock is taken at the next try, not 10 s later.
    child.process.kill('SIGKILL');
    await child.exited;
    const killedAt = performance.now();
    await waitFor(() => stateOf(exporter) === 'active', 5_000, 'adopted');
    expect(performance.now() - killedAt).toBeLessThan(LOCK_TIMING.retryMillis + 2_000);
    expect(ownerOf().pid).toBe(process.pid);
    expect(
      messages.some((m) => /taking over the lock of pid \d+ .*which is gone/.test(m.text)),
    ).toBe(true);
    await exporter.shutdown();
    expect(existsSync(lockDir())).toBe(false);
  });

  test("a dead owner's lock (same machine and pid namespace) is taken over at once", async () => {
    const child = holder();
    expect((await settledState(child)).state).toBe('active');
    child.process.kill('SIGKILL');
    await child.exited;
    const started = performance.now();
    const exporter = exporterOn();
    await waitFor(() => stateOf(exporter) === 'active', 5_000, 'active');
    // Far sooner than the lock could have gone stale.
    expect(performance.now() - started).toBeLessThan(LOCK_TIMING.staleMillis / 2);
    expect(ownerOf().pid).toBe(process.pid);
    await exporter.shutdown();
    expect(existsSync(lockDir())).toBe(false);
  });

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
    // A first try that outlives the disk deadline on a loaded machine says 'unavailable' and
    // tries again: each racer's state once it has an answer about the lock.
    const decided = await Promise.all(
      racers.map((r) =>
        r.waitForJson<HolderLine>((l) => l.state === 'active' || l.state === 'waiting-for-lock'),
      ),
    );
    expect(decided.map((l) => l.state).sort()).toEqual([
      'active',
      'waiting-for-lock',
      'waiting-for-lock',
      'waiting-for-lock',
    ]);
    // The owner is inside the lock from the moment it exists: no half-made lock is ever left.
    expect(readdirSync(dir).filter((n) => n.startsWith('owner.lock'))).toEqual(['owner.lock']);
  });
});
