/**
 * A service with one metrics exporter, run as a user runs it: bench/children/footprint-service.mjs
 * in a fresh process of plain Node.js on the built package (dist/), exporting a counter and a
 * histogram every second into a local sink that answers every request with 200. Shared by the
 * footprint suite and the Parquet suite's process-level row.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jsonLine, runNode, runTs } from './child.js';
import type { Target } from './result.js';
import { median } from './stats.js';

/** none: an exporter that discards; otlp-http: the OpenTelemetry exporter; the rest: ours. */
export type ServiceMode = 'none' | 'otlp-http' | 'otlp-json' | 'otlp-proto' | 'parquet';

export interface ServiceRun {
  mode: ServiceMode;
  series: number;
  seconds: number;
  rssBeforeImport: number;
  imported: { rss: number; cpuMillis: number };
  threadsAfterConstruction?: number;
  threadsAtEnd?: number;
  /** process.memoryUsage() and the resident size of each V8 heap space at the end, before shutdown. */
  memoryAtEnd?: {
    rss: number;
    heapTotal: number;
    heapUsed: number;
    external: number;
    arrayBuffers: number;
    spaces: Record<string, number>;
    /** Resident bytes by kind of mapping (/proc/self/smaps; Linux only). */
    resident?: {
      v8Pages: number;
      mallocMain: number;
      mallocThreads: number;
      otherAnonymous: number;
      files: number;
    };
  };
  cpuMillis: number;
  shutdownMillis: number;
  /** The kernel's resident high-water mark (VmHWM) after shutdown, startup included. */
  highWaterMark?: number;
  /** RSS every 100 ms from the first recording, the last one after shutdown. */
  samples: { t: number; rss: number }[];
  uploaded?: { batches: number; points: number; dropped: number };
  /** SIGNALS=all, ours: what the span and log record exporters stored and dropped. */
  signals?: Partial<Record<'spans' | 'logs', { batches: number; items: number; dropped: number }>>;
}

export interface Sink {
  url: string;
  /** Bytes received so far. */
  bytes(): number;
  server: Server;
}

/** The local sink: takes every request (OTLP/HTTP POSTs, S3 PUTs) and answers 200. */
export async function startSink(): Promise<Sink> {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', etag: '"footprint"' });
      res.end(req.method === 'POST' ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bytes: () => bytes, server };
}

/** `npm run build`: the service loads dist/. */
export async function buildDist(): Promise<void> {
  const built = await runTs('scripts/build.ts', { capMillis: 600_000 });
  if (built.code !== 0) throw new Error(`npm run build failed: ${built.stderr}`);
}

/** One run of a service in `mode` with `series` series of each instrument for `seconds`. */
export async function runService(
  sink: Sink,
  mode: ServiceMode,
  series: number,
  seconds: number,
  env: Record<string, string> = {},
): Promise<ServiceRun> {
  const run = await runNode('bench/children/footprint-service.mjs', {
    env: { ...env, MODE: mode, SERIES: String(series), SECONDS: String(seconds), SINK: sink.url },
    capMillis: (seconds + 120) * 1000,
  });
  const line = jsonLine<{ footprint: ServiceRun }>(run, 'footprint');
  if (line === undefined)
    throw new Error(`${mode} (${series} series) failed: ${run.stderr.trim()}`);
  return line.footprint;
}

/**
 * The run's true peak: the kernel's high-water mark (VmHWM), which also sees the peaks shorter
 * than a sample's 100 ms (the encode of a batch is one); the highest sample where it is missing.
 */
export const highWater = (run: ServiceRun): number =>
  Math.max(run.highWaterMark ?? 0, ...run.samples.map((s) => s.rss));

/** The highest RSS sample of a run, shutdown included. */
export const peakRss = (run: ServiceRun): number => Math.max(...run.samples.map((s) => s.rss));

/** RSS at the end of the run: the median of the samples of its last `share` (before shutdown). */
export function settledRss(run: ServiceRun, share: number): number {
  const from = run.seconds * 1000 * (1 - share);
  const last = run.samples.filter((s) => s.t >= from && s.t <= run.seconds * 1000);
  return median(last.map((s) => s.rss));
}

/** The modes that run this package's exporter (the others are baselines). */
export const isOurs = (mode: ServiceMode): boolean =>
  mode === 'otlp-json' || mode === 'otlp-proto' || mode === 'parquet';

/**
 * Why a run of ours is not a run of the whole work, or undefined: it dropped data, uploaded no
 * batch, or did not report what it uploaded (for SIGNALS=all, its span and log record exporters
 * too). Such a run did less than the baseline beside it, so its memory and CPU figures flatter it.
 */
export function lossOf(run: ServiceRun): string | undefined {
  if (!isOurs(run.mode)) return undefined;
  const u = run.uploaded;
  if (u === undefined) return 'metrics: no report';
  if (u.dropped > 0) return `metrics: ${u.dropped} points dropped`;
  if (u.batches === 0) return 'metrics: no batch uploaded';
  if (run.signals === undefined) return undefined;
  for (const signal of ['spans', 'logs'] as const) {
    const s = run.signals[signal];
    if (s === undefined) return `${signal}: no report`;
    if (s.dropped > 0) return `${signal}: ${s.dropped} dropped`;
    if (s.batches === 0) return `${signal}: no batch uploaded`;
  }
  return undefined;
}

/**
 * A required target: every run of ours uploaded its data and dropped nothing. The memory and CPU
 * targets compare runs of ours with baselines that did all their work; a run that lost data must
 * fail the suite, not leave a warning beside a PASS.
 */
export function noLossTarget(runs: readonly ServiceRun[]): Target {
  const ours = runs.filter((r) => isOurs(r.mode));
  const lossy = ours.flatMap((r) => {
    const why = lossOf(r);
    return why === undefined ? [] : [`${r.mode} (${r.series} series): ${why}`];
  });
  return {
    name: 'every run of ours uploaded its batches and dropped nothing (the figures are of all the work)',
    measured:
      ours.length === 0
        ? 'no run of ours'
        : lossy.length === 0
          ? `all ${ours.length} runs`
          : `${lossy.length} of ${ours.length} runs: ${lossy.join('; ')}`,
    threshold: 'every run',
    pass: ours.length > 0 && lossy.length === 0,
    required: true,
  };
}
