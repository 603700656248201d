/**
 * Cost of the durable spool: the same stream of batches uploaded into a real S3 server with and
 * without `spoolDir`, alternating rounds, median reported. Needs S3_ENDPOINT, S3_ACCESS_KEY_ID,
 * S3_SECRET_ACCESS_KEY (e.g. from scripts/ceph-rgw.sh).
 *
 *   npx tsx bench/spool-cost.ts [batches=200] [rounds=3]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3MetricExporter } from '../src/index.js';
import { syntheticMetrics } from '../test/support/service.js';
import { exportOnce } from './lib/export-once.js';
import { benchBucket, benchClient, removeBenchBucket, s3Env } from './lib/s3-env.js';
import { median } from './lib/stats.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const s3 =
  s3Env() ??
  (() => {
    console.error('set S3_ENDPOINT, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (a real S3 server)');
    return process.exit(2);
  })();
const batches = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 3);
const client = benchClient(s3);
const bucket = await benchBucket(client, 'spool');

// ~1000 points per export, each export sealed into a batch of its own (one export per batch).
const metrics = Array.from({ length: batches }, (_, i) => syntheticMetrics(1_000, i));

async function run(
  spool: boolean,
  round: number,
): Promise<{ seconds: number; rawBytes: number; storedBytes: number }> {
  const spoolDir = spool ? await mkdtemp(join(tmpdir(), 'otel-s3-bench-spool-')) : undefined;
  const exporter = new S3MetricExporter({
    bucket,
    prefix: `r${round}-${spool ? 'spool' : 'memory'}`,
    endpoint: s3.endpoint,
    region: s3.region,
    credentials: s3.credentials,
    maxBatchBytes: 64 * 1024,
    maxBufferedBytes: 512 * 1024 * 1024,
    flushTimeoutMillis: 120_000,
    ...(spoolDir === undefined ? {} : { spoolDir }),
  });
  const started = performance.now();
  for (const rm of metrics) await exportOnce(exporter, rm);
  await exporter.forceFlush();
  const seconds = (performance.now() - started) / 1000;
  const stats = exporter.stats();
  await exporter.shutdown();
  if (stats.batchesUploaded !== stats.batchesSealed || stats.pointsDropped > 0)
    throw new Error('lost batches');
  // The cost is only measured if every batch really went through the spool.
  if (spoolDir !== undefined && stats.spool?.written !== stats.batchesSealed)
    throw new Error(
      `spool wrote ${stats.spool?.written} of ${stats.batchesSealed} batches: the spool was not exercised`,
    );
  if (spoolDir !== undefined) await rm(spoolDir, { recursive: true, force: true });
  return { seconds, rawBytes: stats.rawBytesUploaded, storedBytes: stats.bytesUploaded };
}

const results = { memory: [] as number[], spool: [] as number[] };
let raw = 0;
let batchCount = 0;
await run(false, -1); // warm-up: JIT, connections, worker
for (let round = 0; round < rounds; round++) {
  for (const spool of round % 2 === 0 ? [false, true] : [true, false]) {
    const r = await run(spool, round);
    results[spool ? 'spool' : 'memory'].push(r.seconds);
    raw = r.rawBytes;
    batchCount = batches;
  }
}
const memory = median(results.memory);
const spooled = median(results.spool);
console.log(`| mode | batches/s | MB/s raw | median of ${rounds} |`);
console.log('| --- | --- | --- | --- |');
console.log(
  `| memory only | ${(batchCount / memory).toFixed(0)} | ${(raw / 1e6 / memory).toFixed(1)} | ${memory.toFixed(2)} s |`,
);
console.log(
  `| spool (write-ahead, fsync) | ${(batchCount / spooled).toFixed(0)} | ${(raw / 1e6 / spooled).toFixed(1)} | ${spooled.toFixed(2)} s |`,
);
console.log(
  `spool throughput = ${((memory / spooled) * 100).toFixed(0)}% of memory-only (${batchCount} batches of ~${(raw / batchCount / 1024).toFixed(0)} KiB raw)`,
);
await removeBenchBucket(client, bucket);
client.destroy();
