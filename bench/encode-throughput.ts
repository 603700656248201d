/**
 * Encode and buffer: data points per second through exporter.export() (encoding plus the append
 * under the mutex; batches seal and are compressed off this thread), beside the official
 * JsonMetricsSerializer and ProtobufMetricsSerializer on the same ResourceMetrics, same rounds.
 * Rates are per second of the calling thread's own CPU time (process.threadCpuUsage, Node ≥
 * 23.9), so other processes on the machine and the compression on libuv's pool do not land on
 * either side; wall-clock rates are shown beside them (and used where the runtime has no
 * per-thread CPU time).
 */
import { JsonMetricsSerializer, ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { S3MetricExporter } from '../src/index.js';
import { countDataPoints } from '../src/signals/metrics/export.js';
import { resourceMetricsToJsonBytes } from '../src/signals/metrics/otlp-json.js';
import { exportOnce } from './lib/export-once.js';
import { fmtMs, fmtNum, fmtPct, fmtRate } from './lib/format.js';
import { gcMillisWithin, stopGcObserver } from './lib/gc-time.js';
import { compareJson, compareProto } from './lib/otlp-compare.js';
import { realisticSource } from './lib/realistic-metrics.js';
import { emitResult, parseArgs, progress, type Table, type Target } from './lib/result.js';
import { collectGarbage, type Summary, summarize } from './lib/stats.js';
import { StubS3 } from './lib/stub-s3.js';
import { CALLING_THREAD_CPU, callingThreadCpuMicros } from './lib/thread-cpu.js';

const args = parseArgs(process.argv.slice(2));
const SIZES = [10_000, 100_000];
const ROUNDS = args.quick ? 3 : 7;
/** Operations of each contender per round: about 1 s of work at 10k series, two exports at 100k. */
const opsFor = (series: number) => Math.max(2, Math.round(100_000 / series));
const NO_SEAL = 2 ** 40;

type Contender = 'ours-json' | 'ours-proto' | 'official-json' | 'official-proto';
const CONTENDERS: Contender[] = ['ours-json', 'ours-proto', 'official-json', 'official-proto'];

/**
 * An exporter as configured in production (zstd, default maxBatchBytes): batches seal while
 * timed and go to the compression worker, off this thread, and to a stub S3 that answers at
 * once. What is timed is what export() costs the caller's thread; flushing is untimed.
 */
function bufferingExporter(format: 'otlp-json' | 'otlp-proto', s3: StubS3): S3MetricExporter {
  return new S3MetricExporter({
    bucket: 'bench',
    s3Client: s3.client,
    format,
    maxBufferedBytes: NO_SEAL,
    maxBatchAgeMillis: 2 ** 31 - 1,
  });
}

/** For the equivalence check: one uncompressed object holding exactly one export. */
function storingExporter(format: 'otlp-json' | 'otlp-proto', s3: StubS3): S3MetricExporter {
  return new S3MetricExporter({
    bucket: 'bench',
    s3Client: s3.client,
    format,
    compression: 'none',
    maxBatchBytes: NO_SEAL,
    maxBufferedBytes: NO_SEAL,
    maxBatchAgeMillis: 2 ** 31 - 1,
  });
}

interface Sample {
  seconds: number;
  /** The calling thread's CPU time; undefined where the runtime cannot tell. */
  cpuSeconds: number | undefined;
  gcMillis: number;
}

/** The calling thread's CPU time in seconds (exact: callingThreadCpuMicros), or undefined (Node < 23.9). */
const threadCpuSeconds = (): number | undefined => {
  const micros = callingThreadCpuMicros();
  return micros === undefined ? undefined : micros / 1e6;
};
const CPU_TIMED = CALLING_THREAD_CPU;

let sink = 0; // keeps the official serializers' output alive, so nothing is optimized away

const isOurs = (c: Contender): c is 'ours-json' | 'ours-proto' =>
  c === 'ours-json' || c === 'ours-proto';

/**
 * One round: `ops` operations of every contender, interleaved one by one (the order rotated at
 * every step), each timed on its own and summed per contender. The machine has slow spells that
 * last longer than an export (the same encode takes 16 ms, then 28 ms for a second or so), and
 * the thread's CPU clock ticks every few milliseconds: interleaving puts every spell on all
 * sides of a ratio, where back-to-back samples of 10 exports each let one side catch it alone.
 */
async function round(
  order: readonly Contender[],
  rm: ResourceMetrics,
  ops: number,
): Promise<Record<Contender, Sample>> {
  await collectGarbage();
  const exporters = new Map<Contender, S3MetricExporter>();
  for (const c of order) {
    if (!isOurs(c)) continue;
    const exporter = bufferingExporter(
      c === 'ours-json' ? 'otlp-json' : 'otlp-proto',
      new StubS3(),
    );
    // A running service's exporter: its encoder has seen an export like this one (the buffer
    // sizing follows the previous export). Untimed.
    await exportOnce(exporter, rm);
    await exporter.forceFlush();
    exporters.set(c, exporter);
  }
  const windows = new Map<Contender, Array<[number, number]>>(order.map((c) => [c, []]));
  const wall = new Map<Contender, number>(order.map((c) => [c, 0]));
  const cpu = new Map<Contender, number>(order.map((c) => [c, 0]));
  for (let i = 0; i < ops; i++) {
    for (let k = 0; k < order.length; k++) {
      const c = order[(k + i) % order.length] as Contender;
      const exporter = exporters.get(c);
      const started = performance.now();
      const cpuStarted = threadCpuSeconds() ?? 0;
      if (exporter !== undefined) await exportOnce(exporter, rm);
      else if (c === 'official-json')
        sink += JsonMetricsSerializer.serializeRequest(rm)?.length ?? 0;
      else sink += ProtobufMetricsSerializer.serializeRequest(rm)?.length ?? 0;
      const cpuEnded = threadCpuSeconds() ?? 0;
      const ended = performance.now();
      windows.get(c)?.push([started, ended]);
      wall.set(c, (wall.get(c) ?? 0) + (ended - started) / 1000);
      cpu.set(c, (cpu.get(c) ?? 0) + cpuEnded - cpuStarted);
    }
  }
  const gcMillis = await gcMillisWithin(windows);
  for (const exporter of exporters.values()) {
    await exporter.shutdown(); // untimed: the last batch is compressed and "uploaded" to the stub
    const stats = exporter.stats();
    if (stats.pointsDropped > 0 || stats.exportsRejected > 0) throw new Error('data was dropped');
  }
  return Object.fromEntries(
    order.map((c) => [
      c,
      {
        seconds: wall.get(c) ?? 0,
        cpuSeconds: CPU_TIMED ? cpu.get(c) : undefined,
        gcMillis: gcMillis.get(c) ?? 0,
      },
    ]),
  ) as Record<Contender, Sample>;
}

/** What our exporter stores for `rm` (compression none), to compare with the official output. */
async function storedObject(format: 'otlp-json' | 'otlp-proto', rm: ResourceMetrics) {
  const s3 = new StubS3(0, true);
  const exporter = storingExporter(format, s3);
  await exportOnce(exporter, rm);
  await exporter.shutdown();
  const body = s3.puts[0]?.body;
  if (body === undefined || s3.puts.length !== 1) throw new Error('expected exactly one object');
  return body;
}

/** Our JSON encoder alone (no batching, no mutex), ms per export: what export() adds is the rest. */
function jsonEncodeMillis(rm: ResourceMetrics): number {
  const t0 = performance.now();
  sink += resourceMetricsToJsonBytes(rm).length;
  return performance.now() - t0;
}

interface SizeResult {
  series: number;
  points: number;
  opsPerSample: number;
  /** Per second of the calling thread's CPU where measured, else wall clock. */
  pointsPerSecond: Record<Contender, Summary>;
  wallPointsPerSecond: Record<Contender, Summary>;
  /** ours / official, each round's two samples paired (they ran minutes apart at most). */
  pairedRatio: { json: Summary; proto: Summary };
  wallRatio: { json: Summary; proto: Summary };
  gcShare: Record<Contender, number>;
  jsonBytes: number;
  equivalence: { json: string; proto: string };
  jsonEncodeMillis: number;
}

const fmtRatio = (s: Summary) =>
  `${s.median.toFixed(2)}× (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;

const results: SizeResult[] = [];
for (const series of SIZES) {
  progress(`encode: building ${series} series`);
  const source = realisticSource(series);
  source.record();
  const rm = await source.collect();
  const points = countDataPoints(rm);
  const ops = opsFor(series);

  progress('encode: checking our output against the official serializers');
  const jsonObject = await storedObject('otlp-json', rm);
  const json = compareJson(jsonObject, rm) ?? 'same data';
  const proto = compareProto(await storedObject('otlp-proto', rm), rm) ?? 'same data';

  const rates: Record<Contender, number[]> = {
    'ours-json': [],
    'ours-proto': [],
    'official-json': [],
    'official-proto': [],
  };
  const wallRates: Record<Contender, number[]> = {
    'ours-json': [],
    'ours-proto': [],
    'official-json': [],
    'official-proto': [],
  };
  const gc: Record<Contender, number[]> = {
    'ours-json': [],
    'ours-proto': [],
    'official-json': [],
    'official-proto': [],
  };
  // Warm-up round (JIT, allocation sites), then the timed rounds.
  await round(CONTENDERS, rm, ops);
  for (let r = 0; r < ROUNDS; r++) {
    progress(`encode: ${series} series, round ${r + 1}/${ROUNDS}`);
    const samples = await round(CONTENDERS, rm, ops);
    for (const c of CONTENDERS) {
      const s = samples[c];
      rates[c].push((points * ops) / (s.cpuSeconds ?? s.seconds));
      wallRates[c].push((points * ops) / s.seconds);
      gc[c].push(s.gcMillis / 1000 / s.seconds);
    }
  }
  const paired = (ours: Contender, official: Contender, of = rates) =>
    summarize(of[ours].map((r, i) => r / (of[official][i] as number)));
  const summaries = (of: Record<Contender, number[]>) =>
    Object.fromEntries(CONTENDERS.map((c) => [c, summarize(of[c])])) as Record<Contender, Summary>;
  const encodes = Array.from({ length: 5 }, () => jsonEncodeMillis(rm));
  results.push({
    series,
    points,
    opsPerSample: ops,
    pointsPerSecond: summaries(rates),
    wallPointsPerSecond: summaries(wallRates),
    pairedRatio: {
      json: paired('ours-json', 'official-json'),
      proto: paired('ours-proto', 'official-proto'),
    },
    wallRatio: {
      json: paired('ours-json', 'official-json', wallRates),
      proto: paired('ours-proto', 'official-proto', wallRates),
    },
    gcShare: {
      'ours-json': summarize(gc['ours-json']).median,
      'ours-proto': summarize(gc['ours-proto']).median,
      'official-json': summarize(gc['official-json']).median,
      'official-proto': summarize(gc['official-proto']).median,
    },
    jsonBytes: jsonObject.length,
    equivalence: { json, proto },
    jsonEncodeMillis: summarize(encodes).median,
  });
  await source.shutdown();
}
stopGcObserver();

const LABEL: Record<Contender, string> = {
  'ours-json': 'ours, otlp-json (export())',
  'ours-proto': 'ours, otlp-proto (export())',
  'official-json': 'official JsonMetricsSerializer',
  'official-proto': 'official ProtobufMetricsSerializer',
};
const table: Table = {
  columns: [
    'series',
    'contender',
    CPU_TIMED ? "points/s of the thread's CPU (median)" : 'points/s (median)',
    'spread',
    CPU_TIMED ? 'CPU ms per export' : 'ms per export',
    'points/s wall clock',
    'GC share',
  ],
  rows: results.flatMap((r) =>
    CONTENDERS.map((c) => {
      const s = r.pointsPerSecond[c];
      return [
        fmtNum(r.series),
        LABEL[c],
        fmtRate(s.median),
        fmtPct(s.spreadPct),
        fmtMs((r.points / s.median) * 1000),
        fmtRate(r.wallPointsPerSecond[c].median),
        `${(r.gcShare[c] * 100).toFixed(0)}%`,
      ];
    }),
  ),
};
const ratioTable: Table = {
  columns: [
    'series',
    'JSON object',
    'ours-json / official-json (rounds)',
    'ours-proto / official-proto (rounds)',
    'json, wall clock',
    'equivalence (json, proto)',
    'our JSON encoder alone, per export',
  ],
  rows: results.map((r) => [
    fmtNum(r.series),
    `${fmtNum(r.jsonBytes / 1024 / 1024)} MiB`,
    fmtRatio(r.pairedRatio.json),
    fmtRatio(r.pairedRatio.proto),
    fmtRatio(r.wallRatio.json),
    `${r.equivalence.json === 'same data' ? 'same' : 'DIFFERS'}, ${r.equivalence.proto === 'same data' ? 'same' : 'DIFFERS'}`,
    fmtMs(r.jsonEncodeMillis),
  ]),
};
const targets: Target[] = [
  ...results.map((r) => {
    const ratio = r.pairedRatio.json.median;
    return {
      name: `encode+buffer ${fmtNum(r.series)} series: ours-json vs official JSON serializer`,
      measured: `${ratio.toFixed(2)}× ${CPU_TIMED ? "of the calling thread's CPU " : ''}(rounds ${r.pairedRatio.json.min.toFixed(2)}–${r.pairedRatio.json.max.toFixed(2)}×; ${fmtRate(r.pointsPerSecond['ours-json'].median)} vs ${fmtRate(r.pointsPerSecond['official-json'].median)}); wall clock ${r.wallRatio.json.median.toFixed(2)}×`,
      threshold: '≥ 2×',
      pass: ratio >= 2,
    };
  }),
  ...results.map((r) => ({
    name: `output equivalence ${fmtNum(r.series)} series (json, proto vs official)`,
    measured: `${r.equivalence.json}; ${r.equivalence.proto}`,
    threshold: 'same data',
    pass: r.equivalence.json === 'same data' && r.equivalence.proto === 'same data',
    required: true,
  })),
];
for (const r of results) {
  if (r.equivalence.json !== 'same data')
    console.error(`FAILURE: JSON differs: ${r.equivalence.json}`);
  if (r.equivalence.proto !== 'same data')
    console.error(`FAILURE: protobuf differs: ${r.equivalence.proto}`);
}
emitResult({
  suite: 'encode',
  title: 'Encode and buffer (export() vs official serializers, same input, same run)',
  tables: [table, ratioTable],
  targets,
  notes: [
    "Ratios: median of the per-round ratios, with the lowest and highest round. A round interleaves the contenders export by export (the order rotated at every step) and sums each one's time, so a slow spell of the machine, which lasts longer than an export, lands on both sides of a ratio.",
    CPU_TIMED
      ? "Rates per second of the calling thread's own CPU time (process.threadCpuUsage): what export() and the serializers cost the service's thread, unaffected by other processes and by the compression running on libuv's pool meanwhile. Wall-clock rates and ratio beside them."
      : 'Rates per second of wall-clock time (this runtime has no process.threadCpuUsage).',
    'Our samples time a running exporter: one export of the same input done and flushed before the clock starts.',
    `${ROUNDS} rounds after a warm-up round; each round is ${results.map((r) => `${r.opsPerSample} export(s) of every contender at ${fmtNum(r.series)}`).join(', ')}; spread = (max − min) / median over the rounds.`,
    'GC share: time in GC pauses (perf_hooks "gc" entries) over the timed time.',
    `sink ${sink > 0 ? 'ok' : 'empty'}`,
  ],
  data: { rounds: ROUNDS, results },
});
