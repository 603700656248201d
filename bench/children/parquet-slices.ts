/**
 * The sliced Parquet encode on the event loop's thread against the body worker's, for one batch
 * of the realistic data (bench/lib/realistic-metrics.ts) filled to BATCH_MIB (16) MiB of column
 * builders: the longest turn of the event loop while the sliced maker makes the file (a
 * setImmediate probe: the gap between two of its ticks), its pauses, wall time, and whether the
 * two files are the same bytes. ROUNDS (5) files per maker, the first cold.
 *
 *   npx tsx bench/children/parquet-slices.ts
 */
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { createBodyMaker } from '../../src/body/index.js';
import { MetricColumnBuilders } from '../../src/signals/metrics/parquet/column-builders.js';
import { realisticSource } from '../lib/realistic-metrics.js';

const BATCH_MIB = Number(process.env.BATCH_MIB ?? 16);
const SERIES = Number(process.env.SERIES ?? 4_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);

const source = realisticSource(SERIES, 7);
const exports: ResourceMetrics[] = [];
{
  const builders = new MetricColumnBuilders();
  for (;;) {
    source.record();
    const rm = await source.collect();
    builders.appendResourceMetrics(rm);
    if (builders.bytes > BATCH_MIB * 2 ** 20) break;
    exports.push(rm);
  }
}
await source.shutdown();
const columns = () => {
  const builders = new MetricColumnBuilders();
  for (const rm of exports) builders.appendResourceMetrics(rm);
  return builders.seal();
};

/**
 * This thread's CPU time, ms (process.threadCpuUsage: Node ≥ 23.9), brought up to date first
 * (process.cpuUsage(): see bench/lib/loop-delay.ts, schedstat).
 */
const threadCpu = () => {
  process.cpuUsage();
  const u = (process as unknown as { threadCpuUsage(): NodeJS.CpuUsage }).threadCpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * The longest gap between ticks of a setImmediate loop while `work` runs, in this thread's CPU
 * time (a busy machine's waits for a core left out) and wall time.
 */
async function longestTurn<T>(
  work: () => Promise<T>,
): Promise<{ value: T; longest: number; longestWall: number; millis: number }> {
  let running = true;
  let last = threadCpu();
  let lastWall = performance.now();
  let longest = 0;
  let longestWall = 0;
  const tick = () => {
    const now = threadCpu();
    const wall = performance.now();
    longest = Math.max(longest, now - last);
    longestWall = Math.max(longestWall, wall - lastWall);
    last = now;
    lastWall = wall;
    if (running) setImmediate(tick);
  };
  const start = performance.now();
  last = threadCpu();
  lastWall = start;
  setImmediate(tick);
  const value = await work();
  const millis = performance.now() - start;
  running = false;
  return { value, longest, longestWall, millis };
}

const sliced = createBodyMaker({
  body: 'parquet',
  signal: 'metrics',
  compression: 'zstd',
  level: 3,
});
const worker = createBodyMaker({
  body: 'parquet',
  signal: 'metrics',
  compression: 'zstd',
  level: 3,
  parquetThread: 'worker',
});
const rows = (columns() as unknown as { rows: number }).rows;
console.log(`batch: ${exports.length} exports, ${rows} rows; sliced runs in ${sliced.runsIn}`);
sliced.prepare?.();
await new Promise((r) => setTimeout(r, 200));
for (let round = 0; round < ROUNDS; round++) {
  const ca = columns();
  const a = await longestTurn(() =>
    sliced.make({ columns: ca, framing: null, sha256: true, crc32: true }),
  );
  const cb = columns();
  const b = await longestTurn(() =>
    worker.make({ columns: cb, framing: null, sha256: true, crc32: true }),
  );
  let first = -1;
  for (let i = 0; i < a.value.body.length; i++) {
    if (a.value.body[i] !== b.value.body[i]) {
      first = i;
      break;
    }
  }
  console.log(
    JSON.stringify({
      round,
      slicedLongestCpuMs: +a.longest.toFixed(2),
      slicedLongestWallMs: +a.longestWall.toFixed(2),
      slicedMs: +a.millis.toFixed(1),
      workerLongestCpuMs: +b.longest.toFixed(2),
      workerMs: +b.millis.toFixed(1),
      bytes: a.value.body.length,
      firstDiff: first,
      same: Buffer.compare(a.value.body, b.value.body) === 0 && a.value.sha256 === b.value.sha256,
    }),
  );
}
await sliced.close();
await worker.close();
