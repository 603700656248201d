/**
 * The Parquet writer against OTLP/JSON, side by side in one run on the realistic data
 * (bench/lib/realistic-metrics.ts: 15 resource attributes; ten collections a file, as a
 * 10-minute Parquet batch of 1-minute exports holds), at ~2,000 and ~20,000 points a file:
 *  1. Main thread, µs per point: MetricColumnBuilders.appendResourceMetrics against
 *     resourceMetricsToJsonBytes (what export() does per point in each format).
 *  2. Making the body, CPU µs per point (this thread and libuv's pool): encodeParquet with one
 *     reused zstd context per page against OTLP/JSON + zstd (the records framed as one request,
 *     one reused context); also encodeParquet with zstd-napi's context, and hyparquet-writer given
 *     the columns already shredded into values and levels (same zstd-napi context), with the bytes
 *     per point of each.
 *  3. A worker's heap growth while it encodes a batch (its V8 heap in use plus external memory,
 *     sampled), relative to the builders' `bytes` (what maxBufferedBytes counts).
 * Run: `npx tsx bench/parquet-writer.ts [--quick]`. CPU times are thread or
 * process CPU, so a loaded machine distorts them less than wall time, but it still does: say so
 * when quoting them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { parquetReadObjects } from 'hyparquet';
import { builtInZstd } from '../src/compression/zstd-engine.js';
import { metricsExport } from '../src/signals/metrics/export.js';
import { resourceMetricsToJsonBytes } from '../src/signals/metrics/otlp-json.js';
import { MetricColumnBuilders } from '../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../src/signals/metrics/parquet/encode.js';
import type { BodyJob, BodyResult } from './children/parquet-bodies.js';
import { runTs } from './lib/child.js';
import { fmtNum } from './lib/format.js';
import { shred } from './lib/hyparquet-writer-file.js';
import { realisticSource } from './lib/realistic-metrics.js';
import { markdownTable, parseArgs } from './lib/result.js';
import { median } from './lib/stats.js';

const args = parseArgs(process.argv.slice(2));
const SIZES = [2_000, 20_000];
const COLLECTIONS = 10;
/** A sample runs the work this many times, so it spans many scheduler ticks (CPU is tick-sampled). */
const MIN_SAMPLE_MILLIS = args.quick ? 60 : 200;
const SAMPLES = args.quick ? 5 : 11;

const threadCpu = (): number => {
  const u = (process as unknown as { threadCpuUsage(): NodeJS.CpuUsage }).threadCpuUsage();
  return (u.user + u.system) / 1000;
};
/** Median CPU ms of one run of `work` (warmed up), each sample repeating it for MIN_SAMPLE_MILLIS. */
async function cpuPerRun(clock: () => number, work: () => unknown): Promise<number> {
  for (const start = clock(); clock() - start < 5 * MIN_SAMPLE_MILLIS; ) await work(); // warm-up
  const samples: number[] = [];
  for (let s = 0; s < SAMPLES; s++) {
    const start = clock();
    let runs = 0;
    do {
      await work();
      runs++;
    } while (clock() - start < MIN_SAMPLE_MILLIS);
    samples.push((clock() - start) / runs);
  }
  return median(samples);
}

const napiAvailable = (() => {
  try {
    createRequire(import.meta.url)('zstd-napi/binding');
    return true;
  } catch {
    return false;
  }
})();
const engine = builtInZstd() ? 'node:zlib' : 'zstd-napi';

/** One kind of body made in a process of its own (bench/children/parquet-bodies.ts). */
async function body(job: BodyJob): Promise<BodyResult> {
  const dir = await mkdtemp(join(tmpdir(), 'otel-s3-parquet-bench-'));
  try {
    const file = join(dir, 'job');
    await writeFile(
      file,
      serialize({ job, samples: SAMPLES, minSampleMillis: MIN_SAMPLE_MILLIS, engine }),
    );
    const run = await runTs('bench/children/parquet-bodies.ts', {
      args: [file],
      capMillis: 600_000,
    });
    const line = run.stdout.at(-1);
    if (run.code !== 0 || line === undefined)
      throw new Error(`${job.kind} body failed: ${run.stderr}`);
    return JSON.parse(line) as BodyResult;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Peak growth of a worker's heap (in use + external) while it encodes the builders' batch, after
 * it has encoded one like it (its code compiled, as in a running exporter).
 */
async function workerHeapGrowth(
  warm: MetricColumnBuilders,
  builders: MetricColumnBuilders,
): Promise<number> {
  const worker = new Worker(new URL('./children/parquet-encoder.js', import.meta.url), {
    workerData: { zstdEngine: engine },
  });
  const encode = (b: MetricColumnBuilders) =>
    new Promise<number>((resolve) => {
      const sealed = b.seal();
      worker.once('message', (reply: { heap: number }) => resolve(reply.heap));
      worker.postMessage(sealed, sealed.transfer);
    });
  await encode(warm);
  const heap = async () => {
    const h = await worker.getHeapStatistics();
    return h.used_heap_size + ((h as { external_memory?: number }).external_memory ?? 0);
  };
  await new Promise((resolve) => setTimeout(resolve, 50));
  const before = await heap();
  let peak = before;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      peak = Math.max(peak, await heap());
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  peak = Math.max(peak, await encode(builders));
  done = true;
  await sampler;
  await worker.terminate();
  return peak - before;
}

const rows: string[][] = [];
const notes: string[] = [];
for (const points of SIZES) {
  const source = realisticSource(points / COLLECTIONS, 7);
  const rms: ResourceMetrics[] = [];
  for (let i = 0; i < COLLECTIONS; i++) {
    source.record();
    rms.push(await source.collect());
  }
  await source.shutdown();
  const fill = () => {
    const b = new MetricColumnBuilders();
    for (const rm of rms) b.appendResourceMetrics(rm);
    return b;
  };
  const records = rms.map((rm) => resourceMetricsToJsonBytes(rm));
  const framing = metricsExport.records['otlp-json'].framing as {
    head: string;
    separator: string;
    tail: string;
  };
  const parts = [
    Buffer.from(framing.head),
    ...records.flatMap((r, i) => (i === 0 ? [r] : [Buffer.from(framing.separator), r])),
    Buffer.from(framing.tail),
  ];
  const appendJson = await cpuPerRun(threadCpu, () =>
    rms.map((rm) => resourceMetricsToJsonBytes(rm)),
  );
  const appendColumns = await cpuPerRun(threadCpu, fill);
  const builderBytes = fill().bytes;
  const json = await body({ kind: 'json', parts });
  const parquet = await body({ kind: 'parquet', sealed: fill().seal() });
  let napi: BodyResult | undefined;
  let hw: BodyResult | undefined;
  if (napiAvailable) {
    napi = await body({ kind: 'parquet-napi', sealed: fill().seal() });
    // hyparquet-writer gets the rows of our file, shredded beforehand.
    const file = await encodeParquet(fill().seal(), { compression: 'none' });
    const read = await parquetReadObjects({
      file: file.buffer as ArrayBuffer,
      parsers: { timestampFromMicroseconds: (micros: bigint) => micros },
    });
    hw = await body({ kind: 'hyparquet-writer', leaves: shred(read), rows: read.length });
  }
  const growth = await workerHeapGrowth(fill(), fill());
  const us = (ms: number | undefined) => (ms === undefined ? '–' : fmtNum((ms * 1000) / points));
  const perPoint = (bytes: number | undefined) =>
    bytes === undefined ? '–' : fmtNum(bytes / points);
  const total = (append: number, made: BodyResult) => us(append + made.millis);
  rows.push([
    fmtNum(points),
    `${us(appendColumns)} / ${us(appendJson)} = ${fmtNum(appendColumns / appendJson)}×`,
    `${us(parquet.millis)} / ${us(json.millis)} = ${fmtNum(parquet.millis / json.millis)}×`,
    `${total(appendColumns, parquet)} / ${total(appendJson, json)} = ${fmtNum((appendColumns + parquet.millis) / (appendJson + json.millis))}×`,
    `${us(napi?.millis)} / ${us(hw?.millis)}`,
    `${perPoint(parquet.bytes)} / ${perPoint(json.bytes)} = ${fmtNum(parquet.bytes / json.bytes)}×`,
    `${perPoint(napi?.bytes)} / ${perPoint(hw?.bytes)}`,
    `${fmtNum(builderBytes / points)} B/pt, heap +${fmtNum(growth / builderBytes)}×`,
  ]);
}

notes.push(
  `Node ${process.version}, zstd level 3 (${engine}${napiAvailable ? '; zstd-napi for the columns that say so' : ''}). ${COLLECTIONS} collections a file. CPU per point: the median of ${SAMPLES} samples of at least ${MIN_SAMPLE_MILLIS} ms each; append on this thread, bodies of the whole process (libuv's pool and the collector's threads too). hyparquet-writer is given the file's rows already shredded into each leaf's values and levels (writeColumn with statistics, writeMetadata), outside the clock.`,
);
console.log(
  markdownTable({
    columns: [
      'points a file',
      'append µs/pt: columns / JSON',
      'body CPU µs/pt: Parquet / OTLP JSON + zstd',
      'append + body µs/pt: Parquet / OTLP JSON',
      'µs/pt with zstd-napi: ours / hyparquet-writer',
      'bytes/pt: Parquet / JSON + zstd',
      'bytes/pt with zstd-napi: ours / hyparquet-writer',
      "builders' bytes; worker heap growth × them",
    ],
    rows,
  }),
);
for (const note of notes) console.log(`\n${note}`);
