import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterEach, expect, test } from 'vitest';
import type { ExporterStats } from '../../src/index.js';
import type { LockTiming, SpoolOwner } from '../../src/spool/lock.js';
import { type Child, spawnTs } from '../support/child.js';
import { childConnectionEnv } from '../support/children/connection.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import { decodeStored, describeS3, listAndFetch, s3Server, withS3 } from '../support/s3.js';
import {
  expectedItems,
  METRICS,
  SIGNALS,
  type SignalDriver,
  signalSpoolDir,
  taggedItems,
} from '../support/signal-driver.js';
import { tempDirs } from '../support/temp-dir.js';

/**
 * The lock's intervals in these runs (LOCK_TIMING_OPTION), shorter than the real ones
 * (LOCK_TIMING: 2 s, 10 s, 1 s): a lock goes stale in 3 s instead of 10. That an exporter runs on
 * the real ones: test/unit/spool/spool-adoption.test.ts.
 */
const TIMING: LockTiming = { refreshMillis: 500, staleMillis: 3_000, retryMillis: 250 };

/**
 * A service in a container with a spool on a volume: each run is pid 1 of a pid namespace of its
 * own (unshare, as a container runtime does), so no run can check whether another is alive. The
 * old run's uploads go to a black hole (they stay in its spool); the new run's go to the real S3.
 * A run that must begin at a given moment is started ahead (loading takes seconds) and begins at
 * `begin()`.
 */
describeS3('spool: a container restarted on the same spoolDir gets its spool back', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  const newDir = tempDirs();
  const children: Child[] = [];

  withS3('spool-restart', { kind: 'blackhole' }, (s) => ({ client, bucket, proxy } = s));
  afterEach(() => {
    // Our own children, by process: unshare --kill-child takes each namespace's node with it.
    for (const child of children.splice(0)) child.process.kill('SIGKILL');
  });

  interface Line {
    loaded?: boolean;
    constructed?: boolean;
    exported?: boolean;
    durable?: boolean;
    drained?: boolean;
    done?: boolean;
    state?: string;
    stats: ExporterStats;
  }

  /**
   * One run of the service (test/support/children/spool-restart.ts) in a new pid namespace, of
   * metrics or of `driver`'s signal, on TIMING.
   */
  function run(
    dir: string,
    prefix: string,
    endpoint: string | undefined,
    env: Record<string, string>,
    driver: SignalDriver = METRICS,
  ): Child {
    const child = spawnTs(
      'test/support/children/spool-restart.ts',
      {
        ...childConnectionEnv(endpoint, bucket, s3Server),
        SIGNAL: driver.signal,
        S3_PREFIX: prefix,
        SPOOL_DIR: dir,
        LOCK_TIMING: JSON.stringify(TIMING),
        ...env,
      },
      [],
      { ownPidNamespace: true, stdin: true },
    );
    children.push(child);
    return child;
  }

  /** A run started ahead (START: stdin): it begins (makes its exporter) once loaded. */
  async function begin(child: Child): Promise<void> {
    await child.waitForJson<Line>((l) => l.loaded === true, 60_000);
    child.process.stdin?.write('start\n');
  }

  const ownerOf = (dir: string) =>
    JSON.parse(readFileSync(join(dir, 'owner.lock', 'owner.json'), 'utf8')) as SpoolOwner;
  const waitingAlerts = (child: Child) =>
    child.stderr().match(/\[OTEL_S3_SPOOL_WAITING\]/g)?.length ?? 0;

  /** Every item stored under `prefix`, as tag/series, sorted: each must appear once. */
  async function storedPoints(prefix: string): Promise<string[]> {
    const objects = await listAndFetch(client, bucket, `${prefix}/`);
    return objects.flatMap((o) => taggedItems(decodeStored(o))).sort();
  }
  const expectedPoints = (lastTag: number) =>
    expectedItems(
      Array.from({ length: lastTag }, (_, t) => t + 1),
      5,
    ).sort();

  for (const driver of SIGNALS) {
    test(`${driver.signal}: SIGKILLed, then started again at once: the new run stores its first exports while the old lock is fresh, adopts the spool once it is stale, and replays it; every item is stored once`, {
      timeout: 120_000,
    }, async () => {
      const dir = await newDir('otel-s3-restart-');
      const prefix = `restart/crash-${driver.signal}-${Date.now()}`;
      const spoolDir = signalSpoolDir(dir, driver);
      // The restart loads while the first run works: from the crash to its start takes no time.
      const after = run(
        dir,
        prefix,
        s3Server?.endpoint,
        {
          FIRST_TAG: '5',
          LAST_TAG: '7',
          WAIT: 'stored,drained',
          REPLAYED: '4',
          START: 'stdin',
        },
        driver,
      );
      const before = run(
        dir,
        prefix,
        proxy.endpoint,
        {
          FIRST_TAG: '1',
          LAST_TAG: '4',
          WAIT: 'durable',
        },
        driver,
      );
      const durable = await before.waitForJson<Line>((l) => l.durable === true, 60_000);
      expect(durable.stats.spool).toMatchObject({ state: 'active', written: 4 });
      expect(durable.stats.batchesUploaded).toBe(0);
      expect(ownerOf(spoolDir).pid).toBe(1);

      // The container crashes; its restart policy starts it again at once, in a new pid namespace.
      before.process.kill('SIGKILL');
      expect((await before.exited).signal).toBe('SIGKILL');
      await begin(after);
      // No SpoolLockedError: the constructor returns, and exports are stored from memory.
      await after.waitForJson<Line>((l) => l.constructed === true, 60_000);
      const exported = await after.waitForJson<Line>((l) => l.exported === true, 60_000);
      expect(exported.stats.spool).toMatchObject({ state: 'waiting-for-lock', written: 0 });
      expect(exported.stats.batchesUploaded).toBe(3);
      expect(ownerOf(spoolDir).pid).toBe(1);
      const lastRefresh = statSync(join(spoolDir, 'owner.lock')).mtimeMs;

      // The old lock is taken only once stale, at the next try after that.
      await after.waitForJson<Line>((l) => l.state === 'active', 60_000);
      const staleFor = Date.now() - lastRefresh;
      expect(staleFor).toBeGreaterThan(TIMING.staleMillis);
      expect(staleFor).toBeLessThan(TIMING.staleMillis + TIMING.retryMillis + 5_000);
      const drained = await after.waitForJson<Line>((l) => l.drained === true, 60_000);
      expect(drained.stats.spool).toMatchObject({ replayed: 4, quarantined: 0, files: 0 });
      expect(drained.stats.pointsDropped).toBe(0);
      expect((await after.exited).code, after.stderr()).toBe(0);
      expect(waitingAlerts(after)).toBe(1);
      expect(after.stderr()).toMatch(/is locked by pid 1 on .*, which cannot be checked from here/);

      expect(readdirSync(join(spoolDir, 'batches'))).toEqual([]);
      expect(await storedPoints(prefix)).toEqual(expectedPoints(7));
    });
  }

  test('a live holder in another pid namespace keeps its spool: the new run waits past the stale time, and adopts the spool only once the holder has released it', {
    timeout: 120_000,
  }, async () => {
    const dir = await newDir('otel-s3-restart-');
    const prefix = `restart/live-${Date.now()}`;
    const holder = run(dir, prefix, proxy.endpoint, {
      FIRST_TAG: '1',
      LAST_TAG: '3',
      WAIT: 'durable',
      FLUSH_TIMEOUT_MILLIS: '300',
    });
    const other = run(dir, prefix, s3Server?.endpoint, {
      FIRST_TAG: '4',
      LAST_TAG: '5',
      WAIT: 'stored,drained',
      REPLAYED: '3',
      START: 'stdin',
    });
    await holder.waitForJson<Line>((l) => l.durable === true, 60_000);
    const { token } = ownerOf(dir);
    const files = readdirSync(join(dir, 'batches')).sort();
    expect(files).toHaveLength(3);

    await begin(other);
    const exported = await other.waitForJson<Line>((l) => l.exported === true, 60_000);
    expect(exported.stats.spool?.state).toBe('waiting-for-lock');
    expect(exported.stats.batchesUploaded).toBe(2);
    // Longer than a lock takes to go stale: the holder keeps refreshing it, so it is never taken.
    await new Promise((r) => setTimeout(r, TIMING.staleMillis + 2 * TIMING.retryMillis));
    expect(ownerOf(dir).token).toBe(token);
    expect(other.lines.some((l) => l.includes('"state":"active"'))).toBe(false);
    expect(readdirSync(join(dir, 'batches')).sort()).toEqual(files);

    // The holder shuts down: its batches stay on disk, its lock goes; the other adopts them.
    holder.process.stdin?.write('stop\n');
    const done = await holder.waitForJson<Line>((l) => l.done === true, 30_000);
    expect(done.stats.spool?.leftAtShutdown).toBe(3);
    const releasedAt = performance.now();
    await other.waitForJson<Line>((l) => l.state === 'active', 30_000);
    expect(performance.now() - releasedAt).toBeLessThan(TIMING.retryMillis + 3_000);
    const drained = await other.waitForJson<Line>((l) => l.drained === true, 60_000);
    expect(drained.stats.spool).toMatchObject({ replayed: 3, files: 0 });
    expect((await other.exited).code, other.stderr()).toBe(0);
    expect(waitingAlerts(other)).toBe(1);
    expect(await storedPoints(prefix)).toEqual(expectedPoints(5));
  });
});
