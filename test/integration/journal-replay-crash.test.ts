import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import type { ExporterStats } from '../../src/index.js';
import { type Child, spawnTs } from '../support/child.js';
import { childConnectionEnv } from '../support/children/connection.js';
import {
  decodeStored,
  describeS3,
  listAndFetch,
  s3Server,
  storedSequence,
  withS3,
} from '../support/s3.js';
import { tempDirs } from '../support/temp-dir.js';

/** The default group-commit interval, plus a write and an fsync on a busy machine: what a crash may lose. */
const LOSS_MILLIS = 1_000 + 250;
/** How long each run exports before its kill. */
const RUN_MILLIS = 2_500;
/** Sequence numbers of the second run start here. */
const SECOND = 1_000_000;

interface Ack {
  acked: number;
  at: number;
}

/** The sequence numbers stored under `prefix`: data points of `collection.seq`, or item names. */
async function stored(
  client: S3Client,
  bucket: string,
  prefix: string,
  signal: string,
): Promise<{ seqs: number[]; keys: string[] }> {
  if (signal === 'metrics') return storedSequence(client, bucket, prefix);
  const objects = await listAndFetch(client, bucket, `${prefix}/`);
  const message = signal === 'traces' ? 'ExportTraceServiceRequest' : 'ExportLogsServiceRequest';
  const text = objects.map((o) => JSON.stringify(decodeStored(o, message))).join('\n');
  const seqs = [...text.matchAll(/seq-(\d+)/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
  return { seqs, keys: objects.map((o) => o.key) };
}

const acks = (child: Child): Ack[] =>
  child.lines
    .map((l) => JSON.parse(l) as Partial<Ack>)
    .filter((v): v is Ack => v.acked !== undefined);

/**
 * Two crashes in a row: a run with a ten-minute open batch is killed; the next run, exporting too,
 * is killed while it replays the first run's chain, at a chosen point; a third run replays both.
 */
describeS3('journal: kill -9 during the replay of an earlier kill -9, restart again', () => {
  let client: S3Client;
  let bucket: string;
  const newDir = tempDirs();
  withS3('journal-replay-crash', (s) => ({ client, bucket } = s));

  const cases = [
    // The replayed batch's seal is in its chain; its spool file not begun.
    {
      point: 'spool-create',
      signal: 'traces',
      format: 'otlp-json',
      sub: 'traces',
      chains: 2,
      uploaded: 0,
    },
    // Its spool file whole in tmp/, not renamed: the next run adopts it, and forgets the chain.
    {
      point: 'spool-rename',
      signal: 'metrics',
      format: 'parquet',
      sub: '',
      chains: 1,
      uploaded: 0,
    },
    // Its spool file durable, its chain half deleted (the records gone, the seal not), and its
    // upload, which goes on meanwhile, landed: the next run's is refused with 412.
    {
      point: 'chain-unlink',
      signal: 'logs',
      format: 'otlp-proto',
      sub: 'logs',
      chains: 1,
      uploaded: 1,
      // The replay waits until this run's exports are journaled; the kill comes once the replayed
      // batch is stored (the deletion that never returns holds the group commits meanwhile).
      extra: { REPLAY_DELAY_MILLIS: String(RUN_MILLIS) },
    },
  ];
  for (const { point, signal, format, sub, chains, uploaded, extra } of cases) {
    test(`${signal}, ${format}, the second run killed at ${point} of its replay: every export answered more than the sync interval before its run's kill is stored exactly once`, {
      timeout: 90_000,
    }, async () => {
      const dir = await newDir('otel-s3-journal-replay-crash-');
      const prefix = `journal-replay/${signal}-${format}-${point}-${Date.now()}`;
      const env = {
        ...childConnectionEnv(s3Server?.endpoint, bucket, s3Server),
        S3_PREFIX: prefix,
        SPOOL_DIR: dir,
        SIGNAL: signal,
        FORMAT: format,
      };
      /**
       * Runs a writer until `ready` resolves and it has exported RUN_MILLIS since its first
       * answer, or, `atOnce`, until `ready` resolves.
       */
      async function runAndKill(
        childEnv: Record<string, string>,
        ready: (child: Child) => Promise<unknown> = async () => {},
        atOnce = false,
      ): Promise<{ acked: Ack[]; killedAt: number }> {
        const child = spawnTs('test/support/children/journal-writer.ts', { ...env, ...childEnv });
        const first = await child.waitForJson<Partial<Ack>>((v) => v.acked !== undefined, 30_000);
        await ready(child);
        if (!atOnce)
          await child.waitForJson<Partial<Ack>>(
            (v) => v.at !== undefined && v.at >= (first.at ?? 0) + RUN_MILLIS,
            30_000,
          );
        const killedAt = Date.now();
        child.process.kill('SIGKILL');
        expect((await child.exited).signal).toBe('SIGKILL');
        return { acked: acks(child), killedAt };
      }

      const one = await runAndKill({});
      expect(one.acked.length).toBeGreaterThan(20);
      expect((await listAndFetch(client, bucket, `${prefix}/`)).length).toBe(0);

      let stopped: { killpoint?: string; path: string; at: number } | undefined;
      const two = await runAndKill(
        { SEQ_BASE: String(SECOND), KILL_POINT: point, ...extra },
        async (c) => {
          stopped = await c.waitForJson<{ killpoint?: string; path: string; at: number }>(
            (v) => v.killpoint !== undefined,
            30_000,
          );
          const deadline = Date.now() + 10_000;
          while (
            (await listAndFetch(client, bucket, `${prefix}/`)).length < uploaded &&
            Date.now() < deadline
          )
            await new Promise((r) => setTimeout(r, 20));
        },
        extra !== undefined,
      );
      expect(stopped?.killpoint).toBe(point);
      expect(two.acked.length).toBeGreaterThan(20);
      // What the second run stored: the batch it replayed, or nothing.
      expect((await listAndFetch(client, bucket, `${prefix}/`)).length).toBe(uploaded);
      // A deletion that never returns holds the group commits behind it: the second run's
      // exports count from the kill point on as if killed there.
      if (extra !== undefined) two.killedAt = Math.min(two.killedAt, stopped?.at ?? 0);

      const restart = spawnTs('test/support/children/journal-writer.ts', {
        ...env,
        RESTART: '1',
      });
      const { stats } = await restart.waitForJson<{ done?: boolean; stats: ExporterStats }>(
        (v) => v.done === true,
        60_000,
      );
      expect((await restart.exited).code, restart.stderr()).toBe(0);
      expect(stats.pointsDropped).toBe(0);
      expect(stats.spool?.quarantined).toBe(0);
      expect(stats.spool?.journalDamaged).toBe(0);
      expect(stats.spool?.journalReplayed).toBe(chains);
      expect(stats.spool?.replayed).toBe(2);
      const spool = join(dir, sub);
      expect(await readdir(join(spool, 'journal'))).toEqual([]);
      expect(await readdir(join(spool, 'batches'))).toEqual([]);
      expect(await readdir(join(spool, 'tmp'))).toEqual([]);

      const { seqs, keys } = await stored(client, bucket, prefix, signal);
      expect(keys).toHaveLength(2);
      expect(new Set(seqs).size, 'no sequence number stored twice').toBe(seqs.length);
      const storedSet = new Set(seqs);
      for (const [run, { acked, killedAt }] of [one, two].entries()) {
        // Expected from what the child recorded: each export answered before its run's last
        // interval (plus a write and an fsync) is stored.
        const durable = acked.filter((a) => a.at < killedAt - LOSS_MILLIS).map((a) => a.acked);
        expect(durable.length, `run ${run + 1}`).toBeGreaterThan(5);
        expect(
          durable.filter((s) => !storedSet.has(s)),
          `run ${run + 1}: durable exports missing`,
        ).toEqual([]);
      }
      // Nothing stored that was not exported: only an export in flight at a kill was unanswered.
      const exported = new Set([...one.acked, ...two.acked].map((a) => a.acked));
      exported.add(one.acked.length + 1);
      exported.add(SECOND + two.acked.length + 1);
      expect(seqs.filter((s) => !exported.has(s))).toEqual([]);
      const lost = [...one.acked, ...two.acked].filter((a) => !storedSet.has(a.acked));
      console.log(
        `[measure] journal kill -9 during a replay (${signal}, ${format}, at ${point}, ${uploaded} stored before the last kill): ` +
          `${one.acked.length} + ${two.acked.length} exports answered, ${seqs.length} stored once in ` +
          `${keys.length} objects (${keys.map((k) => k.slice(k.lastIndexOf('.'))).join(' ')}), ${lost.length} lost`,
      );
    });
  }
});
