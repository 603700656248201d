import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { test } from 'vitest';
import type { ExporterStats } from '../../src/index.js';
import { decodeSpoolFile } from '../../src/spool/file-format.js';
import { spawnTs, spawnWaiting } from '../support/child.js';
import { childConnectionEnv } from '../support/children/connection.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import { prng } from '../support/prng.js';
import { decodeStored, describeS3, listAndFetch, s3Server, withS3 } from '../support/s3.js';
import { expectedItems, SIGNALS, signalSpoolDir, taggedItems } from '../support/signal-driver.js';
import { tempDirs } from '../support/temp-dir.js';

const POINTS = ['create', 'write', 'fsync', 'rename', 'directory'] as const;
const SEED = Number(process.env.KILLPOINT_SEED ?? Date.now() % 1_000_000);

describeS3('spool: SIGKILL at every moment of a write, restart on the same spoolDir', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  const newDir = tempDirs();

  withS3('killpoints', { kind: 'blackhole' }, (s) => ({ client, bucket, proxy } = s));

  const random = prng(SEED);
  // Every kill point once, each at a random write (2nd to 6th), in a random order.
  const plan = POINTS.map((point) => ({
    point,
    at: 2 + Math.floor(random() * 5),
    order: random(),
  })).sort((a, b) => a.order - b.order);

  // The cases share nothing but the black hole and the bucket (each has a spool directory and a
  // prefix of its own), time nothing, and spend most of their time starting child processes and
  // waiting on them: they run at once (vitest's maxConcurrency at a time).
  for (const driver of SIGNALS)
    for (const { point, at } of plan) {
      test.concurrent(`${driver.signal}, killed at ${point} of write ${at} (seed ${SEED}): complete files are replayed once, torn ones quarantined`, async ({
        expect,
        onTestFinished,
      }) => {
        const root = await newDir('otel-s3-killpoint-');
        const dir = signalSpoolDir(root, driver);
        const prefix = `kill/${driver.signal}-${point}-${at}-${Date.now()}`;
        // The replay starts with the writer and waits, its modules loaded, until the kill.
        const waitingReplay = spawnWaiting('test/support/children/spool-replay.ts', {
          ...childConnectionEnv(s3Server?.endpoint, bucket, s3Server),
          SIGNAL: driver.signal,
          S3_PREFIX: prefix,
          SPOOL_DIR: root,
        });
        const writer = spawnTs('test/support/children/spool-killpoint.ts', {
          ...childConnectionEnv(proxy.endpoint, bucket, s3Server),
          SIGNAL: driver.signal,
          S3_PREFIX: prefix,
          SPOOL_DIR: root,
          KILL_POINT: point,
          KILL_AT: String(at),
        });
        onTestFinished(() => {
          if (writer.process.exitCode === null && writer.process.signalCode === null)
            writer.process.kill('SIGKILL');
          waitingReplay.kill();
        });
        const stopped = await writer.waitForJson<{ killpoint?: string; write: number }>(
          (v) => v.killpoint !== undefined,
        );
        expect(stopped).toMatchObject({ killpoint: point, write: at });
        writer.process.kill('SIGKILL');
        expect((await writer.exited).signal).toBe('SIGKILL');

        // What the kill left: whole files in batches/, and in tmp/ complete or torn ones.
        const batches = (await readdir(join(dir, 'batches'))).length;
        let completeTmp = 0;
        let tornTmp = 0;
        for (const name of await readdir(join(dir, 'tmp'))) {
          try {
            decodeSpoolFile(await readFile(join(dir, 'tmp', name)));
            completeTmp++;
          } catch {
            tornTmp++;
          }
        }
        const expected = {
          create: { tmp: [0, 0], batches: at - 1 },
          write: { tmp: [0, 1], batches: at - 1 },
          fsync: { tmp: [1, 0], batches: at - 1 },
          rename: { tmp: [1, 0], batches: at - 1 },
          directory: { tmp: [0, 0], batches: at },
        }[point];
        expect([completeTmp, tornTmp]).toEqual(expected.tmp);
        expect(batches).toBe(expected.batches);

        await waitingReplay.ready;
        const replay = waitingReplay.go();
        const { stats } = await replay.waitForJson<{ done?: boolean; stats: ExporterStats }>(
          (v) => v.done === true,
        );
        expect((await replay.exited).code, replay.stderr()).toBe(0);
        // Batches not yet in a spool file come back from the journal if its group commit (once a
        // second) took them before the kill: each is written to a spool file again or not,
        // depending on timing, and stored.
        const fromJournal = stats.spool?.journalReplayed ?? 0;
        expect(stats.spool?.replayed).toBe(batches + completeTmp + (stats.spool?.written ?? 0));
        expect(stats.spool?.quarantined).toBe(tornTmp);
        expect(await readdir(join(dir, 'quarantine'))).toHaveLength(tornTmp);
        expect(await readdir(join(dir, 'batches'))).toEqual([]);
        expect(await readdir(join(dir, 'tmp'))).toEqual([]);

        const objects = await listAndFetch(client, bucket, `${prefix}/`);
        expect(objects).toHaveLength(batches + completeTmp + fromJournal);
        // Spool files are written one after another (one batch is prepared at a time), oldest
        // batch first, the journal holds the batches after them, and nothing reached S3 before
        // the kill: what the replay stored is exports 1..n, each exactly once and whole.
        const items = objects.flatMap((o) => taggedItems(decodeStored(o)));
        const tags = new Set(items.map((i) => Number(i.split('/')[0])));
        expect(tags.size).toBeGreaterThan(0);
        expect(items.sort()).toEqual(
          expectedItems(
            Array.from({ length: tags.size }, (_, i) => i + 1),
            10,
          ).sort(),
        );
      });
    }
});
