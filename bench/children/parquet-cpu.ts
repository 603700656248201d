/**
 * Child process of bench/parquet.ts: one service exporting through the real S3MetricExporter
 * into an S3 stand-in that answers at once, in one format, batch after batch, and what each kind
 * of thread spent on it (bench/lib/thread-groups.ts). A process of its own, as small as a service's:
 * no other heap's collections are charged to the exporter.
 *
 * A batch is `exportsPerBatch` collections (recorded and collected outside the clock), exported
 * one turn of the event loop apart, then forceFlush(): the batch is sealed, its body made (the
 * worker for Parquet, libuv's pool for OTLP/JSON + zstd) and uploaded. The export phase and the
 * flush phase are clocked apart. Argument: the job as JSON. Prints one JSON line.
 */
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { S3MetricExporter } from '../../src/index.js';
import type { Format } from '../../src/layout/formats.js';
import { exportOnce } from '../lib/export-once.js';
import { realisticSource } from '../lib/realistic-metrics.js';
import { StubS3 } from '../lib/stub-s3.js';
import {
  addThreadCpu,
  type ThreadCpu,
  threadCpuBetween,
  threadSnapshot,
  totalCpu,
} from '../lib/thread-groups.js';

export interface CpuJob {
  format: Format;
  series: number;
  exportsPerBatch: number;
  /** Batches before the clock starts: the code compiled, the worker started, as in a running service. */
  warmBatches: number;
  /** The clocked batches go on until they used this much CPU (all threads) and at least minBatches. */
  minCpuMillis: number;
  minBatches: number;
  seed: number;
}

export interface CpuResult {
  points: number;
  batches: number;
  storedBytes: number;
  /** CPU ms per kind of thread while export() ran, and while forceFlush() sealed, made and uploaded. */
  exporting: ThreadCpu;
  flushing: ThreadCpu;
}

const job = JSON.parse(process.argv[2] as string) as CpuJob;
const stub = new StubS3(0);
const exporter = new S3MetricExporter({
  bucket: 'bench',
  prefix: 'cpu',
  s3Client: stub.client,
  format: job.format,
  compression: 'zstd',
  // Sealed by forceFlush() after every exportsPerBatch exports (what the format's default batch
  // age makes of a 60 s export interval), or earlier at the default 8 MiB maxBatchBytes.
  maxBatchAgeMillis: 2 ** 31 - 1,
  maxBufferedBytes: 256 * 1024 * 1024,
  flushTimeoutMillis: 120_000,
});
const source = realisticSource(job.series, job.seed);

const none: ThreadCpu = { main: 0, worker: 0, pool: 0, other: 0 };
let exporting = none;
let flushing = none;
let batches = 0;
let points = 0;
let storedBytes = 0;
for (let b = 0; ; b++) {
  const measured = b >= job.warmBatches;
  if (
    measured &&
    batches >= job.minBatches &&
    totalCpu(exporting) + totalCpu(flushing) >= job.minCpuMillis
  ) {
    break;
  }
  const collections: ResourceMetrics[] = [];
  for (let i = 0; i < job.exportsPerBatch; i++) {
    source.record();
    collections.push(await source.collect());
  }
  const before = exporter.stats();
  const s0 = threadSnapshot();
  for (const rm of collections) {
    await exportOnce(exporter, rm);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const s1 = threadSnapshot();
  await exporter.forceFlush();
  const s2 = threadSnapshot();
  const after = exporter.stats();
  if (after.pointsDropped > 0 || after.batchesUploaded !== after.batchesSealed) {
    throw new Error(`${job.format}: lost data: ${JSON.stringify(after)}`);
  }
  if (!measured) continue;
  const e = threadCpuBetween(s0, s1);
  const f = threadCpuBetween(s1, s2);
  if (e === undefined || f === undefined) throw new Error('no /proc/self/task: Linux only');
  exporting = addThreadCpu(exporting, e);
  flushing = addThreadCpu(flushing, f);
  batches++;
  points += after.pointsUploaded - before.pointsUploaded;
  storedBytes += after.bytesUploaded - before.bytesUploaded;
}
await exporter.shutdown();
await source.shutdown();
console.log(
  JSON.stringify({
    cpu: { points, batches, storedBytes, exporting, flushing } satisfies CpuResult,
  }),
);
process.exit(0);
