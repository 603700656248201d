/**
 * Memory across batch cycles: export → seal → compress (zstd worker) → upload, 1000 times, to
 * the real S3 server when S3_ENDPOINT is set, else to a fast stub. Batches alternate between
 * about 64 KiB and 16 MiB raw, so a buffer that stays sized to the largest payload ever seen
 * would show: RSS, heapUsed, external and arrayBuffers after a full GC, after 100 cycles (all
 * after a small batch) and after 1000, must not grow between the two.
 */
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { S3MetricExporter } from '../src/index.js';
import { exportOnce } from './lib/export-once.js';
import { fmtMiB } from './lib/format.js';
import { MEMORY_FIELDS, type MemorySample, memoryAfterGc } from './lib/memory.js';
import { realisticSource } from './lib/realistic-metrics.js';
import { emitResult, parseArgs, progress, type Table, type Target } from './lib/result.js';
import { benchBucket, benchClient, removeBenchBucket, s3Env } from './lib/s3-env.js';
import { StubS3 } from './lib/stub-s3.js';

const args = parseArgs(process.argv.slice(2));
const FIRST = 100;
const LAST = args.quick ? 400 : 1_000;
/** Series of the small and the large collections: about 64 KiB and 16 MiB of OTLP JSON. */
const SMALL_SERIES = 100;
const LARGE_SERIES = 26_500;
const DISTINCT = 5;
/** Growth below this is allocator noise, whatever the percentage says. */
const NOISE_BYTES = 1024 * 1024;

async function collectionsOf(series: number, seed: number): Promise<ResourceMetrics[]> {
  const source = realisticSource(series, seed);
  const out: ResourceMetrics[] = [];
  for (let i = 0; i < DISTINCT; i++) {
    source.record();
    out.push(await source.collect());
  }
  await source.shutdown();
  return out;
}
const small = await collectionsOf(SMALL_SERIES, 11);
const large = await collectionsOf(LARGE_SERIES, 12);

const s3 = s3Env();
const stub = new StubS3(1);
const setup = s3 === undefined ? undefined : benchClient(s3);
const bucket = setup === undefined ? undefined : await benchBucket(setup, 'memory');
const exporter = new S3MetricExporter({
  prefix: 'memory-cycles',
  compression: 'zstd',
  // Each collection is one batch, the large ones too.
  maxBatchBytes: 32 * 1024 * 1024,
  ...(s3 === undefined || bucket === undefined
    ? { bucket: 'bench', s3Client: stub.client }
    : {
        bucket,
        endpoint: s3.endpoint,
        region: s3.region,
        credentials: s3.credentials,
      }),
});

const samples: { cycle: number; memory: MemorySample }[] = [];
const sizes = { small: 0, large: 0 };
const before = await memoryAfterGc();
for (let cycle = 1; cycle <= LAST; cycle++) {
  // Odd cycles large, even ones small: every sample (each 100th cycle) follows a small batch.
  const kind = cycle % 2 === 1 ? 'large' : 'small';
  const rm = (kind === 'large' ? large : small)[cycle % DISTINCT] as ResourceMetrics;
  const raw = exporter.stats().rawBytesUploaded;
  await exportOnce(exporter, rm);
  await exporter.forceFlush(); // seal → compress → upload, awaited
  sizes[kind] = exporter.stats().rawBytesUploaded - raw;
  if (cycle % 100 === 0) {
    samples.push({ cycle, memory: await memoryAfterGc() });
    progress(`memory: ${cycle}/${LAST} cycles`);
  }
}
const stats = exporter.stats();
await exporter.shutdown();
const afterShutdown = await memoryAfterGc();
if (setup !== undefined && bucket !== undefined) {
  await removeBenchBucket(setup, bucket); // after the last measurement
  setup.destroy();
}
if (stats.batchesUploaded !== LAST || stats.pointsDropped > 0) {
  throw new Error(`expected ${LAST} uploads without drops: ${JSON.stringify(stats)}`);
}

const at = (cycle: number) => samples.find((s) => s.cycle === cycle)?.memory as MemorySample;
const first = at(FIRST);
const last = at(LAST);
const grew = (field: (typeof MEMORY_FIELDS)[number]) => last[field] - first[field];
// A leak is growth; a figure that fell (a late GC of the worker's garbage) is no failure.
const within = (field: (typeof MEMORY_FIELDS)[number]) =>
  grew(field) <= Math.max(0.1 * first[field], NOISE_BYTES);
const table: Table = {
  columns: [
    'after GC',
    'before the exporter',
    `after ${FIRST} cycles`,
    `after ${LAST} cycles`,
    'change',
    'grew ≤ 10% (or 1 MiB)',
    'after shutdown()',
  ],
  rows: MEMORY_FIELDS.map((f) => [
    f,
    fmtMiB(before[f]),
    fmtMiB(first[f]),
    fmtMiB(last[f]),
    `${grew(f) >= 0 ? '+' : ''}${fmtMiB(grew(f))} (${((grew(f) / first[f]) * 100).toFixed(1)}%)`,
    within(f) ? 'yes' : 'NO',
    fmtMiB(afterShutdown[f]),
  ]),
};
const targets: Target[] = [
  {
    name: `memory after ${LAST} batch cycles vs after ${FIRST}`,
    measured: MEMORY_FIELDS.map(
      (f) => `${f} ${grew(f) >= 0 ? '+' : ''}${((grew(f) / first[f]) * 100).toFixed(1)}%`,
    ).join(', '),
    threshold: 'none grows > 10% (or > 1 MiB)',
    pass: MEMORY_FIELDS.every(within),
  },
];
emitResult({
  suite: 'memory',
  title: `Memory across ${LAST} batch cycles (export → seal → compress → upload)`,
  tables: [table],
  targets,
  notes: [
    `${s3 === undefined ? 'fast stub S3 (answers after 1 ms)' : `real S3 ${s3.endpoint}`}; each cycle exports one collection and awaits forceFlush(), alternating a large one (${LARGE_SERIES} series, ${fmtMiB(sizes.large)} raw) and a small one (${SMALL_SERIES} series, ${fmtMiB(sizes.small)} raw); zstd; samples after gc() (--expose-gc) every 100 cycles, each after a small batch, are in latest.json. \`after shutdown()\`: once the zstd worker is terminated.`,
  ],
  data: { before, samples, afterShutdown, stats, sizes },
});
