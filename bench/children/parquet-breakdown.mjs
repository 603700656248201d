// @ts-check
/**
 * Where Parquet's memory goes, step by step, read at the kernel's high-water mark: each step
 * resets the process's VmHWM to its RSS (`echo 5 > /proc/self/clear_refs`), runs, and reports
 * the most memory it added at once (peak) and what it left resident (kept), beside its time.
 * Plain Node.js on the built package (dist/), Linux only:
 *
 *   npm run build && node --expose-gc bench/children/parquet-breakdown.mjs
 *
 * SERIES (5000) series of a counter and a histogram (the footprint suite's heavy traffic),
 * EXPORTS (3) collections per batch (a 3 s batch of 1 s exports), or with BATCH_MIB the
 * collections while the builders hold at most that many MiB (what maxBatchBytes counts).
 *
 *  1. A bare worker thread (an eval'd setInterval), then gone: what any worker costs.
 *  2. The body worker as createWorkerBodyMaker() starts it (src/body/worker-body-maker.ts:
 *     body-worker.js, its resourceLimits), and a first job of one point: the worker's isolate
 *     and its modules (the Parquet writer, the zstd binding).
 *  3. Per batch (BATCHES, 2: the first and a warm one): the column builders filled on the main
 *     thread (capacity vs used), sealed, transferred, encoded and compressed in the worker, the
 *     body back; then the worker idle for a second (what it still holds).
 *  4. The same encode on this thread, step by step (the worker stopped): plan() (dictionaries,
 *     the row order), each leaf's chunk (its pages written, then compressed), the footer, the
 *     copy of the file: where the peak is, and which steps are longer than a slice of 2 ms.
 *
 * Prints a table and, with JSON=1, one JSON line.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { footprintTraffic, procStatus } from './footprint-traffic.mjs';

const SERIES = Number(process.env.SERIES ?? 5_000);
const EXPORTS = Number(process.env.EXPORTS ?? 3);
const BATCH_MIB = process.env.BATCH_MIB === undefined ? undefined : Number(process.env.BATCH_MIB);
const BATCHES = Number(process.env.BATCHES ?? 2);
/** The built package: dist/, or DIST (a directory, relative to the current one) for an A/B. */
const DIST =
  process.env.DIST === undefined
    ? new URL('../../dist/', import.meta.url)
    : pathToFileURL(`${resolve(process.env.DIST)}/`);
/** As createWorkerBodyMaker() starts its worker. */
const YOUNG_GENERATION_MB = 2;
const SLICE_MILLIS = 2;
const WARM_ROUNDS = Number(process.env.WARM_ROUNDS ?? 3);
const TIMED_ROUNDS = Number(process.env.TIMED_ROUNDS ?? 7);

if (process.platform !== 'linux') throw new Error('parquet-breakdown reads /proc: Linux only');
const collect = /** @type {() => void} */ (globalThis.gc);
if (typeof collect !== 'function') throw new Error('run with node --expose-gc');

const { MetricColumnBuilders } = await import(
  new URL('signals/metrics/parquet/column-builders.js', DIST).href
);
const { plan } = await import(new URL('signals/metrics/parquet/plan.js', DIST).href);
const { rowOrder } = await import(new URL('signals/metrics/parquet/row-order.js', DIST).href);
const { LEAVES } = await import(new URL('signals/metrics/parquet/leaves.js', DIST).href);
const { ParquetFileWriter } = await import(
  new URL('signals/metrics/parquet/file-writer.js', DIST).href
);
const { Scratch } = await import(new URL('parquet/chunks.js', DIST).href);
/** A leaf writer's chunk, its steps run back to back where it gives steps (src/parquet/steps.js). */
const { isSteps, run } = await import(new URL('parquet/steps.js', DIST).href).catch(() => ({
  isSteps: () => false,
  run: (/** @type {any} */ x) => x,
}));
const { createPageCompressor } = await import(new URL('compression/compressors.js', DIST).href);

/** VmRSS and VmHWM of this process, bytes. */
function status() {
  const { VmRSS, VmHWM } = /** @type {Record<string, number>} */ (procStatus(['VmRSS', 'VmHWM']));
  return { rss: /** @type {number} */ (VmRSS), hwm: /** @type {number} */ (VmHWM) };
}
const resetPeak = () => writeFileSync('/proc/self/clear_refs', '5');
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** @type {{ step: string, peak: number, kept: number, millis: number, note: string }[]} */
const rows = [];
/** Sets the note of the last step. @param {string} text */
function noteLast(text) {
  const last = rows.at(-1);
  if (last !== undefined) last.note = text;
}
/**
 * Runs one step from a collected heap and a fresh high-water mark.
 * @template T @param {string} name @param {() => T | Promise<T>} run
 * @param {(result: T) => string} [note] @returns {Promise<T>}
 */
async function step(name, run, note = () => '') {
  collect();
  await sleep(50); // V8's concurrent sweepers and ArrayBuffer frees
  const before = status().rss;
  resetPeak();
  const started = performance.now();
  const result = await run();
  const millis = performance.now() - started;
  const after = status();
  rows.push({
    step: name,
    peak: after.hwm - before,
    kept: after.rss - before,
    millis,
    note: note(result),
  });
  return result;
}

// The data: the footprint suite's service, collected ahead (cumulative, as the SDK exports).
class Collecting extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}
const reader = new Collecting();
const provider = new MeterProvider({ readers: [reader] });
const record = footprintTraffic(provider.getMeter('footprint'), SERIES);
async function nextExport() {
  record();
  return (await reader.collect()).resourceMetrics;
}
/** One batch's collections: EXPORTS of them, or those that keep the builders within BATCH_MIB. */
async function batchExports() {
  const out = [];
  if (BATCH_MIB === undefined) {
    for (let i = 0; i < EXPORTS; i++) out.push(await nextExport());
    return out;
  }
  const probe = new MetricColumnBuilders();
  for (;;) {
    const rm = await nextExport();
    probe.appendResourceMetrics(rm);
    if (probe.bytes > BATCH_MIB * 2 ** 20) return out;
    out.push(rm);
  }
}

/** Bytes the sealed arrays hold (capacity) and what their rows use. */
function sealedBytes(/** @type {any} */ s) {
  const capacity = s.transfer.reduce(
    (/** @type {number} */ n, /** @type {ArrayBuffer} */ b) => n + b.byteLength,
    0,
  );
  const perRow = [
    'resource',
    'metric',
    'attributes',
    'time',
    'start',
    'flags',
    'present',
    'double',
    'integer',
    'min',
    'max',
    'scale',
    'zeroCount',
    'positiveOffset',
    'negativeOffset',
    'bounds',
    'listLengths',
  ];
  let rowCapacity = 0;
  let rowUsed = 0;
  for (const key of perRow) {
    const a = s[key];
    rowCapacity += a.byteLength;
    rowUsed += (a.byteLength / Math.max(1, a.length)) * Math.ceil((a.length / cap(s)) * s.rows);
  }
  let countsUsed = 0;
  for (let i = 0; i < s.rows * 3; i++) countsUsed += s.listLengths[i] * 8;
  return {
    capacity,
    perRow: { capacity: rowCapacity, used: rowUsed },
    counts: { capacity: s.counts.byteLength, used: countsUsed },
  };
}
/** Rows of capacity of the per-row arrays. */
const cap = (/** @type {any} */ s) => s.resource.length;

const MB = (/** @type {number} */ n) => `${(n / 1e6).toFixed(1)} MB`;

// 1. A bare worker.
const bare = await step('bare worker thread started (eval setInterval)', async () => {
  const w = new Worker('setInterval(() => {}, 1e6)', { eval: true });
  await new Promise((r) => w.once('online', r));
  await sleep(200);
  return w;
});
const bareHeap = await bare.getHeapStatistics();
noteLast(`its heap: ${MB(bareHeap.total_physical_size)} resident`);
await step('bare worker terminated', () => bare.terminate());

// 2. The body worker.
const worker = await step('body worker started (isolate + modules)', async () => {
  const w = new Worker(new URL('body/body-worker.js', DIST), {
    workerData: {
      body: 'parquet',
      signal: 'metrics',
      compression: 'zstd',
      level: 3,
      zstdEngine: 'node:zlib',
    },
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
  });
  await new Promise((r) => w.once('online', r));
  await sleep(300);
  return w;
});
let nextId = 1;
/** One job as the exporter posts it; its body back. */
function job(/** @type {any} */ sealed) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    /** @param {any} reply */
    const onReply = (reply) => {
      if (reply.id !== id) return;
      worker.off('message', onReply);
      if (reply.error !== undefined) reject(new Error(reply.error));
      else resolve(Buffer.from(reply.body));
    };
    worker.on('message', onReply);
    worker.postMessage({ id, columns: sealed, sha256: false, crc32: false }, sealed.transfer);
  });
}
const workerHeap = async () => {
  const h = await worker.getHeapStatistics();
  return `worker heap ${MB(h.total_physical_size)} resident, ${MB(h.used_heap_size)} used, external ${MB(h.external_memory)}`;
};
{
  const tiny = new MetricColumnBuilders();
  const rm = /** @type {any} */ (await nextExport());
  // One point of the batch: the first job loads and compiles the encoder.
  const one = {
    ...rm,
    scopeMetrics: [
      {
        ...rm.scopeMetrics[0],
        metrics: [
          {
            ...rm.scopeMetrics[0].metrics[0],
            dataPoints: [rm.scopeMetrics[0].metrics[0].dataPoints[0]],
          },
        ],
      },
    ],
  };
  tiny.appendResourceMetrics(one);
  const sealed = tiny.seal();
  await step('first job, one point (the encoder compiled)', () => job(sealed));
  noteLast(await workerHeap());
}

// 3. Batches through the worker.
/** @type {any} */
let lastSealed;
for (let b = 1; b <= BATCHES; b++) {
  const exports = await batchExports();
  const builders = await step(
    `batch ${b}: builders filled (${exports.length} exports, main thread)`,
    () => {
      const builders = new MetricColumnBuilders();
      for (const rm of exports) builders.appendResourceMetrics(rm);
      return builders;
    },
    (builders) => `${builders.rows} points, builders.bytes ${MB(builders.bytes)}`,
  );
  const sealed = await step(
    `batch ${b}: seal()`,
    () => builders.seal(),
    (s) => {
      const bytes = sealedBytes(s);
      return `columns ${MB(bytes.capacity)}: per-row arrays ${MB(bytes.perRow.capacity)} (${MB(bytes.perRow.used)} used), counts ${MB(bytes.counts.capacity)} (${MB(bytes.counts.used)} used)`;
    },
  );
  // A copy kept for step 4 (the worker takes the original).
  lastSealed = structuredClone(sealed);
  const body = await step(
    `batch ${b}: transferred, encoded in the worker, body back`,
    () => job(sealed),
    (body) => `body ${MB(body.length)}`,
  );
  await step(`batch ${b}: body dropped, worker idle 1 s`, () => sleep(1000));
  noteLast(await workerHeap());
  void body;
}
await step('body worker terminated', () => worker.terminate());

// 4. The encode on this thread, step by step.
/** @type {string[]} */
const sliceLines = [];
{
  const s = lastSealed;
  const { compressPage } = createPageCompressor({
    compression: 'zstd',
    level: 3,
    engine: 'node:zlib',
  });
  /**
   * plan() and every leaf's chunk, timed: the pieces a main-thread encode in slices would run
   * one per turn of the event loop.
   */
  const pieces = async () => {
    let t = performance.now();
    const p = plan(s);
    const planMillis = performance.now() - t;
    t = performance.now();
    rowOrder(
      s,
      p.index.service,
      p.index.name,
      Math.max(p.dict.service.ids.length, p.dict.name.ids.length),
    );
    const orderMillis = performance.now() - t;
    const scratch = new Scratch();
    /** @type {{ leaf: string, write: number, compress: number, pages: number, largest: number, bytes: number }[]} */
    const leaves = [];
    for (const [name, write] of LEAVES) {
      scratch.arena.length = 0;
      t = performance.now();
      const written = write(p, scratch, p.order);
      const chunk = isSteps(written) ? run(written) : written;
      const wrote = performance.now() - t;
      /** @type {Uint8Array[]} */
      const pages = [
        ...(chunk.dictionary ? [chunk.dictionary.page] : []),
        ...chunk.pages.map((/** @type {{ bytes: Uint8Array }} */ page) => page.bytes),
      ];
      t = performance.now();
      let bytes = 0;
      for (const page of pages) {
        bytes += page.length >= 512 ? (await compressPage(page)).length : page.length;
      }
      leaves.push({
        leaf: name,
        write: wrote,
        compress: performance.now() - t,
        pages: pages.length,
        largest: Math.max(...pages.map((page) => page.length)),
        bytes,
      });
    }
    return { p, planMillis, orderMillis, leaves, scratch };
  };
  // Warm: the times of a worker that has made files before (the JIT's code for these modules).
  for (let i = 0; i < WARM_ROUNDS; i++) await pieces();
  const first = await step(
    'in-thread: plan() and every leaf chunk written and compressed',
    pieces,
    (r) =>
      `scratch arena ${MB(r.scratch.arena.buf.length)}, ints ${MB(r.scratch.ints.byteLength)}, doubles ${MB(r.scratch.doubles.byteLength)}`,
  );
  const file = await step(
    'in-thread: the whole file (ParquetFileWriter, as encodeParquet)',
    async () => {
      const writer = new ParquetFileWriter({ compression: 'zstd', compressPage });
      await writer.writeRun(s);
      return writer.finish();
    },
    (f) => `file ${MB(f.length)} in a buffer of ${MB(f.buffer.byteLength)}`,
  );
  await step('in-thread: the copy encodeParquet returns (.slice())', () => file.slice());
  // Times: the median of TIMED_ROUNDS rounds, each piece on its own (a collection lands in one).
  const rounds = [first];
  for (let i = 1; i < TIMED_ROUNDS; i++) rounds.push(await pieces());
  const mid = (/** @type {number[]} */ xs) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return /** @type {number} */ (sorted[Math.floor(sorted.length / 2)]);
  };
  const timed = {
    planMillis: mid(rounds.map((r) => r.planMillis)),
    orderMillis: mid(rounds.map((r) => r.orderMillis)),
  };
  const leaves = first.leaves.map((l, i) => ({
    ...l,
    write: mid(rounds.map((r) => /** @type {(typeof l)} */ (r.leaves[i]).write)),
    compress: mid(rounds.map((r) => /** @type {(typeof l)} */ (r.leaves[i]).compress)),
  }));
  const long = leaves.filter((l) => l.write + l.compress > SLICE_MILLIS);
  sliceLines.push(
    `${s.rows} rows (warm: medians of ${TIMED_ROUNDS} rounds after ${WARM_ROUNDS}): plan() ${timed.planMillis.toFixed(1)} ms, of which the row order (sort) about ${timed.orderMillis.toFixed(1)} ms; every leaf ${leaves.reduce((n, l) => n + l.write + l.compress, 0).toFixed(1)} ms`,
    '',
    '| leaf | write ms | compress ms | pages | largest page | compressed bytes |',
    '|---|---|---|---|---|---|',
    ...leaves.map(
      (l) =>
        `| ${l.leaf} | ${l.write.toFixed(2)} | ${l.compress.toFixed(2)} | ${l.pages} | ${l.largest} | ${l.bytes} |`,
    ),
    '',
    `leaves over ${SLICE_MILLIS} ms (write + compress): ${long.map((l) => `${l.leaf} ${(l.write + l.compress).toFixed(1)} ms`).join(', ') || 'none'}`,
  );
  if (process.env.JSON === '1') console.log(JSON.stringify({ breakdown: { rows, leaves } }));
}

console.log(
  `\nSERIES=${SERIES} EXPORTS=${EXPORTS}${BATCH_MIB ? ` BATCH_MIB=${BATCH_MIB}` : ''}, ${process.version}; heap limit ${MB(getHeapStatistics().heap_size_limit)}`,
);
console.log('| step | peak added (VmHWM) | kept (RSS) | ms | |');
console.log('|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.step} | ${MB(r.peak)} | ${MB(r.kept)} | ${r.millis.toFixed(1)} | ${r.note} |`);
}
console.log(`\n${sliceLines.join('\n')}`);
await provider.shutdown();
