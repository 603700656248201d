import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { S3MetricExporter } from '../../../src/index.js';
import { LOCK_RETRY_MILLIS, LOCK_STALE_MILLIS, type SpoolOwner } from '../../../src/spool/lock.js';
import { type Child, spawnTs } from '../../support/child.js';
import { captureDiag } from '../../support/diag-capture.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { waitFor } from '../../support/wait.js';

const messages = captureDiag();
const HOLDER = 'test/support/children/spool-holder.ts';

let dir: string;
const children: Child[] = [];
const exporters: S3MetricExporter[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'otel-s3-lock-test-'));
});
afterEach(async () => {
  for (const exporter of exporters.splice(0)) await exporter.shutdown();
  // Our own children, by their process: unshare --kill-child takes a namespace's node with it.
  for (const child of children.splice(0)) child.process.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface HolderLine {
  constructed?: boolean;
  state?: string;
  pid?: number;
  error?: string;
}

/** The holder child (optionally as pid 1 of a pid namespace of its own) on `dir`. */
function holder(ownPidNamespace = false): Child {
  const child = spawnTs(HOLDER, { SPOOL_DIR: dir }, [], { ownPidNamespace });
  children.push(child);
  return child;
}

/** Resolves with the holder's first spool state other than `opening`. */
const settledState = (child: Child) =>
  child.waitForJson<HolderLine>((l) => l.state !== undefined && l.state !== 'opening');

const exporterOn = () => {
  const exporter = new S3MetricExporter({
    bucket: 'unit',
    s3Client: new ScriptedS3().client,
    compression: 'none',
    spoolDir: dir,
  });
  exporters.push(exporter);
  return exporter;
};
const stateOf = (exporter: S3MetricExporter) => exporter.stats().spool?.state;

const lockDir = () => join(dir, 'owner.lock');
const ownerOf = () => JSON.parse(readFileSync(join(lockDir(), 'owner.json'), 'utf8')) as SpoolOwner;
const backdate = (millis: number) => {
  const t = new Date(Date.now() - millis);
  utimesSync(lockDir(), t, t);
};
const sleep = (millis: number) => new Promise((r) => setTimeout(r, millis));

// Each test starts child processes through tsx: slow on a loaded machine, and on Node 20.
describe('the spool lock across processes', { timeout: 60_000 }, () => {
  test('a live owner in another process keeps the directory: this exporter starts, waits, says so once, and adopts the spool when that process exits', async () => {
    const child = holder();
    expect((await settledState(child)).state).toBe('active');
    const { pid, token } = ownerOf();
    const exporter = exporterOn(); // no SpoolLockedError: the exporter runs from memory meanwhile
    await waitFor(() => stateOf(exporter) === 'waiting-for-lock', 5_000, 'waiting');
    // Several tries later the live owner still has its lock.
    await sleep(LOCK_RETRY_MILLIS * 2.5);
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
    expect(performance.now() - killedAt).toBeLessThan(LOCK_RETRY_MILLIS + 2_000);
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
    expect(performance.now() - started).toBeLessThan(LOCK_STALE_MILLIS / 2);
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
    await sleep(LOCK_RETRY_MILLIS * 2.5);
    expect(ownerOf().token).toBe(firstOwner.token);
    // Killed: nothing can prove from another namespace that it is gone, until its lock is stale.
    first.process.kill('SIGKILL');
    await first.exited;
    await sleep(LOCK_RETRY_MILLIS * 1.5);
    expect(ownerOf().token).toBe(firstOwner.token);
    expect(second.lines.map((l) => JSON.parse(l).state).filter(Boolean)).not.toContain('active');
    backdate(LOCK_STALE_MILLIS + 1_000);
    await second.waitForJson<HolderLine>((l) => l.state === 'active', LOCK_RETRY_MILLIS + 5_000);
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
