import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import type { ExporterStats } from '../../src/index.js';
import { decodeSpoolFile } from '../../src/spool/file-format.js';
import { spawnTs, spawnWaiting } from '../support/child.js';
import { childConnectionEnv } from '../support/children/connection.js';
import type { Fault, FaultProxy } from '../support/fault-proxy.js';
import { decodeStored, describeS3, listAndFetch, s3Server, withS3 } from '../support/s3.js';
import { expectedItems, SIGNALS, signalSpoolDir, taggedItems } from '../support/signal-driver.js';
import { tempDirs } from '../support/temp-dir.js';

describeS3('spool: kill -9 in the middle of uploads, restart on the same spoolDir', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  const newDir = tempDirs();

  withS3('spool-crash', { kind: 'pass' }, (s) => ({ client, bucket, proxy } = s));

  const cases: { name: string; fault: Fault }[] = [
    { name: 'S3 black-holed', fault: { kind: 'blackhole' } },
    // The writes land but their answers do not come back before the kill: replays must not duplicate.
    { name: 'S3 slow to answer (writes landed)', fault: { kind: 'delay', millis: 30_000 } },
  ];

  for (const driver of SIGNALS)
    for (const { name, fault } of cases) {
      test(`${driver.signal}, ${name}: every batch sealed before the kill lands exactly once after the restart`, async ({
        onTestFinished,
      }) => {
        const dir = await newDir('otel-s3-spool-crash-');
        const prefix = `crash/${driver.signal}-${fault.kind}-${Date.now()}`;
        const signalEnv = { SIGNAL: driver.signal };
        await proxy.set(fault);
        // The replay starts with the writer and waits, its modules loaded, for its go after the
        // kill: it makes its exporter only then. Through the proxy: it shows what the server
        // answered to each replayed PUT.
        const waitingReplay = spawnWaiting('test/support/children/spool-replay.ts', {
          ...childConnectionEnv(proxy.endpoint, bucket, s3Server),
          ...signalEnv,
          S3_PREFIX: prefix,
          SPOOL_DIR: dir,
        });
        const writer = spawnTs('test/support/children/spool-writer.ts', {
          ...childConnectionEnv(proxy.endpoint, bucket, s3Server),
          ...signalEnv,
          S3_PREFIX: prefix,
          SPOOL_DIR: dir,
          COLLECTIONS: '30',
        });
        onTestFinished(() => {
          if (writer.process.exitCode === null && writer.process.signalCode === null)
            writer.process.kill('SIGKILL');
          waitingReplay.kill();
        });
        const ready = await writer.waitForJson<{
          ready?: boolean;
          collections: number;
          sealed: number;
          attempts: number;
        }>((v) => v.ready === true);
        expect(ready.sealed).toBeGreaterThan(3);
        expect(ready.attempts).toBeGreaterThan(0);
        writer.process.kill('SIGKILL');
        const killed = await writer.exited;
        expect(killed.signal).toBe('SIGKILL');
        const spoolDir = signalSpoolDir(dir, driver);
        const batches = join(spoolDir, 'batches');
        const leftOnDisk = (await readdir(batches)).length;
        expect(leftOnDisk).toBeGreaterThanOrEqual(ready.sealed);
        // The writer went on exporting until the kill, so the kill may have cut a spool write
        // short: a file in tmp/ that is whole (killed between its fsync and its rename; the
        // restart adopts it) or torn (quarantined). Every whole file is a batch to store.
        const whole: { key: string; body: Buffer }[] = [];
        let torn = 0;
        for (const [sub, names] of [
          ['batches', await readdir(batches)],
          ['tmp', await readdir(join(spoolDir, 'tmp'))],
        ] as const) {
          for (const name of names) {
            try {
              const { meta, body } = decodeSpoolFile(await readFile(join(spoolDir, sub, name)));
              whole.push({ key: meta.key, body });
            } catch {
              expect(sub, `${name} is torn`).toBe('tmp');
              torn++;
            }
          }
        }

        // What had landed before the kill (the 'delay' fault forwards writes and holds the answers).
        const landed = new Map(
          (await listAndFetch(client, bucket, `${prefix}/`)).map((o) => [o.key, o.bytes]),
        );
        if (fault.kind === 'delay') expect(landed.size).toBeGreaterThan(0);
        else expect(landed.size).toBe(0);

        await proxy.set({ kind: 'pass' });
        const replayFrom = proxy.attempts.length;
        await waitingReplay.ready;
        const replay = waitingReplay.go();
        const { stats } = await replay.waitForJson<{ done?: boolean; stats: ExporterStats }>(
          (v) => v.done === true,
        );
        expect((await replay.exited).code, replay.stderr()).toBe(0);
        // Replayed: the whole files, and the batches of journal chains that no file names.
        expect(stats.spool?.replayed).toBe(whole.length + (stats.spool?.journalReplayed ?? 0));
        expect(stats.spool?.files).toBe(0);
        expect(stats.spool?.quarantined).toBe(torn);
        expect(await readdir(batches)).toEqual([]);
        expect(await readdir(join(spoolDir, 'tmp'))).toEqual([]);
        // Every object that had landed was replayed with If-None-Match and refused with 412,
        // never written again.
        const replayed = proxy.attempts.slice(replayFrom).filter((p) => p.method === 'PUT');
        for (const [key, bytes] of landed) {
          const puts = replayed.filter((p) => p.key === key);
          expect(
            puts.map((p) => [p.ifNoneMatch, p.outcome]),
            key,
          ).toEqual([['*', 'upstream 412']]);
          const [now] = await listAndFetch(client, bucket, key);
          expect(now?.bytes.equals(bytes), `${key} unchanged`).toBe(true);
        }

        const objects = await listAndFetch(client, bucket, `${prefix}/`);
        // Every batch durable on disk at the kill is stored under its own key, as it was written.
        const stored = new Map(objects.map((o) => [o.key, o.bytes]));
        for (const { key, body } of whole)
          expect(stored.get(key)?.equals(body), `${key} stored as spooled`).toBe(true);
        const items = objects.flatMap((o) => taggedItems(decodeStored(o)));
        // Exports 1..30 were sealed and durable before the kill: each is stored exactly once.
        const firstThirty = items.filter((i) => Number(i.split('/')[0]) <= ready.collections);
        expect(firstThirty.sort()).toEqual(
          expectedItems(
            Array.from({ length: ready.collections }, (_, i) => i + 1),
            10,
          ).sort(),
        );
        // Later exports may or may not have been durable at the kill, but none is stored twice.
        expect(new Set(items).size).toBe(items.length);
        console.log(
          `[measure] kill -9 (${driver.signal}, ${name}): ${ready.sealed} batches sealed before the ready line, ${leftOnDisk} files on disk at the kill, ` +
            `${whole.length - leftOnDisk} whole and ${torn} torn in tmp/, ${stats.spool?.replayed} replayed (${stats.spool?.journalReplayed} from the journal), ` +
            `${objects.length} objects, ${items.length} items stored once each`,
        );
      });
    }
});
