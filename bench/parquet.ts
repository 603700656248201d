/**
 * `format: 'parquet'` against OTLP/JSON + zstd, side by side in one run on the realistic data
 * (bench/lib/realistic-metrics.ts: 15 resource attributes), each figure a ratio held to issue 18's
 * targets:
 *  1. A day of three services exporting once a minute, written by the real S3MetricExporter
 *     (partitionTime 'data') into a local directory that mirrors the bucket, at each format's
 *     default batch age (FORMAT_ROWS[format].maxBatchAgeMillis: Parquet 10 min, OTLP 1 min) and
 *     hourly: stored bytes per data point (OTLP/protobuf + zstd beside them).
 *  2. "Sum of a counter by service and hour" in DuckDB over that day: read_parquet against
 *     read_json on the .json.zst objects as stored; every answer must equal the generator's.
 *  3. CPU per data point from export() to the uploaded body, per kind of thread (main, the body
 *     worker, libuv's pool, V8's helpers), in a small child process per format
 *     (bench/children/parquet-cpu.ts: the real exporter into a stub S3), at a 10-minute batch of
 *     one service and at a batch ten times larger; and the main thread's share in export().
 *  4. The body worker's peak heap growth while it makes one file (src/body/body-worker.js,
 *     given sealed columns as the exporter gives them), against the batch's buffered bytes (the
 *     builders' bytes: what maxBufferedBytes and the stats count).
 *  5. Event-loop stall while a 16 MiB batch (the builders' bytes) is sealed, made into Parquet in
 *     the worker and uploaded (stub S3 and the real server).
 *  6. Export into the real S3 server (S3_ENDPOINT): data points per second.
 *  7. A process-level row: peak RSS of a service with 5,000 series per format, one fresh process of
 *     plain Node.js on dist/ each (the footprint suite's service, bench/lib/footprint-service.ts).
 */
import { rmSync } from 'node:fs';
import { mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { DuckDBInstance } from '@duckdb/node-api';
import type { HrTime } from '@opentelemetry/api';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import type { MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { requireZstdEngine } from '../src/compression/zstd-engine.js';
import { S3MetricExporter } from '../src/index.js';
import { type Compression, FORMAT_ROWS, type Format } from '../src/layout/formats.js';
import { countDataPoints } from '../src/signals/metrics/export.js';
import { MetricColumnBuilders } from '../src/signals/metrics/parquet/column-builders.js';
import type { CpuJob, CpuResult } from './children/parquet-cpu.js';
import { jsonLine, runTs } from './lib/child.js';
import { DirectoryS3 } from './lib/directory-s3.js';
import { exportAllTimed, exportOnce, shutdownLossless } from './lib/export-once.js';
import {
  buildDist,
  highWater,
  noLossTarget,
  peakRss,
  runService,
  type ServiceMode,
  type ServiceRun,
  startSink,
} from './lib/footprint-service.js';
import { fmtInt, fmtMiB, fmtMs, fmtNum, fmtPct, fmtRate, MiB } from './lib/format.js';
import { type DelayReport, schedstatWorks, sleep, startDelayProbe } from './lib/loop-delay.js';
import { type RealisticSource, realisticSource } from './lib/realistic-metrics.js';
import { emitResult, parseArgs, progress, type Table, type Target } from './lib/result.js';
import {
  benchBucket,
  benchClient,
  listedBytes,
  removeBenchBucket,
  S3_SKIP_REASON,
  s3Env,
} from './lib/s3-env.js';
import { collectGarbage, median, summarize } from './lib/stats.js';
import { StubS3 } from './lib/stub-s3.js';
import {
  THREAD_KINDS,
  type ThreadCpu,
  threadCpuBetween,
  threadSnapshot,
  totalCpu,
} from './lib/thread-groups.js';

const args = parseArgs(process.argv.slice(2));
const suiteStarted = performance.now();

// Issue 18's targets, each a ratio against OTLP/JSON + zstd in this run.
/** CPU per point to make the body (every thread), Parquet / OTLP/JSON + zstd. */
const BODY_CPU_RATIO = 2;
const BODY_CPU_STRETCH = 1;
/** The main thread's CPU per point in export(), Parquet / OTLP/JSON. */
const EXPORT_CPU_RATIO = 1.2;
/** The worker's heap growth while it makes one file, × the batch's buffered bytes. */
const HEAP_FACTOR = 2;
/** Points/s into the real S3 server, Parquet / OTLP/JSON + zstd. */
const THROUGHPUT_RATIO = 0.5;
/** Bytes per point at the default batch ages, Parquet / OTLP/JSON + zstd. */
const BYTES_RATIO = 0.4;
/** DuckDB over the day at the defaults: read_json time / read_parquet time, as before (5.5–6.1×). */
const QUERY_SPEEDUP = 5.5;
/** Main-thread CPU within the longest stall of a 16 MiB batch's flush. */
const STALL_MILLIS = 5;
/** Peak RSS of a 5,000-series service, Parquet above the default format, in decimal MB. */
const RSS_SLACK_MB = 24;

/** The simulated day: 2026-12-01 UTC, one export per service per minute. */
const DAY_START = Date.UTC(2026, 11, 1);
const HOURS = args.quick ? 4 : 24;
const MINUTES = HOURS * 60;
/** Three services of different sizes (series = data points per export). */
const SERVICES = [
  { name: 'checkout-api', namespace: 'checkout', series: 300, seed: 21 },
  { name: 'payments-api', namespace: 'payments', series: 200, seed: 22 },
  { name: 'catalog-api', namespace: 'catalog', series: 100, seed: 23 },
];
const COUNTER = 'http.server.requests';
const QUERY_ROUNDS = args.quick ? 3 : 5;
/** Fewer for the hourly layout: DuckDB takes seconds over its large JSON objects. */
const HOURLY_QUERY_ROUNDS = args.quick ? 2 : 3;

/** CPU per point: batches of ten collections (a 10-minute batch of 1-minute exports). */
const CPU_SIZES = [
  { label: "a 10-minute batch of the day's largest service", series: 300 },
  { label: 'a batch ten times larger', series: 3_000 },
];
const CPU_EXPORTS_PER_BATCH = 10;
const CPU_ROUNDS = args.quick ? 1 : 3;
/** Each child measures batches until all its threads used this much CPU. */
const CPU_MIN_MILLIS = args.quick ? 1_000 : 3_000;

/** The large batch: exports of ~1,700 series while the builders hold at most 16 MiB. */
const BATCH_SERIES = 1_700;
const LARGE_BATCH_BYTES = 16 * MiB;
const DEFAULT_BATCH_BYTES = 8 * MiB;
const STALL_ROUNDS = args.quick ? 2 : 5;
const STUB_DELAY_MILLIS = 5;
const GAP_MILLIS = 1;
/** About as long as a Parquet flush of the 16 MiB batch under load: the noise floor of such a window. */
const IDLE_MILLIS = 1_000;
const MEMORY_ROUNDS = args.quick ? 1 : 3;
/** As createWorkerBodyMaker() starts the worker (src/body/worker-body-maker.ts). */
const WORKER_YOUNG_GENERATION_MB = 2;

/** As in the end-to-end suite. */
const S3_SERIES = 5_000;
const S3_EXPORTS = args.quick ? 8 : 24;
const S3_ROUNDS = args.quick ? 1 : 3;
const S3_BUFFER_BYTES = 256 * 1024 * 1024;

/** The process-level row: the footprint suite's heavy traffic. */
const SERVICE_SERIES = 5_000;
const SERVICE_SECONDS = 10;
const SERVICE_ROUNDS = args.quick ? 1 : 3;
const SERVICE_MODES: ServiceMode[] = ['none', 'otlp-json', 'parquet'];

const s3 = s3Env();
const zstdEngine = requireZstdEngine();

// ---------------------------------------------------------------------------------------------
// The data.

const toHr = (millis: number, subMillisNanos = 0): HrTime => [
  Math.floor(millis / 1000),
  (millis % 1000) * 1e6 + subMillisNanos,
];

/** The collection re-timed: every point ends at `endMillis`, its series started at `startMillis`. */
function atTime(
  rm: ResourceMetrics,
  resource: Resource,
  endMillis: number,
  startMillis: number,
): ResourceMetrics {
  const start = toHr(startMillis);
  return {
    resource,
    scopeMetrics: rm.scopeMetrics.map((sm) => ({
      ...sm,
      metrics: sm.metrics.map(
        (m) =>
          ({
            ...m,
            dataPoints: m.dataPoints.map((p) => ({
              ...p,
              startTime: start,
              // Keep the clock's digits below the millisecond.
              endTime: toHr(endMillis, p.endTime[1] % 1e6),
            })),
          }) as MetricData,
      ),
    })),
  };
}

interface Service {
  name: string;
  resource: Resource;
  /** Recorded and collected once a minute: cumulative values grow through the day. */
  source: RealisticSource;
  /** Seconds into each minute at which this service exports. */
  offsetSeconds: number;
}

async function serviceOf(s: (typeof SERVICES)[number], index: number): Promise<Service> {
  const source = realisticSource(s.series, s.seed);
  const base = (await source.collect()).resource.attributes;
  const pod = `${s.name}-7f9c6d5b8-${(index * 7919 + 12345).toString(36)}`;
  const resource = resourceFromAttributes({
    ...base,
    'service.name': s.name,
    'service.instance.id': `2b0a6f1e-8c1d-4e4f-9d7a-5f3c2a1b0c${index}0`,
    'k8s.namespace.name': s.namespace,
    'k8s.deployment.name': s.name,
    'k8s.pod.name': pod,
    'host.name': pod,
  });
  return { name: s.name, resource, source, offsetSeconds: 7 + 13 * index };
}

progress(`parquet: building ${SERVICES.length} services' data and a 16 MiB batch`);
const services = await Promise.all(SERVICES.map(serviceOf));

/**
 * The large batch: ~1 MiB exports as long as the builders of an open Parquet batch stay within
 * 16 MiB (what maxBatchBytes counts in Parquet mode: the arrays' capacity, which grows by
 * doubling); its first exports within 8 MiB are the default batch.
 */
const batchSource = realisticSource(BATCH_SERIES, 7);
const batchExports: ResourceMetrics[] = [];
/** The builders' bytes after each export of the large batch. */
const batchBytesAfter: number[] = [];
{
  const builders = new MetricColumnBuilders();
  for (;;) {
    batchSource.record();
    const rm = await batchSource.collect();
    builders.appendResourceMetrics(rm);
    if (builders.bytes > LARGE_BATCH_BYTES) break;
    batchExports.push(rm);
    batchBytesAfter.push(builders.bytes);
  }
}
await batchSource.shutdown();
const batchPoints = batchExports.reduce((n, rm) => n + countDataPoints(rm), 0);
/** The first exports of the large batch that make the default 8 MiB batch. */
const defaultBatchCount = batchBytesAfter.filter((b) => b <= DEFAULT_BATCH_BYTES).length;

interface Contender {
  key: 'parquet' | 'json-zstd' | 'proto-zstd';
  label: string;
  format: Format;
  compression: Compression;
}
const CONTENDERS: Contender[] = [
  { key: 'parquet', label: 'Parquet (ZSTD column chunks)', format: 'parquet', compression: 'zstd' },
  {
    key: 'json-zstd',
    label: 'OTLP JSON + zstd (.json.zst)',
    format: 'otlp-json',
    compression: 'zstd',
  },
  {
    key: 'proto-zstd',
    label: 'OTLP protobuf + zstd (.binpb.zst)',
    format: 'otlp-proto',
    compression: 'zstd',
  },
];
type ContenderKey = Contender['key'];
const contender = (key: ContenderKey) => CONTENDERS.find((c) => c.key === key) as Contender;

/** Every service exports once a minute: a batch age of n minutes seals an object every n exports. */
const EXPORT_INTERVAL_MILLIS = 60_000;
const exportsPerObject = (ageMillis: number) =>
  Math.max(1, Math.ceil(ageMillis / EXPORT_INTERVAL_MILLIS));
const ageText = (minutes: number) =>
  minutes % 60 === 0 ? `${minutes / 60} h` : `${fmtInt(minutes)} min`;
/** The exporter's default batch age of a contender's format (src/layout/formats.ts), in exports. */
const defaultMinutes = (c: Contender) => exportsPerObject(FORMAT_ROWS[c.format].maxBatchAgeMillis);
const DEFAULTS_LABEL = (() => {
  const parquet = defaultMinutes(contender('parquet'));
  const json = defaultMinutes(contender('json-zstd'));
  const proto = defaultMinutes(contender('proto-zstd'));
  const otlp =
    json === proto ? `OTLP ${ageText(json)}` : `JSON ${ageText(json)}, protobuf ${ageText(proto)}`;
  return `default batch ages (Parquet ${ageText(parquet)}, ${otlp})`;
})();

type LayoutKey = 'default' | 'hour';
interface Layout {
  key: LayoutKey;
  label: string;
  /** A contender's batch age in minutes: exports per object (all sealed at 8 MiB too). */
  minutes: (c: Contender) => number;
  contenders: ContenderKey[];
  /** Written to disk for the query; the others are only counted. */
  queried: ContenderKey[];
  /** Query rounds: fewer where DuckDB needs seconds for each large JSON object. */
  rounds: number;
}
const LAYOUTS: Layout[] = [
  {
    // What a user gets who sets only the format, at a 60 s export interval.
    key: 'default',
    label: DEFAULTS_LABEL,
    minutes: defaultMinutes,
    contenders: ['parquet', 'json-zstd', 'proto-zstd'],
    queried: ['parquet', 'json-zstd'],
    rounds: QUERY_ROUNDS,
  },
  {
    key: 'hour',
    label: 'hourly batches (1 h, ≤ 8 MiB)',
    minutes: () => 60,
    contenders: ['parquet', 'json-zstd', 'proto-zstd'],
    queried: ['parquet', 'json-zstd'],
    rounds: HOURLY_QUERY_ROUNDS,
  },
];
const layout = (key: LayoutKey) => LAYOUTS.find((l) => l.key === key) as Layout;

/**
 * One run of objects: a contender's exports sealed every `minutes` exports. Layouts that give a
 * contender the same batch age share its stream: written once, counted and queried once.
 */
interface Stream {
  key: string;
  contender: Contender;
  minutes: number;
  queried: boolean;
}
const streamKey = (k: ContenderKey, minutes: number) => `${k}@${minutes}min`;
const streamOf = (l: LayoutKey, k: ContenderKey) => streamKey(k, layout(l).minutes(contender(k)));
const STREAMS: Stream[] = [];
for (const l of LAYOUTS) {
  for (const k of l.contenders) {
    const key = streamOf(l.key, k);
    const known = STREAMS.find((s) => s.key === key);
    const queried = l.queried.includes(k);
    if (known !== undefined) known.queried ||= queried;
    else STREAMS.push({ key, contender: contender(k), minutes: l.minutes(contender(k)), queried });
  }
}
/** An earlier layout that has the same stream of a contender (its objects, written once). */
const sharedFrom = (l: LayoutKey, k: ContenderKey): Layout | undefined =>
  LAYOUTS.slice(0, LAYOUTS.indexOf(layout(l))).find(
    (o) => o.contenders.includes(k) && streamOf(o.key, k) === streamOf(l, k),
  );

// 1. A day of three services, stored in a local mirror by the real exporter, per batch age.

interface DayFigures {
  objects: number;
  points: number;
  storedBytes: number;
}

const root = await mkdtemp(join(tmpdir(), 'otel-s3-bench-parquet-'));
// The mirror holds a few hundred megabytes in a full run: removed even when the suite fails.
process.once('exit', () => rmSync(root, { recursive: true, force: true }));
const mirrorOf = (stream: string) => join(root, stream);
/** Expected answer, from the generator: key `${service}|${hour}`. */
const expected = new Map<string, { total: number; points: number }>();
/** Key: the stream's. */
const day = new Map<string, DayFigures>();
const dayOf = (l: LayoutKey, key: ContenderKey) => day.get(streamOf(l, key)) as DayFigures;

interface DayExporter {
  stream: Stream;
  exporter: S3MetricExporter;
}

{
  progress(
    `parquet: a day of ${HOURS} h × 60 min × ${services.length} services, ${STREAMS.length} streams (${STREAMS.map((s) => s.key).join(', ')}), into a local mirror`,
  );
  const sinks = new Map(
    STREAMS.map((s) => [s.key, new DirectoryS3(s.queried ? mirrorOf(s.key) : undefined)]),
  );
  const started = performance.now();
  const perService: DayExporter[][] = [];
  for (let si = 0; si < services.length; si++) {
    const list: DayExporter[] = [];
    for (const stream of STREAMS) {
      const c = stream.contender;
      const exporter = new S3MetricExporter({
        bucket: 'bench',
        prefix: 'lake',
        s3Client: (sinks.get(stream.key) as DirectoryS3).client,
        format: c.format,
        compression: c.compression,
        // Filed under the hour of the data, as a day of real exports would be.
        partitionTime: 'data',
        // Sealed by forceFlush() after every `stream.minutes` exports (what that batch age makes
        // of a 60 s export interval, without waiting for it), and by the default 8 MiB
        // maxBatchBytes.
        maxBatchAgeMillis: 2 ** 31 - 1,
        maxBufferedBytes: 256 * MiB,
        flushTimeoutMillis: 300_000,
      });
      list.push({ stream, exporter });
    }
    perService.push(list);
  }
  await Promise.all(
    services.map(async (s, si) => {
      const exporters = perService[si] ?? [];
      for (let m = 0; m < MINUTES; m++) {
        const end = DAY_START + m * 60_000 + s.offsetSeconds * 1000;
        s.source.record();
        const rm = atTime(await s.source.collect(), s.resource, end, DAY_START - 3_600_000);
        const hourIndex = Math.floor(end / 3_600_000);
        const e = expected.get(`${s.name}|${hourIndex}`) ?? { total: 0, points: 0 };
        for (const sm of rm.scopeMetrics) {
          for (const metric of sm.metrics) {
            if (metric.descriptor.name !== COUNTER) continue;
            for (const p of metric.dataPoints) {
              e.total += p.value as number;
              e.points++;
            }
          }
        }
        expected.set(`${s.name}|${hourIndex}`, e);
        for (const { exporter } of exporters) await exportOnce(exporter, rm);
        await Promise.all(
          exporters
            .filter(({ stream }) => (m + 1) % stream.minutes === 0 || m === MINUTES - 1)
            .map(({ exporter }) => exporter.forceFlush()),
        );
        if (si === 0 && (m + 1) % 120 === 0) {
          progress(
            `parquet: day ${(m + 1) / 60}/${HOURS} h (${((performance.now() - started) / 1000).toFixed(0)} s)`,
          );
        }
      }
      await s.source.shutdown();
    }),
  );
  for (const stream of STREAMS) {
    const figures: DayFigures = { objects: 0, points: 0, storedBytes: 0 };
    for (const list of perService) {
      const entry = list.find((x) => x.stream === stream);
      if (entry === undefined) continue;
      const stats = entry.exporter.stats();
      await entry.exporter.shutdown();
      // At least one object per `minutes` exports; more where a batch reached 8 MiB first.
      const least = Math.ceil(MINUTES / stream.minutes);
      if (
        stats.pointsDropped > 0 ||
        stats.batchesUploaded !== stats.batchesSealed ||
        stats.batchesUploaded < least ||
        (stream.minutes === 1 && stats.batchesUploaded !== MINUTES)
      ) {
        throw new Error(`${stream.key}: lost or merged objects: ${JSON.stringify(stats)}`);
      }
      figures.objects += stats.batchesUploaded;
      figures.points += stats.pointsUploaded;
      figures.storedBytes += stats.bytesUploaded;
    }
    if ((sinks.get(stream.key) as DirectoryS3).bytes !== figures.storedBytes) {
      throw new Error(`${stream.key}: the mirror holds other bytes than the exporter's stats`);
    }
    day.set(stream.key, figures);
  }
  progress(`parquet: the day took ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

// 2. The query over the day.
const JSON_TYPE =
  'STRUCT("resource" STRUCT("attributes" STRUCT("key" VARCHAR, "value" STRUCT("stringValue" VARCHAR))[]), ' +
  '"scopeMetrics" STRUCT("metrics" STRUCT("name" VARCHAR, "sum" STRUCT("dataPoints" STRUCT("timeUnixNano" VARCHAR, "asInt" BIGINT)[]))[])[])[]';

const parquetSql = (dir: string) => `
SELECT ServiceName AS service, epoch_us(TimeUnix) // 3600000000 AS hour,
       sum(ValueAsInt) AS total, count(*) AS points
FROM read_parquet('${dir}/**/*.parquet', hive_partitioning = true)
WHERE MetricName = '${COUNTER}'
GROUP BY ALL ORDER BY ALL`;

/** The same question of OTLP/JSON requests: unnest resources, metrics, points. */
const jsonSql = (glob: string) => `
WITH requests AS (
  SELECT rm.resource.attributes AS resource,
         unnest(flatten(list_transform(rm.scopeMetrics,
           lambda s: list_filter(s.metrics, lambda m: m.name = '${COUNTER}')))) AS metric
  FROM (SELECT unnest(resourceMetrics) AS rm
        FROM read_json('${glob}', format = 'newline_delimited', compression = 'zstd',
                       columns = {resourceMetrics: '${JSON_TYPE}'}))
), points AS (
  SELECT list_filter(resource, lambda a: a.key = 'service.name')[1].value.stringValue AS service,
         unnest(metric.sum.dataPoints) AS p
  FROM requests
)
SELECT service, CAST(p.timeUnixNano AS HUGEINT) // 3600000000000 AS hour,
       sum(p.asInt) AS total, count(*) AS points
FROM points
GROUP BY ALL ORDER BY ALL`;

/** One query per stream on disk; a layout's rows show its streams' queries. */
interface Query {
  stream: string;
  key: ContenderKey;
  label: string;
  sql: string;
}
const querySql = (stream: string, key: ContenderKey): string => {
  const dir = join(mirrorOf(stream), 'lake');
  if (key === 'parquet') return parquetSql(dir);
  return jsonSql(join(dir, '**', '*.json.zst'));
};
const QUERY_LABELS: Partial<Record<ContenderKey, string>> = {
  parquet: "Parquet: read_parquet('…/**/*.parquet', hive_partitioning = true)",
  'json-zstd': "OTLP JSON + zstd: read_json('…/**/*.json.zst', compression = 'zstd')",
};
const QUERIES: Query[] = STREAMS.filter((s) => s.queried).map((s) => ({
  stream: s.key,
  key: s.contender.key,
  label: QUERY_LABELS[s.contender.key] as string,
  sql: querySql(s.key, s.contender.key),
}));
const queryOf = (stream: string) => QUERIES.find((q) => q.stream === stream) as Query;
/**
 * Query rounds, per group of layouts that share a stream: a speed-up divides two times of the
 * same round.
 */
interface QueryGroup {
  label: string;
  streams: string[];
  rounds: number;
}
const QUERY_GROUPS: QueryGroup[] = [];
for (const l of LAYOUTS) {
  const streams = l.queried.map((k) => streamOf(l.key, k));
  const joined = QUERY_GROUPS.filter((g) => g.streams.some((s) => streams.includes(s)));
  const group: QueryGroup = {
    label: [...joined.map((g) => g.label), l.label].join(' + '),
    streams: [...new Set([...joined.flatMap((g) => g.streams), ...streams])],
    rounds: Math.min(l.rounds, ...joined.map((g) => g.rounds)),
  };
  for (const g of joined) QUERY_GROUPS.splice(QUERY_GROUPS.indexOf(g), 1);
  QUERY_GROUPS.push(group);
}

interface Answer {
  service: string;
  hour: number;
  total: number;
  points: number;
}

/** One query on a fresh in-memory DuckDB (no cache carried between runs), timed. */
async function runQuery(sql: string): Promise<{ millis: number; rows: Answer[] }> {
  const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const connection = await db.connect();
  try {
    const started = performance.now();
    const reader = await connection.runAndReadAll(sql);
    const millis = performance.now() - started;
    const rows = (reader.getRowObjectsJson() as Record<string, unknown>[]).map((r) => ({
      service: String(r.service),
      hour: Number(r.hour),
      total: Number(r.total),
      points: Number(r.points),
    }));
    return { millis, rows };
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

const expectedRows: Answer[] = [...expected]
  .map(([k, v]) => {
    const [service, hour] = k.split('|');
    return { service: service as string, hour: Number(hour), ...v };
  })
  .sort((a, b) => (a.service === b.service ? a.hour - b.hour : a.service < b.service ? -1 : 1));
const queryMillis = new Map<string, number[]>();
const answers = new Map<string, Answer[]>();
for (const g of QUERY_GROUPS) {
  const list = g.streams.map(queryOf);
  // A first run of each (the files come into the page cache, DuckDB's code is loaded), untimed.
  for (const q of list) answers.set(q.stream, (await runQuery(q.sql)).rows);
  for (let round = 0; round < g.rounds; round++) {
    progress(`parquet: query over the ${g.label}, round ${round + 1}/${g.rounds}`);
    for (const q of round % 2 === 0 ? list : [...list].reverse()) {
      const { millis } = await runQuery(q.sql);
      queryMillis.set(q.stream, [...(queryMillis.get(q.stream) ?? []), millis]);
    }
  }
}
/** Bytes of the Parquet files' footers (metadata, its length, the magic) under a directory. */
async function parquetFooterBytes(dir: string): Promise<number> {
  let total = 0;
  const tail = Buffer.alloc(8);
  for (const name of await readdir(dir, { recursive: true })) {
    if (!name.endsWith('.parquet')) continue;
    const file = await open(join(dir, name));
    try {
      const { size } = await file.stat();
      await file.read(tail, 0, 8, size - 8);
      total += tail.readUInt32LE(0) + 8;
    } finally {
      await file.close();
    }
  }
  return total;
}
/** Key: the Parquet stream's. */
const footerBytes = new Map<string, number>();
for (const s of STREAMS.filter((x) => x.contender.key === 'parquet'))
  footerBytes.set(s.key, await parquetFooterBytes(mirrorOf(s.key)));
await rm(root, { recursive: true, force: true });
const sameAnswer = (q: Query) =>
  JSON.stringify(answers.get(q.stream)) === JSON.stringify(expectedRows);
/** Median over rounds of (other time / Parquet time): same round, same machine state. */
const speedup = (l: LayoutKey, key: ContenderKey) => {
  const parquet = queryMillis.get(streamOf(l, 'parquet')) ?? [];
  return median(
    (queryMillis.get(streamOf(l, key)) ?? []).map((ms, i) => ms / (parquet[i] as number)),
  );
};

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// 3. CPU per point, per kind of thread, in a small process per format.

interface CpuRun extends CpuResult {
  format: Format;
  series: number;
}
const CPU_FORMATS: Format[] = ['parquet', 'otlp-json'];
/** Key: the size's label. Rounds alternate the order of the formats. */
const cpuRuns = new Map<string, CpuRun[]>();
for (const [si, size] of CPU_SIZES.entries()) {
  for (let round = 0; round < CPU_ROUNDS; round++) {
    for (const format of (round + si) % 2 === 0 ? CPU_FORMATS : [...CPU_FORMATS].reverse()) {
      progress(
        `parquet: CPU per point, ${size.series} series × ${CPU_EXPORTS_PER_BATCH} exports a batch, round ${round + 1}/${CPU_ROUNDS}, ${format}`,
      );
      const job: CpuJob = {
        format,
        series: size.series,
        exportsPerBatch: CPU_EXPORTS_PER_BATCH,
        warmBatches: 3,
        minCpuMillis: CPU_MIN_MILLIS,
        minBatches: 3,
        seed: 11 + round,
      };
      const run = await runTs('bench/children/parquet-cpu.ts', {
        args: [JSON.stringify(job)],
        nodeFlags:
          args.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${args.cpuProfDir}`],
        capMillis: 300_000,
      });
      const result = jsonLine<{ cpu: CpuResult }>(run, 'cpu')?.cpu;
      if (result === undefined) throw new Error(`CPU child (${format}) failed: ${run.stderr}`);
      cpuRuns.set(size.label, [
        ...(cpuRuns.get(size.label) ?? []),
        { ...result, format, series: size.series },
      ]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 4. The worker's peak heap while it makes one file of sealed columns.

interface MemoryRun {
  /** The builders' bytes when sealed: the batch's buffered bytes. */
  batchBytes: number;
  points: number;
  /** Worker heap (V8 heap in use + external memory) before the job and at its sampled peak. */
  before: number;
  peak: number;
  /** V8 heap in use alone: before and peak. */
  heapBefore: number;
  heapPeak: number;
  /** Process RSS before the job and at its peak (the main thread idles meanwhile). */
  rssBefore: number;
  rssPeak: number;
  millis: number;
  /** Heap samples taken (the worker answers between its own steps, by interrupt). */
  samples: number;
}

const fill = (exports: readonly ResourceMetrics[]) => {
  const builders = new MetricColumnBuilders();
  for (const rm of exports) builders.appendResourceMetrics(rm);
  return builders;
};

async function workerMemory(exports: readonly ResourceMetrics[]): Promise<MemoryRun> {
  // The exporter's worker, made as createWorkerBodyMaker() makes it.
  const worker = new Worker(new URL('../src/body/body-worker.js', import.meta.url), {
    workerData: { body: 'parquet', signal: 'metrics', compression: 'zstd', level: 3, zstdEngine },
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
  await new Promise((resolve) => worker.once('online', resolve));
  const job = (id: number, builders: MetricColumnBuilders) =>
    new Promise<void>((resolve, reject) => {
      worker.once('message', (reply: { error?: string }) =>
        reply.error === undefined ? resolve() : reject(new Error(reply.error)),
      );
      const columns = builders.seal();
      worker.postMessage({ id, columns, sha256: true, crc32: false }, columns.transfer);
    });
  // Warm-up: a file of the same batch, so the writer's code is compiled as in a running exporter.
  await job(1, fill(exports));
  const builders = fill(exports);
  const batchBytes = builders.bytes;
  const points = builders.rows;
  await collectGarbage();
  await sleep(100);
  const heap = async () => {
    const h = await worker.getHeapStatistics();
    return { used: h.used_heap_size, all: h.used_heap_size + (h.external_memory ?? 0) };
  };
  const first = await heap();
  const rssBefore = process.memoryUsage.rss();
  let rssPeak = rssBefore;
  let peak = first.all;
  let heapPeak = first.used;
  let samples = 0;
  let done = false;
  const rssTimer = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  }, 2);
  const heapLoop = (async () => {
    while (!done) {
      const h = await heap();
      peak = Math.max(peak, h.all);
      heapPeak = Math.max(heapPeak, h.used);
      samples++;
      await sleep(1);
    }
  })();
  const started = performance.now();
  await job(2, builders);
  const millis = performance.now() - started;
  done = true;
  await heapLoop;
  clearInterval(rssTimer);
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  await worker.terminate();
  return {
    batchBytes,
    points,
    before: first.all,
    peak,
    heapBefore: first.used,
    heapPeak,
    rssBefore,
    rssPeak,
    millis,
    samples,
  };
}

const memoryRuns = new Map<string, MemoryRun[]>();
{
  const cases: [string, ResourceMetrics[]][] = [
    ['8 MiB batch (the default maxBatchBytes)', batchExports.slice(0, defaultBatchCount)],
    ['16 MiB batch (maxBatchBytes 16 MiB)', batchExports],
  ];
  for (let round = 0; round < MEMORY_ROUNDS; round++) {
    for (const [name, exports] of cases) {
      progress(`parquet: worker memory, ${name}, round ${round + 1}/${MEMORY_ROUNDS}`);
      memoryRuns.set(name, [...(memoryRuns.get(name) ?? []), await workerMemory(exports)]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 5. Event-loop stall while the 16 MiB batch is sealed, made and uploaded.

type Where = 'stub' | 'real';
interface StallRun {
  delay: DelayReport;
  /** Longest gap between probe ticks that overlaps the flush. */
  stallMillis: number;
  /** Of that gap, the time the main thread ran on a CPU (schedstat); undefined elsewhere. */
  onCpuMillis: number | undefined;
  /** Of that gap, the time the main thread was ready to run but waiting for a CPU. */
  runnableMillis: number | undefined;
  flushMillis: number;
  /** The main thread's own GC pauses that started in the flush (perf_hooks 'gc' entries). */
  gcMaxMillis: number;
  gcTotalMillis: number;
  rawBytes: number;
  storedBytes: number;
}

/** The main thread's GC pauses, for attributing stalls: [startTime, duration]. */
const gcPauses: [number, number][] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push([e.startTime, e.duration]);
});
gcObserver.observe({ entryTypes: ['gc'] });

const stallBucket = { client: undefined as ReturnType<typeof benchClient> | undefined, name: '' };
if (s3 !== undefined) {
  stallBucket.client = benchClient(s3);
  stallBucket.name = await benchBucket(stallBucket.client, 'parquet');
}

async function stallRun(format: Format, where: Where): Promise<StallRun> {
  const stub = new StubS3(STUB_DELAY_MILLIS);
  const exporter = new S3MetricExporter({
    bucket: where === 'real' ? stallBucket.name : 'bench',
    prefix: `event-loop/${format}`,
    format,
    compression: 'zstd',
    maxBatchBytes: 4 * LARGE_BATCH_BYTES,
    maxBufferedBytes: 8 * LARGE_BATCH_BYTES,
    maxBatchAgeMillis: 2 ** 31 - 1,
    flushTimeoutMillis: 120_000,
    ...(where === 'real' && s3 !== undefined
      ? { endpoint: s3.endpoint, region: s3.region, credentials: s3.credentials }
      : { s3Client: stub.client }),
  });
  // Warm-up on this exporter: its worker's first job, its client's first request.
  await exportOnce(exporter, batchExports[0] as ResourceMetrics);
  await exporter.forceFlush();
  const before = exporter.stats();
  for (const rm of batchExports) await exportOnce(exporter, rm);
  await collectGarbage();
  await sleep(50);
  const probe = startDelayProbe(GAP_MILLIS);
  await sleep(20);
  const flushStart = performance.now();
  await exporter.forceFlush();
  const flushEnd = performance.now();
  await sleep(20);
  const delay = probe.stop();
  const after = exporter.stats();
  await exporter.shutdown();
  if (after.batchesUploaded - before.batchesUploaded !== 1 || after.pointsDropped > 0) {
    throw new Error(`${format}: expected one 16 MiB upload: ${JSON.stringify(after)}`);
  }
  let stallMillis = 0;
  let onCpuMillis: number | undefined = schedstatWorks ? 0 : undefined;
  let runnableMillis: number | undefined = schedstatWorks ? 0 : undefined;
  for (const gap of delay.gaps) {
    // The loop stopped answering in the tick after gap.start and answered at its end.
    const end = gap.start + gap.millis + 1;
    if (end < flushStart || gap.start > flushEnd) continue;
    if (gap.millis > stallMillis) {
      stallMillis = gap.millis;
      if (gap.onCpuMillis !== undefined) onCpuMillis = Math.min(gap.onCpuMillis, gap.millis);
      if (gap.runnableMillis !== undefined) {
        runnableMillis = Math.min(gap.runnableMillis, gap.millis);
      }
    }
  }
  // The entries arrive after the fact: the 20 ms after the flush gave them time.
  const gcs = gcPauses.filter(([t]) => t >= flushStart && t <= flushEnd).map(([, d]) => d);
  gcPauses.length = 0;
  return {
    delay,
    stallMillis,
    onCpuMillis,
    runnableMillis,
    flushMillis: flushEnd - flushStart,
    gcMaxMillis: Math.max(0, ...gcs),
    gcTotalMillis: gcs.reduce((a, b) => a + b, 0),
    rawBytes: after.rawBytesUploaded - before.rawBytesUploaded,
    storedBytes: after.bytesUploaded - before.bytesUploaded,
  };
}

async function idle(): Promise<DelayReport> {
  await collectGarbage();
  const probe = startDelayProbe(GAP_MILLIS);
  await sleep(IDLE_MILLIS);
  return probe.stop();
}

const stallConfigs: { format: Format; where: Where }[] = [
  { format: 'parquet', where: 'stub' },
  { format: 'otlp-json', where: 'stub' },
  ...(s3 === undefined
    ? []
    : [
        { format: 'parquet' as const, where: 'real' as const },
        { format: 'otlp-json' as const, where: 'real' as const },
      ]),
];
const stallLabel = (c: { format: Format; where: Where }) =>
  `${c.format === 'parquet' ? 'Parquet' : 'OTLP JSON'} + zstd, ${c.where === 'stub' ? `stub S3 (${STUB_DELAY_MILLIS} ms)` : 'real S3'}`;
const stalls = new Map<string, StallRun[]>();
const idles: DelayReport[] = [];
for (let round = 0; round < STALL_ROUNDS; round++) {
  progress(`parquet: event loop, round ${round + 1}/${STALL_ROUNDS}`);
  idles.push(await idle());
  for (const c of round % 2 === 0 ? stallConfigs : [...stallConfigs].reverse()) {
    stalls.set(stallLabel(c), [
      ...(stalls.get(stallLabel(c)) ?? []),
      await stallRun(c.format, c.where),
    ]);
  }
}
if (stallBucket.client !== undefined) {
  await removeBenchBucket(stallBucket.client, stallBucket.name);
  stallBucket.client.destroy();
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// 6. Export into the real S3 server.

interface Throughput {
  seconds: number;
  points: number;
  objects: number;
  storedBytes: number;
  listedBytes: number;
  /** CPU time per kind of thread over the run; undefined without /proc. */
  cpu: ThreadCpu | undefined;
}
const throughput = new Map<Format, Throughput[]>();
const S3_FORMATS: Format[] = ['parquet', 'otlp-json'];
if (s3 !== undefined) {
  progress(`parquet: real S3, collecting ${S3_EXPORTS} exports of ${fmtNum(S3_SERIES)} series`);
  const source = realisticSource(S3_SERIES, 3);
  const exports: ResourceMetrics[] = [];
  for (let i = 0; i < S3_EXPORTS; i++) {
    source.record();
    exports.push(await source.collect());
  }
  await source.shutdown();
  const client = benchClient(s3);
  const bucket = await benchBucket(client, 'parquet-s3');
  const run = async (format: Format, prefix: string, list: ResourceMetrics[]) => {
    const exporter = new S3MetricExporter({
      bucket,
      prefix,
      format,
      compression: 'zstd',
      flushTimeoutMillis: 300_000,
      // As in the end-to-end suite: room for the whole run, whichever format falls behind.
      maxBufferedBytes: S3_BUFFER_BYTES,
      endpoint: s3.endpoint,
      region: s3.region,
      credentials: s3.credentials,
    });
    // One batch first on this exporter, outside the clock: a running service's worker has made
    // files before (its code compiled), as its main thread has exported before.
    await exportOnce(exporter, list[0] as ResourceMetrics);
    await exporter.forceFlush();
    const warm = exporter.stats();
    await collectGarbage();
    const before = threadSnapshot();
    const seconds = await exportAllTimed(exporter, list);
    const cpu = threadCpuBetween(before, threadSnapshot());
    const stats = await shutdownLossless(exporter, format);
    const listed = await listedBytes(client, bucket, `${prefix}/`);
    return {
      seconds,
      points: stats.pointsUploaded - warm.pointsUploaded,
      objects: stats.batchesUploaded - warm.batchesUploaded,
      storedBytes: stats.bytesUploaded - warm.bytesUploaded,
      // The listing holds the warm-up batch too.
      listedBytes: listed - warm.bytesUploaded,
      cpu,
    };
  };
  for (const f of S3_FORMATS) await run(f, `warm-up/${f}`, exports.slice(0, 2));
  for (let round = 0; round < S3_ROUNDS; round++) {
    for (const f of round % 2 === 0 ? S3_FORMATS : [...S3_FORMATS].reverse()) {
      progress(`parquet: real S3, round ${round + 1}/${S3_ROUNDS}, ${f}`);
      throughput.set(f, [...(throughput.get(f) ?? []), await run(f, `r${round}/${f}`, exports)]);
    }
  }
  await removeBenchBucket(client, bucket);
  client.destroy();
}

// ---------------------------------------------------------------------------------------------
// 7. A service with 5,000 series per format: peak RSS of the whole process.

progress('parquet: building dist/ for the service processes (npm run build)');
await buildDist();
const sink = await startSink();
const serviceRuns = new Map<ServiceMode, ServiceRun[]>();
for (let round = 0; round < SERVICE_ROUNDS; round++) {
  const shift = round % SERVICE_MODES.length;
  for (const mode of [...SERVICE_MODES.slice(shift), ...SERVICE_MODES.slice(0, shift)]) {
    progress(
      `parquet: a service of ${fmtInt(SERVICE_SERIES)} series, round ${round + 1}/${SERVICE_ROUNDS}, ${mode}`,
    );
    serviceRuns.set(mode, [
      ...(serviceRuns.get(mode) ?? []),
      await runService(sink, mode, SERVICE_SERIES, SERVICE_SECONDS),
    ]);
  }
}
sink.server.close();

// ---------------------------------------------------------------------------------------------
// The report.

const ratioText = (r: number) => `${r.toFixed(2)}×`;
const perPoint = (l: LayoutKey, key: ContenderKey) =>
  dayOf(l, key).storedBytes / dayOf(l, key).points;
const vsJson = (l: LayoutKey, key: ContenderKey) => perPoint(l, key) / perPoint(l, 'json-zstd');
const pointsPerObject = (l: LayoutKey, key: ContenderKey = 'parquet') =>
  dayOf(l, key).points / dayOf(l, key).objects;
const footerPerPoint = (l: LayoutKey) =>
  (footerBytes.get(streamOf(l, 'parquet')) ?? 0) / dayOf(l, 'parquet').points;
const minutesOf = (l: LayoutKey, key: ContenderKey) => layout(l).minutes(contender(key));
/** "10 min", or "1 min (= default batch ages)" where an earlier layout wrote the same stream. */
const ageCell = (l: LayoutKey, key: ContenderKey) => {
  const shared = sharedFrom(l, key);
  return `${ageText(minutesOf(l, key))}${shared === undefined ? '' : ` (= ${shared.label.replace(/ \(.*\)$/, '')})`}`;
};
/** A speed-up as text: "12.3× faster", or "0.66× (Parquet 1.52× slower)". */
const speedText = (r: number) =>
  r >= 1 ? `${r.toFixed(2)}× faster` : `${r.toFixed(2)}× (Parquet ${(1 / r).toFixed(2)}× slower)`;
const dayPoints = dayOf('default', 'parquet').points;

const sizeTable: Table = {
  columns: [
    `layout (${fmtInt(dayPoints)} points of a day)`,
    'format',
    'batch age',
    'objects',
    'points per object',
    'bytes/point',
    'vs JSON + zstd',
    'of it Parquet footers',
    'stored',
  ],
  rows: LAYOUTS.flatMap((l) =>
    l.contenders.map((k) => [
      l.label,
      contender(k).label,
      ageCell(l.key, k),
      fmtInt(dayOf(l.key, k).objects),
      fmtInt(pointsPerObject(l.key, k)),
      fmtNum(perPoint(l.key, k)),
      ratioText(vsJson(l.key, k)),
      k === 'parquet' ? fmtNum(footerPerPoint(l.key)) : '',
      fmtMiB(dayOf(l.key, k).storedBytes),
    ]),
  ),
};

const queryTable: Table = {
  columns: [
    'layout',
    `DuckDB: sum of ${COUNTER} by service and hour`,
    'batch age',
    'objects',
    'on disk',
    'time (median)',
    'spread',
    'Parquet speed-up (median of rounds)',
    'answer',
  ],
  rows: LAYOUTS.flatMap((l) =>
    l.queried.map((k) => {
      const q = queryOf(streamOf(l.key, k));
      const times = summarize(queryMillis.get(q.stream) ?? []);
      return [
        l.label,
        q.label,
        ageCell(l.key, k),
        fmtInt(dayOf(l.key, k).objects),
        fmtMiB(dayOf(l.key, k).storedBytes),
        fmtMs(times.median),
        fmtPct(times.spreadPct),
        k === 'parquet' ? '' : speedText(speedup(l.key, k)),
        sameAnswer(q) ? `= generator (${expectedRows.length} rows)` : 'DIFFERS',
      ];
    }),
  ),
};

/** µs per point of a run: export() on the main thread, each kind of thread in the flush, all. */
const cpuPerPoint = (r: CpuRun) => {
  const us = (ms: number) => (ms * 1000) / r.points;
  return {
    exportMain: us(r.exporting.main),
    ...Object.fromEntries(
      THREAD_KINDS.map((k) => [k, us(r.exporting[k] + r.flushing[k])] as const),
    ),
    total: us(totalCpu(r.exporting) + totalCpu(r.flushing)),
  } as { exportMain: number; total: number } & ThreadCpu;
};
const runsOf = (label: string, format: Format) =>
  (cpuRuns.get(label) ?? []).filter((r) => r.format === format);
/** Median over rounds of the per-round ratio Parquet / OTLP/JSON of a figure. */
const cpuRatio = (label: string, figure: (r: CpuRun) => number) => {
  const json = runsOf(label, 'otlp-json');
  return median(runsOf(label, 'parquet').map((r, i) => figure(r) / figure(json[i] as CpuRun)));
};
const cpuMedian = (label: string, format: Format, figure: (r: CpuRun) => number) =>
  median(runsOf(label, format).map(figure));
const cpuTable: Table = {
  columns: [
    `batch (${CPU_EXPORTS_PER_BATCH} exports)`,
    'format',
    'points a batch',
    'µs/point: main thread in export()',
    'main thread, all',
    'body worker',
    "libuv's pool",
    "V8's helper threads",
    'every thread',
    '× OTLP/JSON + zstd',
    'bytes/point',
  ],
  rows: CPU_SIZES.flatMap((size) =>
    CPU_FORMATS.map((format) => {
      const at = (f: (p: ReturnType<typeof cpuPerPoint>) => number) =>
        fmtNum(cpuMedian(size.label, format, (r) => f(cpuPerPoint(r))));
      const first = runsOf(size.label, format)[0] as CpuRun;
      return [
        `${size.label} (${fmtInt(size.series)} series)`,
        format === 'parquet' ? 'Parquet' : 'OTLP JSON + zstd',
        fmtInt(first.points / first.batches),
        at((p) => p.exportMain),
        at((p) => p.main),
        at((p) => p.worker),
        at((p) => p.pool),
        at((p) => p.other),
        at((p) => p.total),
        format === 'parquet' ? ratioText(cpuRatio(size.label, (r) => cpuPerPoint(r).total)) : '',
        fmtNum(cpuMedian(size.label, format, (r) => r.storedBytes / r.points)),
      ];
    }),
  ),
};

/** Growth over the job relative to the batch's buffered bytes; each at its worst round. */
const worstOf = (list: MemoryRun[], f: (r: MemoryRun) => number) => Math.max(...list.map(f));
const growthFactor = (r: MemoryRun) => (r.peak - r.before) / r.batchBytes;
const memoryTable: Table = {
  columns: [
    'worker job (one batch)',
    "buffered bytes (the builders')",
    'points',
    'heap + external: growth over the job',
    "× the builders' bytes",
    'V8 heap in use: growth',
    'peak in use',
    'process RSS growth',
    'job time',
    'heap samples',
  ],
  rows: [...memoryRuns].map(([name, list]) => {
    const first = list[0] as MemoryRun;
    return [
      name,
      fmtMiB(first.batchBytes),
      fmtInt(first.points),
      fmtMiB(worstOf(list, (r) => r.peak - r.before)),
      `${fmtNum(worstOf(list, growthFactor))}×`,
      fmtMiB(worstOf(list, (r) => r.heapPeak - r.heapBefore)),
      fmtMiB(worstOf(list, (r) => r.heapPeak)),
      fmtMiB(worstOf(list, (r) => r.rssPeak - r.rssBefore)),
      fmtMs(median(list.map((r) => r.millis))),
      String(Math.min(...list.map((r) => r.samples))),
    ];
  }),
};

const stallOf = (list: StallRun[]) => median(list.map((r) => r.stallMillis));
const onCpuOf = (list: StallRun[]) => {
  const values = list.map((r) => r.onCpuMillis).filter((v): v is number => v !== undefined);
  return values.length === list.length ? median(values) : undefined;
};
const runnableOf = (list: StallRun[]) => {
  const values = list.map((r) => r.runnableMillis).filter((v): v is number => v !== undefined);
  return values.length === list.length ? median(values) : undefined;
};
const idleStall = median(idles.map((d) => Math.max(0, ...d.gaps.map((g) => g.millis))));
const stallText = (ms: number) => (ms === 0 ? `< ${GAP_MILLIS} ms` : fmtMs(ms));
const stallTable: Table = {
  columns: [
    `contender (${fmtMiB(batchBytesAfter.at(-1) ?? 0)} of builders, ${fmtInt(batchPoints)} points)`,
    'max delay (median)',
    'max delay range',
    'p99',
    'longest stall in the flush',
    "of it on our thread's CPU",
    'of it waiting for a CPU',
    'main-thread GC in the flush: longest pause, total',
    'flush (median)',
    'stored',
  ],
  rows: [
    [
      `idle (noise floor, ${fmtMs(IDLE_MILLIS)} window)`,
      fmtMs(median(idles.map((d) => d.maxMillis))),
      `${fmtMs(Math.min(...idles.map((d) => d.maxMillis)))} – ${fmtMs(Math.max(...idles.map((d) => d.maxMillis)))}`,
      fmtMs(median(idles.map((d) => d.p99Millis))),
      `${stallText(idleStall)} (the probe's own noise)`,
      '',
      '',
      '',
      '',
      '',
    ],
    ...[...stalls].map(([name, list]) => {
      const max = summarize(list.map((r) => r.delay.maxMillis));
      const onCpu = onCpuOf(list);
      return [
        name,
        fmtMs(max.median),
        `${fmtMs(max.min)} – ${fmtMs(max.max)}`,
        fmtMs(median(list.map((r) => r.delay.p99Millis))),
        stallText(stallOf(list)),
        onCpu === undefined ? 'n/a' : stallText(onCpu),
        runnableOf(list) === undefined ? 'n/a' : fmtMs(runnableOf(list) as number),
        `${fmtMs(median(list.map((r) => r.gcMaxMillis)))}, ${fmtMs(median(list.map((r) => r.gcTotalMillis)))}`,
        fmtMs(median(list.map((r) => r.flushMillis))),
        fmtMiB((list[0] as StallRun).storedBytes),
      ];
    }),
  ],
};

const throughputTable: Table = {
  columns: [
    'format (zstd, exporter defaults)',
    'data points/s (median)',
    'spread',
    'objects',
    'stored (listed)',
    'bytes/point',
    'CPU µs/point: main thread',
    'body worker',
    "libuv's pool",
    "V8's helpers",
  ],
  rows: [...throughput].map(([format, list]) => {
    const rate = summarize(list.map((r) => r.points / r.seconds));
    const first = list[0] as Throughput;
    const cpu = (kind: keyof ThreadCpu) => {
      const values = list.map((r) => r.cpu?.[kind]).filter((v): v is number => v !== undefined);
      return values.length === list.length
        ? fmtNum(median(list.map((r, i) => ((values[i] as number) * 1000) / r.points)))
        : 'n/a';
    };
    return [
      format,
      fmtRate(rate.median),
      fmtPct(rate.spreadPct),
      String(first.objects),
      `${fmtMiB(first.listedBytes)}${first.listedBytes === first.storedBytes ? ' = stats' : ' ≠ stats!'}`,
      fmtNum(first.storedBytes / first.points),
      ...THREAD_KINDS.map(cpu),
    ];
  }),
};

const SERVICE_LABEL: Partial<Record<ServiceMode, string>> = {
  none: 'no exporter (one that discards)',
  'otlp-json': 'ours, otlp-json + zstd (the default format)',
  parquet: 'ours, parquet',
};
/** Median over rounds of a figure of `mode` minus that round's figure of `base`. */
const serviceAbove = (mode: ServiceMode, base: ServiceMode, figure: (r: ServiceRun) => number) => {
  const baseRuns = serviceRuns.get(base) ?? [];
  return median(
    (serviceRuns.get(mode) ?? []).map((r, i) => figure(r) - figure(baseRuns[i] as ServiceRun)),
  );
};
const signedMiB = (bytes: number) => `${bytes >= 0 ? '+' : '−'}${fmtMiB(Math.abs(bytes))}`;
const serviceTable: Table = {
  columns: [
    `mode (${fmtInt(SERVICE_SERIES)} series × counter + histogram, every 1 s, ${SERVICE_SECONDS} s)`,
    'peak RSS (VmHWM, median)',
    'above no exporter',
    'CPU (run + shutdown)',
    'batches uploaded',
  ],
  rows: SERVICE_MODES.map((mode) => {
    const list = serviceRuns.get(mode) ?? [];
    return [
      SERVICE_LABEL[mode] ?? mode,
      fmtMiB(median(list.map(highWater))),
      mode === 'none' ? '' : signedMiB(serviceAbove(mode, 'none', highWater)),
      fmtMs(median(list.map((r) => r.cpuMillis))),
      mode === 'none' ? '' : String(list[0]?.uploaded?.batches ?? 'n/a'),
    ];
  }),
};

// Targets.
const defaults = layout('default');
const bytesRatio = vsJson('default', 'parquet');
const targets: Target[] = [];
for (const size of CPU_SIZES) {
  const body = cpuRatio(size.label, (r) => cpuPerPoint(r).total);
  const us = (format: Format) => fmtNum(cpuMedian(size.label, format, (r) => cpuPerPoint(r).total));
  const batch = `${size.label}, ~${fmtInt(cpuMedian(size.label, 'parquet', (r) => r.points / r.batches))} points`;
  targets.push(
    {
      name: `CPU per point from export() to the body, every thread: Parquet vs OTLP JSON + zstd, ${batch}`,
      measured: `${ratioText(body)} (${us('parquet')} vs ${us('otlp-json')} µs)`,
      threshold: `≤ ${BODY_CPU_RATIO}×`,
      pass: body <= BODY_CPU_RATIO,
    },
    {
      name: `stretch: the same, ${batch}`,
      measured: ratioText(body),
      threshold: `≤ ${BODY_CPU_STRETCH}× (stretch)`,
      pass: body <= BODY_CPU_STRETCH,
    },
  );
  const main = cpuRatio(size.label, (r) => cpuPerPoint(r).exportMain);
  targets.push({
    name: `main thread's CPU per point in export(): Parquet vs OTLP JSON, ${batch}`,
    measured: `${ratioText(main)} (${fmtNum(cpuMedian(size.label, 'parquet', (r) => cpuPerPoint(r).exportMain))} vs ${fmtNum(cpuMedian(size.label, 'otlp-json', (r) => cpuPerPoint(r).exportMain))} µs)`,
    threshold: `≤ ${EXPORT_CPU_RATIO}×`,
    pass: main <= EXPORT_CPU_RATIO,
  });
}
{
  const worst = Math.max(...[...memoryRuns.values()].map((list) => worstOf(list, growthFactor)));
  targets.push({
    name: "worker's peak heap growth while it makes one file, × the batch's buffered bytes (the builders')",
    measured: [...memoryRuns]
      .map(
        ([name, list]) =>
          `${name}: ${fmtNum(worstOf(list, growthFactor))}× (${fmtMiB(worstOf(list, (r) => r.peak - r.before))} of ${fmtMiB((list[0] as MemoryRun).batchBytes)})`,
      )
      .join('; '),
    threshold: `≤ ${HEAP_FACTOR}× at each size`,
    pass: worst <= HEAP_FACTOR,
  });
}
if (s3 === undefined) {
  targets.push({
    name: 'export into real S3: Parquet data points/s vs OTLP JSON + zstd',
    measured: `not measured: no S3_ENDPOINT (${S3_SKIP_REASON})`,
    threshold: `≥ ${THROUGHPUT_RATIO * 100}%`,
    pass: null,
  });
} else {
  const rateOf = (f: Format) => median((throughput.get(f) ?? []).map((r) => r.points / r.seconds));
  /** Median over rounds of the per-round ratio. */
  const ratio = median(
    (throughput.get('parquet') ?? []).map((r, i) => {
      const json = (throughput.get('otlp-json') ?? [])[i] as Throughput;
      return r.points / r.seconds / (json.points / json.seconds);
    }),
  );
  targets.push({
    name: 'export into real S3: Parquet data points/s vs OTLP JSON + zstd',
    measured: `${(ratio * 100).toFixed(1)}% (${fmtRate(rateOf('parquet'))} vs ${fmtRate(rateOf('otlp-json'))})`,
    threshold: `≥ ${THROUGHPUT_RATIO * 100}%`,
    pass: ratio >= THROUGHPUT_RATIO,
  });
}
targets.push(
  {
    name: `Parquet bytes/point vs OTLP JSON + zstd, a day at ${defaults.label}`,
    measured: `${ratioText(bytesRatio)} (${fmtNum(perPoint('default', 'parquet'))} vs ${fmtNum(perPoint('default', 'json-zstd'))} B; protobuf + zstd ${fmtNum(perPoint('default', 'proto-zstd'))} B; ~${fmtInt(pointsPerObject('default'))} points per Parquet object, ~${fmtInt(pointsPerObject('default', 'json-zstd'))} per JSON object)`,
    threshold: `≤ ${BYTES_RATIO}×`,
    pass: bytesRatio <= BYTES_RATIO,
  },
  {
    name: 'DuckDB answers the same on every format and batch age as the generator',
    measured: QUERIES.map((q) => `${q.stream} ${sameAnswer(q) ? 'same' : 'DIFFERS'}`).join(', '),
    threshold: `all equal (${expectedRows.length} service × hour sums)`,
    pass: QUERIES.every(sameAnswer),
    required: true,
  },
  {
    name: `DuckDB query over the day at ${defaults.label}: read_parquet vs read_json on .json.zst`,
    measured: `${speedText(speedup('default', 'json-zstd'))} (${fmtMs(median(queryMillis.get(streamOf('default', 'parquet')) ?? []))} vs ${fmtMs(median(queryMillis.get(streamOf('default', 'json-zstd')) ?? []))}; ${fmtInt(dayOf('default', 'parquet').objects)} vs ${fmtInt(dayOf('default', 'json-zstd').objects)} objects)`,
    threshold: `≥ ${QUERY_SPEEDUP}× faster (as before: 5.5–6.1×)`,
    pass: speedup('default', 'json-zstd') >= QUERY_SPEEDUP,
  },
);
for (const [name, list] of stalls) {
  if (!name.startsWith('Parquet')) continue;
  const stall = stallOf(list);
  const onCpu = onCpuOf(list);
  const maxDelay = median(list.map((r) => r.delay.maxMillis));
  // As in the event-loop suite: with schedstat, the main thread's own CPU time inside its longest
  // stall (the rest of a stall it was ready but waiting for a core); the wall-clock figures beside.
  const figure = onCpu ?? stall;
  targets.push({
    name: `event-loop stall while a 16 MiB batch becomes Parquet and is uploaded, ${name}`,
    measured: `${onCpu === undefined ? '' : `on our thread's CPU ${stallText(onCpu)}; `}longest stall ${stallText(stall)}, max delay ${fmtMs(maxDelay)}, longest main-thread GC pause ${fmtMs(median(list.map((r) => r.gcMaxMillis)))} (idle ${fmtMs(IDLE_MILLIS)}: stall ${stallText(idleStall)}, max delay ${fmtMs(median(idles.map((d) => d.maxMillis)))})`,
    threshold: `≤ ${STALL_MILLIS} ms`,
    pass: figure <= STALL_MILLIS,
  });
}
{
  const above = serviceAbove('parquet', 'otlp-json', highWater);
  const mb = (bytes: number) => `${bytes >= 0 ? '+' : '−'}${(Math.abs(bytes) / 1e6).toFixed(1)} MB`;
  targets.push({
    name: `peak RSS of a service with ${fmtInt(SERVICE_SERIES)} series: Parquet vs the default format (otlp-json + zstd)`,
    measured: `${mb(above)} (high-water marks ${fmtMiB(median((serviceRuns.get('parquet') ?? []).map(highWater)))} vs ${fmtMiB(median((serviceRuns.get('otlp-json') ?? []).map(highWater)))}; above no exporter ${mb(serviceAbove('parquet', 'none', highWater))} vs ${mb(serviceAbove('otlp-json', 'none', highWater))})`,
    threshold: `≤ +${RSS_SLACK_MB} MB`,
    pass: above <= RSS_SLACK_MB * 1e6,
  });
  // The service runs of ours did all their work (uploaded, dropped nothing), as the baseline did.
  targets.push(noLossTarget([...serviceRuns.values()].flat()));
}

gcObserver.disconnect();
const suiteSeconds = (performance.now() - suiteStarted) / 1000;
emitResult({
  suite: 'parquet',
  title: "format: 'parquet' against OTLP JSON + zstd (size, query, CPU, memory, stall, throughput)",
  tables: [
    sizeTable,
    queryTable,
    cpuTable,
    memoryTable,
    stallTable,
    ...(s3 === undefined ? [] : [throughputTable]),
    serviceTable,
  ],
  targets,
  notes: [
    `Data: the realistic generator (bench/lib/realistic-metrics.ts: HTTP counters, explicit and exponential histograms, k8s pod gauges, semantic-convention attributes, 15 resource attributes). The day: three services (${SERVICES.map((s) => `${s.name} ${s.series} series`).join(', ')}) with resources of their own, recorded and collected once a minute (cumulative values grow through the day), re-timed to the minutes of ${new Date(DAY_START).toISOString().slice(0, 10)} UTC.`,
    `Day: ${HOURS} hours${args.quick ? ' (--quick: the full run has 24)' : ''} × 60 minutes × ${services.length} services = ${fmtInt(dayPoints)} points. Every export goes into one exporter per service and stream (the real S3MetricExporter, partitionTime 'data', prefix lake/) that stores into a local directory as a mirror of the bucket. A stream is a format at a batch age: with one export a minute, an age of n minutes is a forceFlush() after every n exports, and the default 8 MiB maxBatchBytes can seal a batch earlier. Layouts: ${LAYOUTS.map((l) => `${l.label}: ${l.contenders.map((k) => `${contender(k).key} ${ageText(minutesOf(l.key, k))}`).join(', ')}`).join('; ')}. The default batch ages are read from the exporter (FORMAT_ROWS[format].maxBatchAgeMillis in src/layout/formats.ts: ${[...new Set(CONTENDERS.map((c) => c.format))].map((f) => `${f} ${fmtInt(FORMAT_ROWS[f].maxBatchAgeMillis)} ms`).join(', ')}). Parquet lands in hour partitions (its default layout), OTLP in minute partitions. Targets on size and query are held at the default batch ages; the hourly layout is reported only.`,
    `Parquet footers (schema and column-chunk metadata, read from the files): ${LAYOUTS.map((l) => `${ageText(minutesOf(l.key, 'parquet'))} objects ${fmtInt((footerBytes.get(streamOf(l.key, 'parquet')) ?? 0) / dayOf(l.key, 'parquet').objects)} bytes per file, ${fmtNum(footerPerPoint(l.key))} of ${fmtNum(perPoint(l.key, 'parquet'))} bytes per point`).join('; ')}.`,
    `Query: DuckDB (@duckdb/node-api) in process, a fresh in-memory database per run, the files in the page cache after one untimed run per stream; ${QUERY_GROUPS.map((g) => `${g.rounds} rounds over ${g.label} (${g.streams.join(', ')})`).join(', ')}; order alternated, the speed-up is the median of the per-round ratios. DuckDB reads zstd-compressed JSON itself (read_json compression = 'zstd'); the JSON query names only the fields it reads (columns = {...}), the best case for read_json. Hours are taken from the points' times, not from the paths, on both sides.`,
    `CPU: bench/children/parquet-cpu.ts, one process per format and round (${CPU_ROUNDS} round(s), order alternated; the ratio is the median of the per-round ratios). One service exports through the real S3MetricExporter (compression zstd, level 3) into a stub S3 that answers at once: batches of ${CPU_EXPORTS_PER_BATCH} collections, exported a turn of the event loop apart, then forceFlush() (seal, body, upload); both formats get the same batches. 3 warm-up batches, then batches until the process used ${fmtInt(CPU_MIN_MILLIS)} ms of CPU. CPU per thread from /proc/self/task/*/schedstat (bench/lib/thread-groups.ts): the main thread (export() apart), the body worker (Parquet), libuv's pool (node:zlib's zstd for OTLP/JSON, SHA-256), V8's helper threads (garbage collection, compilation) of both isolates. The target counts every thread from the first export() to the uploaded body.`,
    `Memory: the exporter's worker (src/body/body-worker.js with the options createWorkerBodyMaker() gives it: zstd level 3, ${zstdEngine}, a ${WORKER_YOUNG_GENERATION_MB} MB young generation), given a batch's sealed columns by transfer as the exporter gives them, after a warm-up file of the same batch. Its heap (V8 heap in use + external memory, which holds the columns it received) sampled with worker.getHeapStatistics() every ~1 ms (answered by interrupt while it works); the growth over the job is the peak minus the heap just before it. Sampling can miss a peak: the figures are lower bounds. ${MEMORY_ROUNDS} round(s), each figure at its worst round. The batches are the first exports of the large batch whose builders hold up to 8 MiB, and all of it (16 MiB).`,
    `Event loop: the large batch (${batchExports.length} exports of ~${fmtInt(BATCH_SERIES)} series, its builders ${fmtMiB(batchBytesAfter.at(-1) ?? 0)}) exported first, then forceFlush() under the probe (monitorEventLoopDelay plus a 1 ms interval that records gaps > ${GAP_MILLIS} ms); one small flush on the same exporter before, as warm-up; ${STALL_ROUNDS} rounds, medians. The target, as in the event-loop suite: the main thread's own CPU time within the longest stall of the flush (Linux schedstat), the wall-clock stall and the max delay beside it. The OTLP JSON rows are the same exports as the reference.`,
    s3 === undefined
      ? `Real S3 throughput not measured: ${S3_SKIP_REASON}.`
      : `Real S3: ${S3_EXPORTS} exports of ${fmtNum(S3_SERIES)} series (as the end-to-end suite), exporter defaults (8 MiB batches, zstd level 3, 4 uploads in flight) but maxBufferedBytes ${fmtMiB(S3_BUFFER_BYTES)}, timed from the first export() to forceFlush() resolving, after one batch on the same exporter (its worker's code compiled, as in a service that has exported before); ${S3_ROUNDS} round(s) after a warm-up run, order alternated. CPU per point per kind of thread over the run (Linux schedstat); the S3 server shares the machine's cores.`,
    `Service: bench/children/footprint-service.mjs (the footprint suite's, through bench/lib/footprint-service.ts), plain \`node\` on dist/ (built first), a MeterProvider with a counter and a histogram of ${fmtInt(SERVICE_SERIES)} series each exported every second for ${SERVICE_SECONDS} s into a local sink, our exporter with its defaults; ${SERVICE_ROUNDS} round(s), modes rotated. Peak RSS: the kernel's high-water mark (VmHWM, read after shutdown), which also sees peaks shorter than a 100 ms sample; the target is the median over rounds of Parquet's peak minus the default format's of the same round.`,
    `Suite time inside the child: ${suiteSeconds.toFixed(0)} s.`,
  ],
  data: {
    quick: args.quick,
    day: Object.fromEntries(day),
    query: { millis: Object.fromEntries(queryMillis), expectedRows: expectedRows.length },
    parquetFooterBytes: Object.fromEntries(footerBytes),
    cpu: Object.fromEntries(cpuRuns),
    memory: Object.fromEntries(memoryRuns),
    stalls: Object.fromEntries(
      [...stalls].map(([k, list]) => [
        k,
        list.map(({ delay, ...r }) => ({ ...r, maxMillis: delay.maxMillis })),
      ]),
    ),
    throughput: Object.fromEntries(throughput),
    service: Object.fromEntries(
      [...serviceRuns].map(([mode, list]) => [
        mode,
        list.map(({ samples, ...r }) => ({ ...r, peakRss: peakRss({ samples } as ServiceRun) })),
      ]),
    ),
    suiteSeconds,
  },
});
process.exit(0);
