/**
 * Child process of bench/zstd-engines.ts: one zstd contender (CONTENDER) compresses BATCHES
 * batches of realistic OTLP JSON (BATCH_MIB each) on this thread, one after another with a turn
 * of the event loop between them, as the body worker does. Prints one JSON line: time per batch,
 * the longest event-loop stall, the output size, memory after a full GC (after 100 batches and
 * after the last) and the highest RSS seen without forcing a GC.
 */
import { createRequire } from 'node:module';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as zlib from 'node:zlib';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { join, napiZstd, zstdFrames } from '../../src/compression/compressors.js';
import { metricsExport } from '../../src/signals/metrics/export.js';
import { type MemorySample, memoryAfterGc } from '../lib/memory.js';
import { realisticSource } from '../lib/realistic-metrics.js';
import { summarize } from '../lib/stats.js';

export const CONTENDERS = {
  'napi-reused': 'zstd-napi: one reused context, records streamed in (shipped, Node < 22.15)',
  'zlib-stream':
    'node:zlib: one reused ZstdCompress stream, flush(ZSTD_e_end) per batch (shipped, Node ≥ 22.15)',
  'zlib-sync': 'node:zlib zstdCompressSync() per batch over the assembled batch',
  'zlib-async': 'node:zlib zstdCompress() per batch (libuv pool)',
  'napi-new-per-batch': 'reference: zstd-napi new Compressor() per batch (the known leak)',
} as const;
export type Contender = keyof typeof CONTENDERS;

export interface EngineRun {
  contender: Contender;
  batches: number;
  batchBytes: number;
  medianMillis: number;
  maxMillis: number;
  totalMillis: number;
  /** CPU time of the whole process (every thread, libuv's pool included) per batch. */
  cpuMillisPerBatch: number;
  outputBytes: number;
  maxStallMillis: number;
  at100: MemorySample;
  atEnd: MemorySample;
  /** After a full GC every 100 batches: a leak climbs steadily, allocator warm-up levels off. */
  series: { batch: number; memory: MemorySample }[];
  peakRss: number;
  roundTrip: boolean;
}

const LEVEL = 3;
const SERIES_PER_RECORD = 1_700; // ~1 MiB of OTLP JSON per export
const DISTINCT_BATCHES = 2;
const WARMUP = 10;
const SAMPLE_AT = 100;

type Compress = (parts: Buffer[]) => Uint8Array | Promise<Uint8Array>;

async function contender(name: Contender): Promise<Compress> {
  const zstdNapi = () => import('zstd-napi');
  switch (name) {
    case 'napi-reused':
      return napiZstd(LEVEL).compress;
    case 'zlib-stream':
      return zstdFrames(LEVEL).compress;
    case 'zlib-sync': {
      // A fresh context per call, closed before it returns; the input assembled as the worker would.
      const options = { params: { [zlib.constants.ZSTD_c_compressionLevel]: LEVEL } };
      return (parts) => zlib.zstdCompressSync(join(parts), options);
    }
    case 'zlib-async':
      return (parts) =>
        new Promise((resolve, reject) =>
          zlib.zstdCompress(
            Buffer.concat(parts),
            { params: { [zlib.constants.ZSTD_c_compressionLevel]: LEVEL } },
            (error, out) => (error ? reject(error) : resolve(out)),
          ),
        );
    case 'napi-new-per-batch': {
      const { Compressor } = await zstdNapi();
      return (parts) => {
        const compressor = new Compressor();
        compressor.setParameters({ compressionLevel: LEVEL });
        return compressor.compress(Buffer.concat(parts));
      };
    }
  }
}

/** DISTINCT_BATCHES batches of ~batchBytes each, as lists of records (one per export). */
async function buildBatches(batchBytes: number): Promise<Buffer[][]> {
  const format = metricsExport.records['otlp-json'];
  const source = realisticSource(SERIES_PER_RECORD, 7);
  const batches: Buffer[][] = [];
  for (let b = 0; b < DISTINCT_BATCHES; b++) {
    const records: Buffer[] = [];
    let bytes = 0;
    while (bytes < batchBytes) {
      source.record();
      const rm: ResourceMetrics = await source.collect();
      const record = format.encode(rm);
      records.push(record);
      bytes += record.length;
    }
    batches.push(records);
  }
  await source.shutdown();
  return batches;
}

const decompress = (bytes: Uint8Array): Buffer =>
  typeof (zlib as Record<string, unknown>).zstdDecompressSync === 'function'
    ? zlib.zstdDecompressSync(bytes)
    : // The Node 20 fallback: the addon is installed there.
      (createRequire(import.meta.url)('zstd-napi') as typeof import('zstd-napi')).decompress(bytes);

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function runEngine(
  name: Contender,
  batchCount: number,
  batchBytes: number,
): Promise<EngineRun> {
  const batches = await buildBatches(batchBytes);
  const compress = await contender(name);
  const expected = batches.map((b) => Buffer.concat(b));
  let roundTrip = true;
  for (let i = 0; i < WARMUP; i++) {
    const batch = i % DISTINCT_BATCHES;
    const out = await compress(batches[batch] as Buffer[]);
    if (i < DISTINCT_BATCHES) roundTrip &&= decompress(out).equals(expected[batch] as Buffer);
  }
  const millis: number[] = [];
  let outputBytes = 0;
  let peakRss = 0;
  let at100: MemorySample | undefined;
  const series: { batch: number; memory: MemorySample }[] = [];
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  let gcMillis = 0;
  let gcCpu = 0;
  for (let i = 1; i <= batchCount; i++) {
    const t0 = performance.now();
    const out = await compress(batches[i % DISTINCT_BATCHES] as Buffer[]);
    millis.push(performance.now() - t0);
    outputBytes += out.length;
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    await turn();
    if (i % SAMPLE_AT === 0) {
      const g0 = performance.now();
      const c0 = process.cpuUsage();
      const memory = await memoryAfterGc();
      series.push({ batch: i, memory });
      if (i === SAMPLE_AT) at100 = memory;
      gcMillis += performance.now() - g0;
      const c = process.cpuUsage(c0);
      gcCpu += (c.user + c.system) / 1000;
    }
  }
  const totalMillis = performance.now() - started - gcMillis;
  const cpu = process.cpuUsage(cpuStarted);
  const cpuMillis = (cpu.user + cpu.system) / 1000 - gcCpu;
  delay.disable();
  const atEnd = await memoryAfterGc();
  return {
    contender: name,
    batches: batchCount,
    batchBytes: expected.reduce((n, b) => n + b.length, 0) / DISTINCT_BATCHES,
    medianMillis: summarize(millis).median,
    maxMillis: Math.max(...millis),
    totalMillis,
    cpuMillisPerBatch: cpuMillis / batchCount,
    outputBytes,
    maxStallMillis: delay.max / 1e6,
    at100: at100 ?? atEnd,
    atEnd,
    series,
    peakRss,
    roundTrip,
  };
}

export interface Comparison {
  contenders: Contender[];
  rounds: number;
  batchesPerRound: number;
  batchBytes: number;
  /** Per contender: milliseconds per batch in each round, wall-clock and process CPU. */
  wallMillis: Record<string, number[]>;
  cpuMillis: Record<string, number[]>;
}

/**
 * Throughput side by side in one process: rounds of `batchesPerRound` batches per contender,
 * the order rotated each round, so a busy spell of the machine hits every contender alike.
 */
export async function compareEngines(
  contenders: Contender[],
  rounds: number,
  batchesPerRound: number,
  batchBytes: number,
): Promise<Comparison> {
  const batches = await buildBatches(batchBytes);
  const compressors = new Map<Contender, Compress>();
  for (const name of contenders) compressors.set(name, await contender(name));
  const wallMillis: Record<string, number[]> = Object.fromEntries(contenders.map((c) => [c, []]));
  const cpuMillis: Record<string, number[]> = Object.fromEntries(contenders.map((c) => [c, []]));
  for (let round = 0; round <= rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const name = contenders[(round + k) % contenders.length] as Contender;
      const compress = compressors.get(name) as Compress;
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      for (let i = 0; i < batchesPerRound; i++) {
        await compress(batches[i % DISTINCT_BATCHES] as Buffer[]);
        await turn();
      }
      const cpu = process.cpuUsage(c0);
      if (round === 0) continue; // warm-up
      wallMillis[name]?.push((performance.now() - t0) / batchesPerRound);
      cpuMillis[name]?.push((cpu.user + cpu.system) / 1000 / batchesPerRound);
    }
  }
  return {
    contenders,
    rounds,
    batchesPerRound,
    batchBytes: batches.reduce((n, b) => n + Buffer.concat(b).length, 0) / DISTINCT_BATCHES,
    wallMillis,
    cpuMillis,
  };
}

const env = process.env;
if (env.MODE === 'memory') {
  const run = await runEngine(
    env.CONTENDER as Contender,
    Number(env.BATCHES),
    Number(env.BATCH_MIB) * 1024 * 1024,
  );
  process.stdout.write(`${JSON.stringify({ engineRun: run })}\n`);
} else if (env.MODE === 'compare') {
  const result = await compareEngines(
    (env.CONTENDERS ?? '').split(',') as Contender[],
    Number(env.ROUNDS),
    Number(env.BATCHES),
    Number(env.BATCH_MIB) * 1024 * 1024,
  );
  process.stdout.write(`${JSON.stringify({ comparison: result })}\n`);
}
