/**
 * Memory during a black-holed outage: a busy service exports ~1 MiB every 100 ms while every
 * PutObject hangs (FaultProxy black hole in front of the real S3 server, or a local TCP black
 * hole). RSS is sampled throughout; the bound is the RSS of this same process before the
 * exporter started, plus maxBufferedBytes, plus 64 MB. Compression none: held bytes are then
 * raw, so the buffer really fills up and the drop-oldest bound is exercised (with zstd the same
 * traffic would need ~20× longer to fill it).
 */
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { S3MetricExporter } from '../src/index.js';
import { startBlackhole } from './lib/blackhole.js';
import { fmtMiB, fmtMs, MiB } from './lib/format.js';
import { sleep } from './lib/loop-delay.js';
import { MEMORY_FIELDS, type MemorySample, memoryAfterGc, memoryNow } from './lib/memory.js';
import { realisticSource } from './lib/realistic-metrics.js';
import { emitResult, parseArgs, progress, type Table, type Target } from './lib/result.js';

const args = parseArgs(process.argv.slice(2));
const MAX_BUFFERED_BYTES = 32 * MiB;
const HEADROOM = 64 * 1e6; // "64 MB"
const DURATION_MILLIS = args.quick ? 6_000 : 15_000;
const EXPORT_EVERY_MILLIS = 100;

const source = realisticSource(1_700, 5);
const collections: ResourceMetrics[] = [];
for (let i = 0; i < 8; i++) {
  source.record();
  collections.push(await source.collect());
}
await source.shutdown();
const blackhole = await startBlackhole();
const credentials = {
  accessKeyId: process.env.S3_ACCESS_KEY_ID ?? 'BENCHACCESSKEY000000',
  secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? 'benchsecretkey00000000000000000000000000',
};

const baseline = await memoryAfterGc();
const exporter = new S3MetricExporter({
  bucket: 'bench-outage',
  prefix: 'outage',
  endpoint: blackhole.endpoint,
  credentials,
  compression: 'none',
  maxBufferedBytes: MAX_BUFFERED_BYTES,
  maxBatchBytes: 2 * MiB,
  requestTimeoutMillis: 2_000,
  flushTimeoutMillis: 500,
  retry: { initialDelayMillis: 100, maxDelayMillis: 1_000 },
});
progress(`outage: exporting into ${blackhole.description} for ${DURATION_MILLIS / 1000} s`);
const samples: (MemorySample & { t: number; bufferedBytes: number })[] = [];
const started = performance.now();
let i = 0;
const traffic = setInterval(() => {
  exporter.export(collections[i++ % collections.length] as ResourceMetrics, () => undefined);
}, EXPORT_EVERY_MILLIS);
const sampler = setInterval(() => {
  samples.push({
    t: performance.now() - started,
    ...memoryNow(),
    bufferedBytes: exporter.stats().bufferedBytes,
  });
}, 100);
await sleep(DURATION_MILLIS);
clearInterval(traffic);
clearInterval(sampler);
const stats = exporter.stats();
const settled = await memoryAfterGc();
const shutdownStarted = performance.now();
await exporter.shutdown();
const shutdownMillis = performance.now() - shutdownStarted;
await blackhole.close();

const peak = (f: keyof MemorySample) => Math.max(...samples.map((s) => s[f]));
const bound = baseline.rss + MAX_BUFFERED_BYTES + HEADROOM;
const peakRss = peak('rss');
const table: Table = {
  columns: [
    'figure',
    'before the exporter (after GC)',
    'peak during the outage',
    'after GC at the end',
  ],
  rows: MEMORY_FIELDS.map((f) => [f, fmtMiB(baseline[f]), fmtMiB(peak(f)), fmtMiB(settled[f])]),
};
const targets: Target[] = [
  {
    name: 'RSS during a black-holed outage',
    measured: `peak ${fmtMiB(peakRss)} = baseline + ${fmtMiB(peakRss - baseline.rss)} (peak buffered ${fmtMiB(stats.peakBufferedBytes)})`,
    threshold: `≤ baseline + maxBufferedBytes (${fmtMiB(MAX_BUFFERED_BYTES)}) + 64 MB = ${fmtMiB(bound)}`,
    pass: peakRss <= bound,
  },
];
emitResult({
  suite: 'outage',
  title: 'Memory during a black-holed outage',
  tables: [table],
  targets,
  notes: [
    `${blackhole.description}; ${i} exports of ~1 MiB every ${EXPORT_EVERY_MILLIS} ms for ${DURATION_MILLIS / 1000} s; maxBufferedBytes ${fmtMiB(MAX_BUFFERED_BYTES)}, maxBatchBytes 2 MiB, compression none, requestTimeoutMillis 2000, retries 100–1000 ms; ${stats.uploadAttempts} PutObject attempts, ${stats.batchesDropped} batches (${stats.pointsDropped} points) dropped to stay in bound, ${stats.exportsRejected} exports rejected; shutdown() took ${fmtMs(shutdownMillis)}.`,
  ],
  data: { baseline, settled, samples, stats, bound, maxBufferedBytes: MAX_BUFFERED_BYTES },
});
