// @ts-check
/**
 * Child process of bench/footprint.ts: a service with one metrics exporter (MODE), recording
 * SERIES series of a counter and a histogram and exporting every second for SECONDS, then shut
 * down. Plain JavaScript on plain Node.js, loading the built package (dist/), as a user runs it:
 * no TypeScript loader in the process. Prints one JSON line: RSS every 100 ms, CPU during the
 * run, what the import cost, the threads of the process, its resident high-water mark.
 *
 *   MODE: none (an exporter that discards) | otlp-http (the OpenTelemetry OTLP/HTTP exporter)
 *         | otlp-json | otlp-proto | parquet (ours, that format, default options)
 *   SINK: the local HTTP server that takes what is sent (OTLP or S3 PUTs) and answers 200.
 *   SIGNALS=all: spans and log records too, each with its exporter of MODE (ours: one
 *         S3Exporters for the three signals), bench/children/footprint-signals.mjs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { footprintTraffic, highWaterMark } from './footprint-traffic.mjs';

const MODE = process.env.MODE ?? 'none';
const SERIES = Number(process.env.SERIES ?? 200);
const SECONDS = Number(process.env.SECONDS ?? 10);
const SINK = process.env.SINK ?? 'http://127.0.0.1:1';
const PACKAGE = process.env.PACKAGE ?? '../../dist/index.js';
/** Ours only: maxBatchAgeMillis, when given (a busy service seals by size every few seconds). */
const MAX_BATCH_AGE_MILLIS =
  process.env.MAX_BATCH_AGE_MILLIS === undefined
    ? undefined
    : Number(process.env.MAX_BATCH_AGE_MILLIS);
const SAMPLE_MILLIS = 100;
const EXPORT_MILLIS = 1_000;
/** How often every series is recorded (each export carries the aggregate of the second). */
const RECORD_MILLIS = Number(process.env.RECORD_MILLIS ?? EXPORT_MILLIS);

const cpuMillis = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const threads = () =>
  process.platform === 'linux' ? readdirSync('/proc/self/task').length : undefined;

/**
 * Where the resident memory is, from /proc/self/smaps (Linux; undefined elsewhere), in bytes:
 * V8's heap pages (anonymous mappings of its 256 KiB page size), glibc's main heap (`[heap]`:
 * malloc on the main thread, ArrayBuffers included), glibc's thread arenas (anonymous mappings
 * that start on a 64 MiB boundary and span 64 MiB with their reserved tail), the rest of the
 * anonymous memory (large malloc chunks mapped on their own, stacks), and files (code).
 */
function residentByKind() {
  if (process.platform !== 'linux') return undefined;
  const KiB = 1024;
  const ARENA = 64 * KiB * KiB;
  /** @type {{ start: bigint, bytes: number, name: string, rss: number }[]} */
  const maps = [];
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) {
      const start = BigInt(`0x${m[1]}`);
      maps.push({ start, bytes: Number(BigInt(`0x${m[2]}`) - start), name: m[3] ?? '', rss: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    const last = maps[maps.length - 1];
    if (rss && last) last.rss = Number(rss[1]) * KiB;
  }
  const kinds = { v8Pages: 0, mallocMain: 0, mallocThreads: 0, otherAnonymous: 0, files: 0 };
  maps.forEach((map, i) => {
    const next = maps[i + 1];
    const arena =
      map.start % BigInt(ARENA) === 0n &&
      (map.bytes === ARENA || (next !== undefined && map.bytes + next.bytes === ARENA));
    if (map.name === '[heap]') kinds.mallocMain += map.rss;
    else if (map.name.startsWith('/')) kinds.files += map.rss;
    else if (map.name !== '')
      kinds.otherAnonymous += map.rss; // [stack], [vdso], ...
    else if (map.bytes === 256 * KiB) kinds.v8Pages += map.rss;
    else if (arena) kinds.mallocThreads += map.rss;
    else kinds.otherAnonymous += map.rss;
  });
  return kinds;
}

const rssBeforeImport = process.memoryUsage().rss;
const cpuBeforeImport = cpuMillis();

/**
 * The exporter of MODE, made after its module is imported (that import is what is timed).
 * @param {string} mode @returns {Promise<import('@opentelemetry/sdk-metrics').PushMetricExporter>}
 */
async function exporterOf(mode) {
  if (mode === 'none') {
    return {
      export: (/** @type {unknown} */ _metrics, /** @type {(r: { code: 0 }) => void} */ done) =>
        done({ code: 0 }),
      forceFlush: async () => {},
      shutdown: async () => {},
    };
  }
  if (mode === 'otlp-http') {
    const { OTLPMetricExporter } = await import('@opentelemetry/exporter-metrics-otlp-http');
    return new OTLPMetricExporter({ url: `${SINK}/v1/metrics` });
  }
  const { S3MetricExporter } = await import(PACKAGE);
  return new S3MetricExporter({
    bucket: 'footprint',
    endpoint: SINK,
    region: 'us-east-1',
    credentials: { accessKeyId: 'FOOTPRINTACCESSKEY00', secretAccessKey: 'footprint-secret' },
    format: mode,
    ...(MAX_BATCH_AGE_MILLIS === undefined ? {} : { maxBatchAgeMillis: MAX_BATCH_AGE_MILLIS }),
  });
}

// SIGNALS=all: a tracer and a logger provider beside the meter provider (ours: one S3Exporters).
const signals =
  process.env.SIGNALS === 'all'
    ? await (await import('./footprint-signals.mjs')).startSignals(MODE, SINK, PACKAGE)
    : undefined;
const exporter = signals?.metricExporter ?? (await exporterOf(MODE));
const imported = {
  rss: process.memoryUsage().rss - rssBeforeImport,
  cpuMillis: cpuMillis() - cpuBeforeImport,
};
// Counted once startup's short-lived threads are gone: importing node:tls (for https) runs one
// for a few milliseconds in every process that loads it.
await new Promise((resolve) => setTimeout(resolve, 500));
const threadsAfterConstruction = threads();

const provider = new MeterProvider({
  readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: EXPORT_MILLIS })],
});
const recordSeries = footprintTraffic(provider.getMeter('footprint'), SERIES);
const record = () => {
  recordSeries();
  signals?.record();
};

const samples = [];
const started = performance.now();
const cpuAtStart = cpuMillis();
record();
const recorder = setInterval(record, RECORD_MILLIS);
const sampler = setInterval(() => {
  samples.push({ t: Math.round(performance.now() - started), rss: process.memoryUsage().rss });
}, SAMPLE_MILLIS);
await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
clearInterval(recorder);
const threadsAtEnd = threads();
// What the RSS at the end is made of, as far as V8 tells: its heap spaces (resident) and the
// memory outside its heap that it accounts for (ArrayBuffers, the rest of `external`).
const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
const spaces = Object.fromEntries(
  getHeapSpaceStatistics().map((s) => [s.space_name, s.physical_space_size]),
);
const memoryAtEnd = {
  rss,
  heapTotal,
  heapUsed,
  external,
  arrayBuffers,
  spaces,
  resident: residentByKind(),
};
const shutdownStarted = performance.now();
await Promise.all([provider.shutdown(), signals?.shutdown()]);
const shutdownMillis = performance.now() - shutdownStarted;
clearInterval(sampler);
samples.push({ t: Math.round(performance.now() - started), rss: process.memoryUsage().rss });
const withStats =
  /** @type {{ stats?: () => { batchesUploaded: number, pointsUploaded: number, pointsDropped: number } }} */ (
    /** @type {unknown} */ (exporter)
  );
const stats = withStats.stats?.();

console.log(
  JSON.stringify({
    footprint: {
      mode: MODE,
      series: SERIES,
      seconds: SECONDS,
      node: process.version,
      rssBeforeImport,
      imported,
      threadsAfterConstruction,
      threadsAtEnd,
      memoryAtEnd,
      cpuMillis: cpuMillis() - cpuAtStart,
      shutdownMillis,
      highWaterMark: highWaterMark(),
      samples,
      uploaded:
        stats === undefined
          ? undefined
          : {
              batches: stats.batchesUploaded,
              points: stats.pointsUploaded,
              dropped: stats.pointsDropped,
            },
      signals: signals?.stats(),
    },
  }),
);
process.exit(0);
