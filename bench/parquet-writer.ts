/**
 * The Parquet writer against OTLP/JSON, side by side in one run on the realistic data
 * (bench/lib/realistic-metrics.ts: 15 resource attributes; ten collections a file, as a
 * 10-minute Parquet batch of 1-minute exports holds), at ~2,000 and ~20,000 points a file:
 *  1. Main thread, µs per point: ColumnBuilders.appendResourceMetrics against
 *     resourceMetricsToJsonBytes (what export() does per point in each format).
 *  2. Making the body, CPU µs per point (this thread and libuv's pool): encodeParquet with one
 *     reused zstd context per page against OTLP/JSON + zstd (the records framed as one request,
 *     one reused context); also encodeParquet with zstd-napi's context, and hyparquet-writer given
 *     the columns already shredded into values and levels (same zstd-napi context), with the bytes
 *     per point of each.
 *  3. A worker's heap growth while it encodes a batch (its V8 heap in use plus external memory,
 *     sampled), relative to the builders' `bytes` (what maxBufferedBytes counts).
 * Run: `npx tsx bench/parquet-writer.ts [--quick]`. CPU times are thread/process CPU, so a loaded
 * machine distorts them less than wall time, but it still does: say so when quoting them.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { parquetReadObjects } from 'hyparquet';
import { zstdCompressor } from '../src/compression/zstd-compressors.js';
import { builtInZstd } from '../src/compression/zstd-engine.js';
import { otlpJsonRecords } from '../src/encoding/format.js';
import { resourceMetricsToJsonBytes } from '../src/encoding/otlp-json.js';
import { ColumnBuilders } from '../src/parquet/column-builders.js';
import { encodeParquet } from '../src/parquet/encode.js';
import { pageCompressor } from '../src/parquet/page-compressor.js';
import { fmtNum } from './lib/format.js';
import { hyparquetWriterFile, shred } from './lib/hyparquet-writer-file.js';
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
const processCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Median CPU ms of one run of `work`, each sample repeating it until MIN_SAMPLE_MILLIS. */
async function cpuPerRun(clock: () => number, work: () => unknown): Promise<number> {
  await work(); // warm-up
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
const napiCompress = napiAvailable
  ? (() => {
      const zstd = zstdCompressor('zstd-napi', 3);
      return (page: Uint8Array) => zstd([page]) as Uint8Array;
    })()
  : undefined;
const engine = builtInZstd() ? 'node:zlib' : 'zstd-napi';

/** Peak growth of a worker's heap (in use + external) while it encodes `sealed`. */
async function workerHeapGrowth(builders: ColumnBuilders): Promise<number> {
  const worker = new Worker(new URL('./children/parquet-encoder.js', import.meta.url), {
    workerData: { zstdEngine: engine },
  });
  const encode = (b: ColumnBuilders) =>
    new Promise<void>((resolve) => {
      const sealed = b.seal();
      worker.once('message', () => resolve());
      worker.postMessage(sealed, sealed.transfer);
    });
  const warm = new ColumnBuilders();
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
  await encode(builders);
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
    const b = new ColumnBuilders();
    for (const rm of rms) b.appendResourceMetrics(rm);
    return b;
  };
  const records = rms.map((rm) => resourceMetricsToJsonBytes(rm));
  const framing = otlpJsonRecords.framing as { head: string; separator: string; tail: string };
  const parts = [
    Buffer.from(framing.head),
    ...records.flatMap((r, i) => (i === 0 ? [r] : [Buffer.from(framing.separator), r])),
    Buffer.from(framing.tail),
  ];
  const jsonZstd = zstdCompressor(engine, 3);
  const compressPage = pageCompressor('zstd', 3, engine);
  let jsonBody = 0;
  let parquetBody = 0;
  let napiBody = 0;
  let hwBody = 0;
  const appendJson = await cpuPerRun(threadCpu, () =>
    rms.map((rm) => resourceMetricsToJsonBytes(rm)),
  );
  const appendColumns = await cpuPerRun(threadCpu, fill);
  const builderBytes = fill().bytes;
  const json = await cpuPerRun(processCpu, async () => {
    jsonBody = (await jsonZstd(parts)).length;
  });
  // Sealing transfers the arrays away: every run seals a fresh copy (filled outside the clock).
  const sealedCopies = () => fill().seal();
  let sealed = sealedCopies();
  const parquet = await cpuPerRun(processCpu, async () => {
    parquetBody = (await encodeParquet(sealed, { compression: 'zstd', compressPage })).length;
  });
  let napi: number | undefined;
  let hw: number | undefined;
  if (napiCompress !== undefined) {
    napi = await cpuPerRun(processCpu, async () => {
      napiBody = (await encodeParquet(sealed, { compression: 'zstd', compressPage: napiCompress }))
        .length;
    });
    // hyparquet-writer gets the rows of our file, shredded beforehand.
    const file = await encodeParquet(sealed, { compression: 'none' });
    const read = await parquetReadObjects({
      file: file.buffer as ArrayBuffer,
      parsers: { timestampFromMicroseconds: (micros: bigint) => micros },
    });
    const leaves = shred(read);
    hw = await cpuPerRun(processCpu, () => {
      hwBody = hyparquetWriterFile(leaves, read.length, napiCompress).length;
    });
  }
  sealed = sealedCopies();
  const growth = await workerHeapGrowth(fill());
  const us = (ms: number | undefined) => (ms === undefined ? '–' : fmtNum((ms * 1000) / points));
  const perPoint = (bytes: number) => (bytes === 0 ? '–' : fmtNum(bytes / points));
  rows.push([
    fmtNum(points),
    `${us(appendColumns)} / ${us(appendJson)} = ${fmtNum(appendColumns / appendJson)}×`,
    `${us(parquet)} / ${us(json)} = ${fmtNum(parquet / json)}×`,
    `${us(napi)} / ${us(hw)}`,
    `${perPoint(parquetBody)} / ${perPoint(jsonBody)} = ${fmtNum(parquetBody / jsonBody)}×`,
    `${perPoint(napiBody)} / ${perPoint(hwBody)}`,
    `${fmtNum(builderBytes / points)} B/pt, heap +${fmtNum(growth / builderBytes)}×`,
  ]);
}

notes.push(
  `Node ${process.version}, zstd level 3 (${engine}${napiAvailable ? '; zstd-napi for the sync columns' : ''}). ${COLLECTIONS} collections a file; CPU per point is the median of ${SAMPLES} samples of at least ${MIN_SAMPLE_MILLIS} ms each.`,
);
console.log(
  markdownTable({
    columns: [
      'points a file',
      'append µs/pt: columns / JSON',
      'body CPU µs/pt: Parquet / OTLP JSON + zstd',
      'µs/pt with zstd-napi: ours / hyparquet-writer',
      'bytes/pt: Parquet / JSON + zstd',
      'bytes/pt with zstd-napi: ours / hyparquet-writer',
      "builders' bytes; worker heap growth × them",
    ],
    rows,
  }),
);
for (const note of notes) console.log(`\n${note}`);
