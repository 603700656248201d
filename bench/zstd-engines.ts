/**
 * zstd engines: zstd-napi (the native addon) against zstd in node:zlib (Node ≥ 22.15), on 8 MiB
 * batches of realistic OTLP JSON at level 3, to choose the engine by measurement.
 *  1. Side by side in one process (rounds, order rotated): time and CPU per batch.
 *  2. One process per contender, 1000 batches (200 with --quick) with one reused context where
 *     the engine allows it: native memory (RSS, external, arrayBuffers after a full GC, after 100
 *     batches and after the last; the highest RSS seen without a forced GC) and the longest
 *     stall of the thread that compresses. A new zstd-napi Compressor per batch (the known leak)
 *     runs as the reference a leak would look like.
 *  3. Through the exporter's body maker (the worker thread), per shipped engine: the main
 *     thread's longest stall and the time per batch.
 */
import { createBodyMaker } from '../src/body/body-maker.js';
import { builtInZstd, zstdEngine } from '../src/compression/zstd-engine.js';
import { metricsExport } from '../src/signals/metrics/export.js';
import {
  CONTENDERS,
  type Comparison,
  type Contender,
  type EngineRun,
} from './children/zstd-engine.js';
import { jsonLine, runTs } from './lib/child.js';
import { fmtMiB, fmtMs, fmtNum, MiB } from './lib/format.js';
import { sleep, startDelayProbe } from './lib/loop-delay.js';
import { realisticSource } from './lib/realistic-metrics.js';
import { emitResult, parseArgs, progress, type Table } from './lib/result.js';
import { median } from './lib/stats.js';
import {
  flat,
  grew,
  NATIVE_FIELDS,
  signed,
  type WorkerRun,
  zstdEngineTargets,
} from './lib/zstd-targets.js';

const args = parseArgs(process.argv.slice(2));
const BATCH_MIB = 8; // the exporter's default maxBatchBytes
const MEMORY_BATCHES = args.quick ? 200 : 1_000;
const ROUNDS = args.quick ? 3 : 9;
const BATCHES_PER_ROUND = 5;
const WORKER_BATCHES = args.quick ? 20 : 60;
const CHILD = 'bench/children/zstd-engine.ts';

const napiLoads = await import('zstd-napi').then(
  () => true,
  () => false,
);
const hasBuiltIn = builtInZstd();
const available = (Object.keys(CONTENDERS) as Contender[]).filter((c) =>
  c.startsWith('zlib') ? hasBuiltIn : napiLoads,
);
/** Throughput in binary units, as the batch sizes: MiB of input per second. */
const mibps = (batchBytes: number, millis: number) =>
  `${fmtNum(batchBytes / MiB / (millis / 1000))} MiB/s`;

// 1. Side by side.
progress(`zstd engines: side by side, ${ROUNDS} rounds × ${BATCHES_PER_ROUND} batches`);
const compareRun = await runTs(CHILD, {
  env: {
    MODE: 'compare',
    CONTENDERS: available.filter((c) => c !== 'napi-new-per-batch').join(','),
    ROUNDS: String(ROUNDS),
    BATCHES: String(BATCHES_PER_ROUND),
    BATCH_MIB: String(BATCH_MIB),
  },
  nodeFlags: ['--expose-gc'],
  capMillis: 600_000,
  echoStderr: true,
});
const comparison = jsonLine<{ comparison: Comparison }>(compareRun, 'comparison')?.comparison;
if (comparison === undefined) throw new Error(`side-by-side run failed: ${compareRun.stderr}`);
const baseline: Contender = 'napi-reused';
/** Median over rounds of (contender / zstd-napi) CPU per batch: same round, same machine state. */
const cpuRatio = (c: Contender): number | undefined => {
  const base = comparison.cpuMillis[baseline];
  const mine = comparison.cpuMillis[c];
  if (base === undefined || mine === undefined) return undefined;
  return median(mine.map((m, i) => m / (base[i] as number)));
};
const compareTable: Table = {
  columns: [
    `contender (${fmtNum(comparison.batchBytes / MiB)} MiB batch, level 3)`,
    'wall per batch (median)',
    'CPU per batch (median)',
    'CPU throughput',
    'CPU vs zstd-napi (median of rounds)',
  ],
  rows: comparison.contenders.map((c) => {
    const wall = median(comparison.wallMillis[c] ?? []);
    const cpu = median(comparison.cpuMillis[c] ?? []);
    const ratio = cpuRatio(c);
    return [
      CONTENDERS[c],
      fmtMs(wall),
      fmtMs(cpu),
      mibps(comparison.batchBytes, cpu),
      ratio === undefined ? '' : `${ratio.toFixed(2)}×`,
    ];
  }),
};

// 2. Memory over many batches, one process each.
const runs: EngineRun[] = [];
for (const c of available) {
  progress(`zstd engines: ${c}, ${MEMORY_BATCHES} batches`);
  const run = await runTs(CHILD, {
    env: {
      MODE: 'memory',
      CONTENDER: c,
      BATCHES: String(MEMORY_BATCHES),
      BATCH_MIB: String(BATCH_MIB),
    },
    nodeFlags: ['--expose-gc'],
    capMillis: 600_000,
    echoStderr: true,
  });
  const result = jsonLine<{ engineRun: EngineRun }>(run, 'engineRun')?.engineRun;
  if (result === undefined) throw new Error(`${c} failed: ${run.stderr}`);
  runs.push(result);
}
const memoryTable: Table = {
  columns: [
    'contender',
    'per batch (median / max)',
    'longest stall of its thread',
    'RSS after GC, every 100 batches',
    'external',
    'arrayBuffers',
    'highest RSS (no forced GC)',
    'flat (≤ 10% or 1 MiB)',
  ],
  rows: runs.map((r) => [
    CONTENDERS[r.contender],
    `${fmtMs(r.medianMillis)} / ${fmtMs(r.maxMillis)}`,
    fmtMs(r.maxStallMillis),
    `${r.series.map((s) => fmtNum(s.memory.rss / MiB)).join(' ')} MiB (${signed(grew(r, 'rss'))})`,
    `${fmtMiB(r.at100.external)} → ${fmtMiB(r.atEnd.external)}`,
    `${fmtMiB(r.at100.arrayBuffers)} → ${fmtMiB(r.atEnd.arrayBuffers)}`,
    fmtMiB(r.peakRss),
    NATIVE_FIELDS.every((f) => flat(r, f)) ? 'yes' : 'NO',
  ]),
};

// 3. Through the body maker (worker thread), as the exporter runs it.
const format = metricsExport.records['otlp-json'];
const source = realisticSource(1_700, 7);
const records: Buffer[] = [];
let recordBytes = 0;
while (recordBytes < BATCH_MIB * MiB) {
  source.record();
  const record = format.encode(await source.collect());
  records.push(record);
  recordBytes += record.length;
}
await source.shutdown();
const workerRuns: WorkerRun[] = [];
for (const engine of ['zstd-napi', 'node:zlib'] as const) {
  if (engine === 'zstd-napi' ? !napiLoads : !hasBuiltIn) continue;
  progress(`zstd engines: through the body maker, ${engine}, ${WORKER_BATCHES} batches`);
  const maker = createBodyMaker({ body: 'framed', compression: 'zstd', level: 3, engine });
  const millis: number[] = [];
  const stalls: number[] = [];
  let cpuMillis = 0;
  for (let i = 0; i < WORKER_BATCHES + 2; i++) {
    const copy = records.map((r) => Buffer.from(r)); // the body maker takes (transfers) its input
    await sleep(5);
    const probe = startDelayProbe(1);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await maker.make({ records: copy, framing: format.framing, sha256: true, crc32: false });
    const t = performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    const delay = probe.stop();
    if (i < 2) continue; // the worker's first jobs (start-up, JIT)
    millis.push(t);
    stalls.push(delay.maxMillis);
    cpuMillis += (cpu.user + cpu.system) / 1000;
  }
  await maker.close();
  workerRuns.push({ engine, millis, stalls, cpuMillis: cpuMillis / WORKER_BATCHES });
}
const workerTable: Table = {
  columns: [
    `body maker, zstd engine (${fmtNum(recordBytes / MiB)} MiB batch + SHA-256)`,
    'make() per batch (median)',
    'process CPU per batch',
    'main thread longest stall (median / max of batches)',
  ],
  rows: workerRuns.map((w) => [
    w.engine,
    fmtMs(median(w.millis)),
    fmtMs(w.cpuMillis),
    `${fmtMs(median(w.stalls))} / ${fmtMs(Math.max(...w.stalls))}`,
  ]),
};

const targets = zstdEngineTargets({
  available: available.length,
  present: { 'zstd-napi': napiLoads, 'node:zlib': hasBuiltIn },
  batches: MEMORY_BATCHES,
  runs,
  workerRuns,
  zlibRatio: cpuRatio('zlib-stream'),
});
const chosen = zstdEngine();

emitResult({
  suite: 'zstd-engines',
  title: `zstd engines: zstd-napi vs node:zlib (${BATCH_MIB} MiB OTLP JSON batches, level 3)`,
  tables: [compareTable, memoryTable, workerTable],
  targets,
  notes: [
    `This runtime (Node ${process.version}) uses ${chosen ?? 'no zstd engine'}; node:zlib zstd ${hasBuiltIn ? 'present' : 'absent'}, zstd-napi ${napiLoads ? 'loads' : 'does not load'}.`,
    `Side by side: ${ROUNDS} rounds of ${BATCHES_PER_ROUND} batches per contender after a warm-up round, order rotated; CPU is the whole process's (libuv's pool and GC threads included), the figure least disturbed by other load on the machine.`,
    `Memory: ${MEMORY_BATCHES} batches per contender in a process of its own, a turn of the event loop between batches; "after GC" figures follow a full gc() (--expose-gc); the highest RSS is sampled after every batch with no forced GC, which is where a context freed only by finalizers shows.`,
    'Shipped: zstd-napi streams the records through one reused context on the worker thread (nice +10). node:zlib has no synchronous call that reuses a context, so its shipped form is one reused ZstdCompress stream per worker, ended with flush(ZSTD_e_end) per batch: the work runs on libuv’s pool (normal priority, in slices of one 64 KiB output chunk). The one-shot zstdCompressSync() per batch needs the batch assembled first and a fresh context every time.',
  ],
  data: { comparison, runs, workerRuns },
});
