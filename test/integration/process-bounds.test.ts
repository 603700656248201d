import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawnTs } from '../support/child.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { freshBucket, s3Server, testClient } from '../support/s3.js';

const describeS3 = s3Server ? describe : describe.skip;

interface Sample {
  t: number;
  rss: number;
  bufferedBytes: number;
  peakBufferedBytes: number;
  batchesDropped: number;
  pointsDropped: number;
  pointsDroppedByReason: Record<string, number>;
}

describeS3('process-level bounds with S3 black-holed (child processes)', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;

  beforeAll(async () => {
    client = testClient();
    bucket = await freshBucket(client, 'process-bounds');
    proxy = await FaultProxy.start(s3Server?.endpoint ?? '');
    await proxy.set({ kind: 'blackhole' });
  });
  afterAll(async () => {
    await proxy?.close();
    client?.destroy();
  });

  const childEnv = () => ({
    S3_ENDPOINT: proxy.endpoint,
    S3_BUCKET: bucket,
    S3_ACCESS_KEY_ID: s3Server?.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3Server?.secretAccessKey,
  });

  test('meterProvider.shutdown() with no timeout settles within 2 x flushTimeoutMillis + 1 s, then the process exits on its own', async () => {
    const flushTimeoutMillis = 1_500;
    const child = spawnTs('test/support/children/blackhole-shutdown.ts', {
      ...childEnv(),
      FLUSH_TIMEOUT_MILLIS: String(flushTimeoutMillis),
    });
    const report = await child.waitForJson<{
      shutdownMillis?: number;
      stats?: { pointsDroppedByReason: Record<string, number> };
    }>((v) => typeof v.shutdownMillis === 'number');
    const reportedAt = performance.now();
    const exit = await Promise.race([
      child.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 3_000)),
    ]);
    if (exit === 'still running') child.process.kill('SIGKILL');
    console.log(
      `[measure] black hole, flushTimeoutMillis ${flushTimeoutMillis}: meterProvider.shutdown() ${report.shutdownMillis?.toFixed(0)} ms; ` +
        `process exit ${exit === 'still running' ? 'never' : `${(exit.at - reportedAt).toFixed(0)} ms`} after it`,
    );
    expect(report.shutdownMillis).toBeLessThan(2 * flushTimeoutMillis + 1_000);
    expect(exit).not.toBe('still running');
    if (exit !== 'still running') {
      expect(exit.code, child.stderr()).toBe(0);
      expect(exit.at - reportedAt).toBeLessThan(1_000);
    }
    expect(report.stats?.pointsDroppedByReason.shutdown).toBeGreaterThan(0);
  });

  test('a busy service through a long outage (24 s): bytes held never exceed maxBufferedBytes, drops are counted, RSS plateaus', async () => {
    const maxBufferedBytes = 2 * 1024 * 1024;
    const child = spawnTs('test/support/children/busy-outage.ts', {
      ...childEnv(),
      MAX_BUFFERED_BYTES: String(maxBufferedBytes),
      DURATION_MILLIS: '24000',
      SAMPLE_MILLIS: '250',
    });
    const exit = await child.exited;
    expect(exit.code, child.stderr()).toBe(0);
    const samples = child.lines
      .map((line) => JSON.parse(line) as Partial<Sample>)
      .filter((s): s is Sample => typeof s.t === 'number');
    expect(samples.length).toBeGreaterThan(40);
    for (const s of samples) expect(s.bufferedBytes).toBeLessThanOrEqual(maxBufferedBytes);
    const last = samples.at(-1) as Sample;
    expect(last.peakBufferedBytes).toBeLessThanOrEqual(maxBufferedBytes);
    expect(last.peakBufferedBytes).toBeGreaterThan(maxBufferedBytes * 0.75);
    expect(last.batchesDropped).toBeGreaterThan(10);
    expect(last.pointsDroppedByReason['buffer-full']).toBe(last.pointsDropped);

    // Plateau: once the bound is reached, the resident set stops growing. (Node 22's heap keeps
    // growing for ~14 s before it settles, hence the 24 s run.)
    // Compare medians of the middle and last thirds: robust to the dips after a major GC
    // returns memory and to the spikes before one; a leak moves the median up.
    const third = Math.floor(samples.length / 3);
    const median = (part: Sample[]) => {
      const sorted = part.map((s) => s.rss).sort((x, y) => x - y);
      return sorted[Math.floor(sorted.length / 2)] as number;
    };
    const middle = median(samples.slice(third, 2 * third));
    const end = median(samples.slice(2 * third));
    console.log(
      `[measure] 24 s outage, maxBufferedBytes 2 MiB: peak held ${last.peakBufferedBytes} B, ${last.batchesDropped} batches / ` +
        `${last.pointsDropped} points dropped; median RSS middle third ${(middle / 1e6).toFixed(0)} MB, last third ` +
        `${(end / 1e6).toFixed(0)} MB, max ${(Math.max(...samples.map((s) => s.rss)) / 1e6).toFixed(0)} MB`,
    );
    expect(end).toBeLessThan(middle + 24 * 1024 * 1024);
  });
});
