import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { S3MetricExporter } from '../../../src/index.js';
import { LOCK_TIMING, type SpoolOwner } from '../../../src/spool/lock.js';
import type { Child } from '../../support/child.js';
import { captureDiag } from '../../support/diag-capture.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { spoolTestDirs } from '../../support/spool-exporter.js';
import { lockDirOf, lockOwnerOf, settledState, spawnHolder } from '../../support/spool-lock.js';
import { sleep, waitFor } from '../../support/wait.js';

vi.mock('../../../src/spool/lock.js', async (original) =>
  (await import('../../support/spool-lock.js')).shortLockRetry(original),
);

// Two or more owners in child processes at once (pid namespaces, a race of takers):
// test/integration/spool-lock-processes.test.ts.
const messages = captureDiag();

let dir: string;
const children: Child[] = [];
afterEach(() => {
  // Our own children, by their process (after the exporters below are shut down).
  for (const child of children.splice(0)) child.process.kill('SIGKILL');
});
const { exporters } = spoolTestDirs('otel-s3-lock-test-', (path) => (dir = path));

/** The holder child (an exporter in another process) on `dir`. */
const holder = () => spawnHolder(dir, children);

const exporterOn = () => {
  const exporter = scriptedExporter(new ScriptedS3(), {
    compression: 'none',
    spoolDir: dir,
  });
  exporters.push(exporter);
  return exporter;
};
const stateOf = (exporter: S3MetricExporter) => exporter.stats().spool?.state;

const lockDir = () => lockDirOf(dir);
const ownerOf = () => lockOwnerOf(dir);

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

  test('a lock held by our own pid (a container restarted as pid 1 in the same namespace) is taken over at once', async () => {
    const owner: SpoolOwner = {
      pid: process.pid,
      host: hostname(),
      bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      pidNamespace: readlinkSync('/proc/self/ns/pid'),
      token: 'an-earlier-incarnation',
      since: new Date().toISOString(),
    };
    mkdirSync(lockDir());
    writeFileSync(join(lockDir(), 'owner.json'), JSON.stringify(owner));
    const exporter = exporterOn();
    await waitFor(() => stateOf(exporter) === 'active', 5_000, 'active');
    expect(ownerOf().token).not.toBe(owner.token);
    await exporter.shutdown();
  });
});

describe('a failed constructor leaves nothing behind', () => {
  test('nothing of the spool outlives a constructor that throws: no lock, no claim in this process', async () => {
    const body = await import('../../../src/body/body-maker.js');
    const spy = vi.spyOn(body, 'createBodyMaker').mockImplementationOnce(() => {
      throw new Error('zstd engine missing (simulated)');
    });
    try {
      expect(() => exporterOn()).toThrow('zstd engine missing (simulated)');
    } finally {
      spy.mockRestore();
    }
    expect(existsSync(lockDir())).toBe(false);
    // A retry in the same process is not refused by its own leftover claim, and takes the lock.
    const exporter = exporterOn();
    await waitFor(() => stateOf(exporter) === 'active', 5_000, 'active');
    await exporter.shutdown();
  });
});
