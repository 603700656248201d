/**
 * Cost of the open batch's journal: the same exports into an exporter with a spool, with the
 * journal (journalSyncMillis 1000, the default) and without it (0), interleaved round by round,
 * for OTLP/JSON + zstd (the default) and Parquet. Measured per contender: export() latency (call
 * to callback), CPU per data point of the main thread and of the whole process (the journal's
 * writes and fsyncs run on libuv's pool), and event-loop delay. Ten-minute batches, a stub S3
 * that answers at once: the figures are the exporter's, not the network's.
 *
 *   npx tsx bench/journal-cost.ts [--quick]
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { S3MetricExporter } from '../src/index.js';
import { fmtMs } from './lib/format.js';
import { startDelayProbe } from './lib/loop-delay.js';
import { realisticSource } from './lib/realistic-metrics.js';
import { emitResult, parseArgs, progress, type Table, type Target } from './lib/result.js';
import { collectGarbage, median, quantile } from './lib/stats.js';
import { StubS3 } from './lib/stub-s3.js';

const args = parseArgs(process.argv.slice(2));
const ROUNDS = args.quick ? 3 : 7;
const EXPORTS = args.quick ? 150 : 300;
const SERIES = 500;
const FORMATS = ['otlp-json', 'parquet'] as const;
type Format = (typeof FORMATS)[number];

/** Main-thread CPU (ns) from /proc: the thread whose id is the process's. */
function mainThreadCpuNs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'latin1').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

const processCpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

interface Run {
  latencies: number[];
  mainNsPerPoint: number;
  processNsPerPoint: number;
  loopP99: number;
  loopMax: number;
  syncs: number;
}

async function run(format: Format, journal: boolean, collections: ResourceMetrics[]): Promise<Run> {
  const spoolDir = await mkdtemp(join(tmpdir(), 'otel-s3-bench-journal-'));
  const exporter = new S3MetricExporter({
    bucket: 'bench',
    s3Client: new StubS3().client,
    format,
    spoolDir,
    maxBatchAgeMillis: 600_000,
    maxBufferedBytes: 512 * 1024 * 1024,
    journalSyncMillis: journal ? 1_000 : 0,
  });
  while (exporter.stats().spool?.state !== 'active') await new Promise((r) => setTimeout(r, 5));
  const exportOne = (rm: ResourceMetrics) =>
    new Promise<number>((resolve, reject) => {
      const started = performance.now();
      exporter.export(rm, (result) =>
        result.code === 0 ? resolve(performance.now() - started) : reject(result.error),
      );
    });
  // Warm-up: the code paths, the column builders, the first chain.
  for (let i = 0; i < 20; i++)
    await exportOne(collections[i % collections.length] as ResourceMetrics);
  await collectGarbage();
  const latencies: number[] = [];
  let points = 0;
  const probe = startDelayProbe();
  const main0 = mainThreadCpuNs();
  const proc0 = processCpuNs();
  for (let i = 0; i < EXPORTS; i++) {
    const rm = collections[i % collections.length] as ResourceMetrics;
    latencies.push(await exportOne(rm));
    points += SERIES;
    // A reader exports on a timer: the loop turns between exports (group commits run there).
    await new Promise((r) => setTimeout(r, 5));
  }
  const main = mainThreadCpuNs() - main0;
  const proc = processCpuNs() - proc0;
  const delay = probe.stop();
  const syncs = exporter.stats().spool?.journalSyncs ?? 0;
  await exporter.shutdown();
  await rm(spoolDir, { recursive: true, force: true });
  return {
    latencies,
    mainNsPerPoint: main / points,
    processNsPerPoint: proc / points,
    loopP99: delay.p99Millis,
    loopMax: delay.maxMillis,
    syncs,
  };
}

const source = realisticSource(SERIES);
const collections: ResourceMetrics[] = [];
for (let i = 0; i < 10; i++) {
  source.record();
  collections.push(await source.collect());
}

const results = new Map<string, Run[]>();
const keyOf = (format: Format, journal: boolean) => `${format} ${journal ? 'journal' : 'none'}`;
for (let round = 0; round < ROUNDS; round++) {
  for (const format of FORMATS) {
    // Alternate which goes first, so drift on a shared machine hits both alike.
    const order = round % 2 === 0 ? [false, true] : [true, false];
    for (const journal of order) {
      const r = await run(format, journal, collections);
      const key = keyOf(format, journal);
      results.set(key, [...(results.get(key) ?? []), r]);
      progress(
        `round ${round + 1}/${ROUNDS} ${key}: export p50 ${fmtMs(median(r.latencies))}, ` +
          `process ${r.processNsPerPoint.toFixed(0)} ns/point, main ${r.mainNsPerPoint.toFixed(0)} ns/point, ${r.syncs} fsyncs`,
      );
    }
  }
}

const med = (runs: Run[], f: (r: Run) => number) => median(runs.map(f));
const table: Table = {
  columns: [
    'format',
    'journal',
    'export() p50',
    'export() p99',
    'main thread ns/point',
    'process ns/point',
    'loop delay p99',
    'loop delay max',
    'group fsyncs/run',
  ],
  rows: [],
};
const targets: Target[] = [];
const data: Record<string, unknown> = {};
for (const format of FORMATS) {
  const none = results.get(keyOf(format, false)) ?? [];
  const journal = results.get(keyOf(format, true)) ?? [];
  for (const [label, runs] of [
    ['off', none],
    ['on', journal],
  ] as const) {
    table.rows.push([
      format,
      label,
      fmtMs(med(runs, (r) => median(r.latencies))),
      fmtMs(med(runs, (r) => quantile(r.latencies, 0.99))),
      med(runs, (r) => r.mainNsPerPoint).toFixed(0),
      med(runs, (r) => r.processNsPerPoint).toFixed(0),
      fmtMs(med(runs, (r) => r.loopP99)),
      fmtMs(med(runs, (r) => r.loopMax)),
      med(runs, (r) => r.syncs).toFixed(0),
    ]);
  }
  const ratio = (f: (r: Run) => number) => med(journal, f) / med(none, f);
  const cpu = ratio((r) => r.processNsPerPoint);
  const mainCpu = ratio((r) => r.mainNsPerPoint);
  const p50 = ratio((r) => median(r.latencies));
  targets.push({
    name: `${format}: process CPU per point, journal on / off`,
    measured: `${cpu.toFixed(2)}× (main thread ${mainCpu.toFixed(2)}×, export() p50 ${p50.toFixed(2)}×)`,
    threshold: '≤ 1.3×',
    pass: cpu <= 1.3,
  });
  data[format] = { off: none, on: journal, cpuRatio: cpu, mainCpuRatio: mainCpu, p50Ratio: p50 };
}

emitResult({
  suite: 'journal',
  title: `Cost of the open batch's journal (${SERIES} series per export, ${EXPORTS} exports per run, ${ROUNDS} interleaved rounds, medians)`,
  tables: [table],
  targets,
  notes: [
    'Both contenders have a spool; only journalSyncMillis differs (1000 vs 0). A stub S3 answers at once.',
    'Process CPU includes the journal writes and fsyncs on libuv threads; main thread CPU is what export() and the loop pay.',
  ],
  data,
});
await source.shutdown();
