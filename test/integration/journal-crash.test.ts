import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import type { ExporterStats } from '../../src/index.js';
import { spawnWaiting } from '../support/child.js';
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

/** The default group-commit interval: what a crash may lose. */
const SYNC_MILLIS = 1_000;

/** The sequence numbers stored under `prefix`: data points of `collection.seq`, or item names. */
async function stored(
  client: S3Client,
  bucket: string,
  prefix: string,
  signal: string,
): Promise<{ seqs: number[]; keys: string[] }> {
  if (signal === 'metrics') return storedSequence(client, bucket, prefix);
  const objects = await listAndFetch(client, bucket, `${prefix}/`);
  const text = objects.map((o) => JSON.stringify(decodeStored(o))).join('\n');
  const seqs = [...text.matchAll(/seq-(\d+)/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
  return { seqs, keys: objects.map((o) => o.key) };
}

describeS3(
  'journal: kill -9 of an exporter with ten-minute batches, restart on its spoolDir',
  () => {
    let client: S3Client;
    let bucket: string;
    const newDir = tempDirs();
    withS3('journal-crash', (s) => ({ client, bucket } = s));

    const cases = [
      { signal: 'metrics', format: 'otlp-json', sub: '', runMillis: 1_500 },
      { signal: 'metrics', format: 'parquet', sub: '', runMillis: 1_500 },
      // Parquet's defaults, killed 20 s into the run.
      { signal: 'metrics', format: 'parquet', sub: '', runMillis: 20_000 },
      { signal: 'traces', format: 'otlp-json', sub: 'traces', runMillis: 1_500 },
      { signal: 'logs', format: 'otlp-json', sub: 'logs', runMillis: 1_500 },
    ];
    for (const { signal, format, sub, runMillis } of cases) {
      test(`${signal}, ${format}, killed ${runMillis / 1000} s in: every export answered more than the sync interval before the kill is stored exactly once`, {
        timeout: 120_000,
      }, async ({ onTestFinished }) => {
        const dir = await newDir('otel-s3-journal-crash-');
        const prefix = `journal/${signal}-${format}-${Date.now()}`;
        const env = {
          ...childConnectionEnv(s3Server?.endpoint, bucket, s3Server),
          S3_PREFIX: prefix,
          SPOOL_DIR: dir,
          SIGNAL: signal,
          FORMAT: format,
        };
        // The restarting child starts with the writer, and both wait: the writer's run is then
        // timed with the other waiting, doing nothing, and the restart does not wait for a start.
        const waitingWriter = spawnWaiting('test/support/children/journal-writer.ts', env);
        const waitingRestart = spawnWaiting('test/support/children/journal-writer.ts', {
          ...env,
          RESTART: '1',
        });
        onTestFinished(() => {
          waitingWriter.kill();
          waitingRestart.kill();
        });
        await Promise.all([waitingWriter.ready, waitingRestart.ready]);
        const writer = waitingWriter.go();
        const first = await writer.waitForJson<{ acked?: number; at: number }>(
          (v) => v.acked !== undefined,
          30_000,
        );
        // Exports after the first answer, into a batch that would seal after 10 minutes.
        await new Promise((r) => setTimeout(r, first.at + runMillis - Date.now()));
        const killedAt = Date.now();
        writer.process.kill('SIGKILL');
        expect((await writer.exited).signal).toBe('SIGKILL');
        const acked = writer.lines
          .map((l) => JSON.parse(l) as { acked?: number; at: number })
          .filter((v): v is { acked: number; at: number } => v.acked !== undefined);
        expect(acked.length).toBeGreaterThan(20);
        expect((await listAndFetch(client, bucket, `${prefix}/`)).length).toBe(0);
        expect((await readdir(join(dir, sub, 'journal'))).length).toBeGreaterThan(0);

        const restart = waitingRestart.go();
        const { stats } = await restart.waitForJson<{ done?: boolean; stats: ExporterStats }>(
          (v) => v.done === true,
          60_000,
        );
        expect((await restart.exited).code, restart.stderr()).toBe(0);
        expect(stats.spool?.journalReplayed).toBe(1);
        expect(stats.pointsDropped).toBe(0);

        const { seqs, keys } = await stored(client, bucket, prefix, signal);
        // Expected from what the child recorded: each export it saw answered before the last
        // interval (plus a write and an fsync) ended, stored once; nothing stored twice.
        const durable = acked
          .filter((a) => a.at < killedAt - SYNC_MILLIS - 250)
          .map((a) => a.acked);
        expect(new Set(seqs).size, 'no sequence number stored twice').toBe(seqs.length);
        const storedSet = new Set(seqs);
        expect(durable.filter((s) => !storedSet.has(s))).toEqual([]);
        const allAcked = new Set(acked.map((a) => a.acked));
        expect(seqs.filter((s) => !allAcked.has(s) && s > acked.length + 1)).toEqual([]);
        const lost = acked.filter((a) => !storedSet.has(a.acked));
        const window = lost.length === 0 ? 0 : killedAt - Math.min(...lost.map((a) => a.at));
        console.log(
          `[measure] journal kill -9 (${signal}, ${format}, ${runMillis / 1000} s): ${acked.length} exports answered in ` +
            `${killedAt - first.at} ms, ${seqs.length} stored once in ${keys.length} object(s) ` +
            `(${keys.map((k) => k.slice(k.lastIndexOf('.'))).join(' ')}), ${lost.length} lost: ` +
            `the oldest lost was answered ${window} ms before the kill`,
        );
      });
    }
  },
);
