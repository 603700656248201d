/**
 * Parquet against the OTLP formats, side by side in one run on the same realistic data: a day of
 * three services exporting once a minute, written by the real S3MetricExporter (partitionTime
 * 'data') into a local directory that mirrors the bucket, in three layouts by batch age:
 * per-minute objects (1 min for every format: 4,320 objects per format), each format at its
 * default batch age (read from FORMAT_ROWS[format].maxBatchAgeMillis: Parquet 10 min, the OTLP
 * formats 1 min, whose objects are the per-minute ones, reused), and hourly batches (1 h, sealed
 * earlier at the default 8 MiB).
 *  1. Stored bytes per data point: Parquet, OTLP JSON + zstd, OTLP protobuf + zstd, per layout
 *     (targets at the default batch ages and hourly; per-minute objects reported only).
 *  2. "Sum of a counter by service and hour" in DuckDB (in process) over the day: Parquet
 *     (read_parquet, hive_partitioning) against the OTLP JSON + zstd objects as stored (DuckDB
 *     reads .json.zst itself) and uncompressed .json; every answer must equal the sums taken
 *     from the generator.
 *  3. Export into the real S3 server (S3_ENDPOINT): data points per second, 'parquet' against
 *     'otlp-json', zstd, exporter defaults, with the compression worker's CPU time per point.
 *  4. Event-loop stall while a 16 MiB batch (OTLP JSON size) is sealed, made into Parquet in the
 *     worker and uploaded (stub S3 and the real server), beside the same batch as OTLP JSON.
 *  5. The compression worker's peak heap and the process's peak RSS while one batch becomes
 *     Parquet (src/compression/body-worker.js, started as the exporter starts it), relative to the
 *     batch's OTLP JSON size, against docs/parquet.md's 10–15×.
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
import { countDataPoints, otlpJsonRecords } from '../src/encoding/format.js';
import { type Compression, FORMAT_ROWS, type Format } from '../src/formats.js';
import { S3MetricExporter } from '../src/index.js';
import { DirectoryS3 } from './lib/directory-s3.js';
import { exportAllTimed, exportOnce, shutdownLossless } from './lib/export-once.js';
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
import { newWorkerThread, ownCpuMillis, threadCpuMillis, threadIds } from './lib/thread-cpu.js';

const args = parseArgs(process.argv.slice(2));
const suiteStarted = performance.now();

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

/** ~1 MiB of OTLP JSON per export, as in the event-loop suite. */
const BATCH_SERIES = 1_700;
const LARGE_BATCH_BYTES = 16 * MiB;
const DEFAULT_BATCH_BYTES = 8 * MiB;
const STALL_ROUNDS = args.quick ? 2 : 5;
const STUB_DELAY_MILLIS = 5;
const GAP_MILLIS = 1;
/** About as long as the Parquet flush of the 16 MiB batch: the noise floor of such a window. */
const IDLE_MILLIS = 3_000;
const MEMORY_ROUNDS = args.quick ? 1 : 2;

/** As in the end-to-end suite. */
const S3_SERIES = 5_000;
const S3_EXPORTS = args.quick ? 8 : 24;
const S3_ROUNDS = args.quick ? 1 : 3;
const S3_BUFFER_BYTES = 256 * 1024 * 1024;

const DOCS_HEAP_FACTOR = 15;

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

/** The large batch: ~1 MiB exports until 16 MiB of OTLP JSON (the event-loop suite's batch). */
const batchSource = realisticSource(BATCH_SERIES, 7);
const batchExports: ResourceMetrics[] = [];
const batchRecords: Buffer[] = [];
let batchBytes = 0;
while (otlpJsonRecords.overhead(batchRecords.length) + batchBytes < LARGE_BATCH_BYTES) {
  batchSource.record();
  const rm = await batchSource.collect();
  batchExports.push(rm);
  const record = otlpJsonRecords.encode(rm);
  batchRecords.push(record);
  batchBytes += record.length;
}
await batchSource.shutdown();
const batchPoints = batchExports.reduce((n, rm) => n + countDataPoints(rm), 0);
/** The first exports of the large batch that make the default 8 MiB batch. */
const defaultBatchCount = (() => {
  let bytes = 0;
  let n = 0;
  while (
    n < batchRecords.length &&
    bytes + (batchRecords[n] as Buffer).length + otlpJsonRecords.overhead(n + 1) <=
      DEFAULT_BATCH_BYTES
  ) {
    bytes += (batchRecords[n] as Buffer).length;
    n++;
  }
  return n;
})();

interface Contender {
  key: 'parquet' | 'json-zstd' | 'proto-zstd' | 'json';
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
  {
    key: 'json',
    label: 'OTLP JSON, uncompressed (.json)',
    format: 'otlp-json',
    compression: 'none',
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
/** The exporter's default batch age of a contender's format (src/formats.ts), in exports. */
const defaultMinutes = (c: Contender) => exportsPerObject(FORMAT_ROWS[c.format].maxBatchAgeMillis);
const DEFAULTS_LABEL = (() => {
  const parquet = defaultMinutes(contender('parquet'));
  const json = defaultMinutes(contender('json-zstd'));
  const proto = defaultMinutes(contender('proto-zstd'));
  const otlp =
    json === proto ? `OTLP ${ageText(json)}` : `JSON ${ageText(json)}, protobuf ${ageText(proto)}`;
  return `default batch ages (Parquet ${ageText(parquet)}, ${otlp})`;
})();

type LayoutKey = 'minute' | 'default' | 'hour';
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
    key: 'minute',
    label: 'per-minute objects (1 min)',
    minutes: () => 1,
    contenders: ['parquet', 'json-zstd', 'proto-zstd', 'json'],
    queried: ['parquet', 'json-zstd', 'json'],
    rounds: QUERY_ROUNDS,
  },
  {
    // What a user gets who sets only the format, at a 60 s export interval.
    key: 'default',
    label: DEFAULTS_LABEL,
    minutes: defaultMinutes,
    contenders: ['parquet', 'json-zstd', 'proto-zstd', 'json'],
    queried: ['parquet', 'json-zstd', 'json'],
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
 * contender the same batch age share its stream (OTLP at its 1 min default is the per-minute
 * stream): written once, counted and queried once.
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

// ---------------------------------------------------------------------------------------------
// 1 + 2. A day of three services, stored in a local mirror by the real exporter, per batch age.

interface DayFigures {
  objects: number;
  points: number;
  storedBytes: number;
  /** CPU time of the exporters' compression workers, summed; undefined without /proc. */
  workerCpuMillis: number | undefined;
}

const root = await mkdtemp(join(tmpdir(), 'otel-s3-bench-parquet-'));
// The mirror holds over half a gigabyte in a full run: removed even when the suite fails.
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
  worker: string | undefined;
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
      const before = threadIds();
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
      list.push({ stream, exporter, worker: await newWorkerThread(before) });
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
    const figures: DayFigures = { objects: 0, points: 0, storedBytes: 0, workerCpuMillis: 0 };
    for (const list of perService) {
      const entry = list.find((x) => x.stream === stream);
      if (entry === undefined) continue;
      const cpu = threadCpuMillis(entry.worker);
      figures.workerCpuMillis =
        cpu === undefined || figures.workerCpuMillis === undefined
          ? undefined
          : figures.workerCpuMillis + cpu;
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

// 2. The query.
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
const jsonSql = (glob: string, compression: 'zstd' | 'uncompressed') => `
WITH requests AS (
  SELECT rm.resource.attributes AS resource,
         unnest(flatten(list_transform(rm.scopeMetrics,
           lambda s: list_filter(s.metrics, lambda m: m.name = '${COUNTER}')))) AS metric
  FROM (SELECT unnest(resourceMetrics) AS rm
        FROM read_json('${glob}', format = 'newline_delimited', compression = '${compression}',
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
  if (key === 'json-zstd') return jsonSql(join(dir, '**', '*.json.zst'), 'zstd');
  return jsonSql(join(dir, '**', '*.json'), 'uncompressed');
};
const QUERY_LABELS: Partial<Record<ContenderKey, string>> = {
  parquet: "Parquet: read_parquet('…/**/*.parquet', hive_partitioning = true)",
  'json-zstd': "OTLP JSON + zstd: read_json('…/**/*.json.zst', compression = 'zstd')",
  json: "OTLP JSON, uncompressed: read_json('…/**/*.json')",
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
 * same round, so the default layout's Parquet runs in the per-minute rounds, beside the
 * per-minute JSON objects it is compared with.
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
// 5. The worker's peak memory while it makes one body.

interface MemoryRun {
  batchBytes: number;
  points: number;
  /** Worker V8 heap in use before the job (after a warm-up job) and at its peak. */
  heapBefore: number;
  heapPeak: number;
  /** Peak of the worker's committed V8 heap. */
  heapCommittedPeak: number;
  /** Process RSS before the job and at its peak (the main thread idles meanwhile). */
  rssBefore: number;
  rssPeak: number;
  millis: number;
  /** Heap samples taken (the worker answers between its own steps, by interrupt). */
  samples: number;
}

/** An ArrayBuffer of its own per record (the exporter transfers the records to the worker). */
const ownedCopies = (records: readonly Buffer[]) =>
  records.map((r) => {
    const copy = new Uint8Array(r.length);
    copy.set(r);
    return copy.buffer;
  });

async function workerMemory(
  body: 'parquet' | 'framed',
  records: readonly Buffer[],
  points: number,
): Promise<MemoryRun> {
  // The exporter's worker, made as createBodyMaker() makes it.
  const worker = new Worker(new URL('../src/compression/body-worker.js', import.meta.url), {
    workerData: { body, compression: 'zstd', level: 3, zstdEngine },
    resourceLimits: { maxYoungGenerationSizeMb: 2 },
  });
  await new Promise((resolve) => worker.once('online', resolve));
  const job = (id: number, buffers: ArrayBuffer[], lengths: number[]) =>
    new Promise<void>((resolve, reject) => {
      worker.once('message', (reply: { error?: string }) =>
        reply.error === undefined ? resolve() : reject(new Error(reply.error)),
      );
      worker.postMessage(
        {
          id,
          records: buffers,
          lengths,
          framing: otlpJsonRecords.framing,
          sha256: true,
          crc32: false,
        },
        buffers,
      );
    });
  // Warm-up: the modules and the writer's code are loaded, as in a running exporter.
  const warm = records.slice(0, 1);
  await job(
    1,
    ownedCopies(warm),
    warm.map((r) => r.length),
  );
  const buffers = ownedCopies(records);
  const lengths = records.map((r) => r.length);
  await collectGarbage();
  await sleep(100);
  const heapBefore = (await worker.getHeapStatistics()).used_heap_size;
  const rssBefore = process.memoryUsage.rss();
  let rssPeak = rssBefore;
  let heapPeak = heapBefore;
  let heapCommittedPeak = 0;
  let samples = 0;
  let done = false;
  const rssTimer = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  }, 2);
  const heapLoop = (async () => {
    while (!done) {
      const h = await worker.getHeapStatistics();
      heapPeak = Math.max(heapPeak, h.used_heap_size);
      heapCommittedPeak = Math.max(heapCommittedPeak, h.total_heap_size);
      samples++;
      await sleep(5);
    }
  })();
  const started = performance.now();
  await job(2, buffers, lengths);
  const millis = performance.now() - started;
  done = true;
  await heapLoop;
  clearInterval(rssTimer);
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  await worker.terminate();
  return {
    batchBytes: lengths.reduce((a, b) => a + b, 0) + otlpJsonRecords.overhead(lengths.length),
    points,
    heapBefore,
    heapPeak,
    heapCommittedPeak,
    rssBefore,
    rssPeak,
    millis,
    samples,
  };
}

const memoryRuns = new Map<string, MemoryRun[]>();
{
  const eight = batchRecords.slice(0, defaultBatchCount);
  const eightPoints = batchExports
    .slice(0, defaultBatchCount)
    .reduce((n, rm) => n + countDataPoints(rm), 0);
  const cases: [string, 'parquet' | 'framed', Buffer[], number][] = [
    ['Parquet, 8 MiB batch', 'parquet', eight, eightPoints],
    ['Parquet, 16 MiB batch', 'parquet', batchRecords, batchPoints],
    ['OTLP JSON + zstd, 16 MiB batch (reference)', 'framed', batchRecords, batchPoints],
  ];
  for (let round = 0; round < MEMORY_ROUNDS; round++) {
    for (const [name, body, records, points] of cases) {
      progress(`parquet: worker memory, ${name}, round ${round + 1}/${MEMORY_ROUNDS}`);
      memoryRuns.set(name, [
        ...(memoryRuns.get(name) ?? []),
        await workerMemory(body, records, points),
      ]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Event-loop stall while the 16 MiB batch is sealed, made and uploaded.

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
// 3. Export into the real S3 server.

interface Throughput {
  seconds: number;
  points: number;
  objects: number;
  storedBytes: number;
  listedBytes: number;
  /** CPU time of the exporter's compression worker and of the main thread over the run. */
  workerCpuMillis: number | undefined;
  mainCpuMillis: number | undefined;
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
    const before = threadIds();
    const exporter = new S3MetricExporter({
      bucket,
      prefix,
      format,
      compression: 'zstd',
      flushTimeoutMillis: 300_000,
      // As in the end-to-end suite: room for the whole run (the Parquet worker falls behind).
      maxBufferedBytes: S3_BUFFER_BYTES,
      endpoint: s3.endpoint,
      region: s3.region,
      credentials: s3.credentials,
    });
    const worker = await newWorkerThread(before);
    await collectGarbage();
    const worker0 = threadCpuMillis(worker);
    const main0 = ownCpuMillis();
    const seconds = await exportAllTimed(exporter, list);
    const worker1 = threadCpuMillis(worker);
    const main1 = ownCpuMillis();
    const stats = await shutdownLossless(exporter, format);
    return {
      seconds,
      points: stats.pointsUploaded,
      objects: stats.batchesUploaded,
      storedBytes: stats.bytesUploaded,
      listedBytes: await listedBytes(client, bucket, `${prefix}/`),
      workerCpuMillis:
        worker0 === undefined || worker1 === undefined ? undefined : worker1 - worker0,
      mainCpuMillis: main0 === undefined || main1 === undefined ? undefined : main1 - main0,
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
// The report.

const ratioText = (r: number) => `${r.toFixed(2)}×`;
const perPoint = (l: LayoutKey, key: ContenderKey) =>
  dayOf(l, key).storedBytes / dayOf(l, key).points;
const vsJson = (l: LayoutKey, key: ContenderKey) => perPoint(l, key) / perPoint(l, 'json-zstd');
const pointsPerObject = (l: LayoutKey, key: ContenderKey = 'parquet') =>
  dayOf(l, key).points / dayOf(l, key).objects;
const footerPerPoint = (l: LayoutKey) =>
  (footerBytes.get(streamOf(l, 'parquet')) ?? 0) / dayOf(l, 'parquet').points;
const workerPerPoint = (l: LayoutKey, key: ContenderKey) => {
  const d = dayOf(l, key);
  return d.workerCpuMillis === undefined
    ? 'n/a'
    : `${fmtNum((d.workerCpuMillis * 1000) / d.points)} µs`;
};
const minutesOf = (l: LayoutKey, key: ContenderKey) => layout(l).minutes(contender(key));
/** "10 min", or "1 min (= per-minute objects)" where an earlier layout wrote the same stream. */
const ageCell = (l: LayoutKey, key: ContenderKey) => {
  const shared = sharedFrom(l, key);
  return `${ageText(minutesOf(l, key))}${shared === undefined ? '' : ` (= ${shared.label.replace(/ \(.*\)$/, '')})`}`;
};
/** A speed-up as text: "12.3× faster", or "0.66× (Parquet 1.52× slower)". */
const speedText = (r: number) =>
  r >= 1 ? `${r.toFixed(2)}× faster` : `${r.toFixed(2)}× (Parquet ${(1 / r).toFixed(2)}× slower)`;

const sizeTable: Table = {
  columns: [
    `layout (${fmtInt(dayOf('minute', 'parquet').points)} points of a day)`,
    'format',
    'batch age',
    'objects',
    'points per object',
    'bytes/point',
    'vs JSON + zstd',
    'of it Parquet footers',
    'stored',
    'worker CPU per point',
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
      workerPerPoint(l.key, k),
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
    `contender (${fmtMiB(batchBytes)} OTLP JSON, ${fmtInt(batchPoints)} points)`,
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

const memoryFactor = (r: MemoryRun) => ({
  heap: r.heapPeak / r.batchBytes,
  heapGrowth: (r.heapPeak - r.heapBefore) / r.batchBytes,
  committed: r.heapCommittedPeak / r.batchBytes,
  rss: (r.rssPeak - r.rssBefore) / r.batchBytes,
});
const memoryTable: Table = {
  columns: [
    'worker job (one batch)',
    'batch (OTLP JSON)',
    'points',
    'worker heap peak (in use)',
    '× batch',
    'growth over the job × batch',
    'committed heap peak × batch',
    'process RSS growth',
    '× batch',
    'job time',
  ],
  rows: [...memoryRuns].map(([name, list]) => {
    // Each figure at its worst round (a peak is what has to be budgeted), as the target reads it.
    const worst = (f: (r: MemoryRun) => number) => Math.max(...list.map(f));
    const first = list[0] as MemoryRun;
    return [
      name,
      fmtMiB(first.batchBytes),
      fmtNum(first.points),
      fmtMiB(worst((r) => r.heapPeak)),
      `${fmtNum(worst((r) => memoryFactor(r).heap))}×`,
      `${fmtNum(worst((r) => memoryFactor(r).heapGrowth))}×`,
      `${fmtNum(worst((r) => memoryFactor(r).committed))}×`,
      fmtMiB(worst((r) => r.rssPeak - r.rssBefore)),
      `${fmtNum(worst((r) => memoryFactor(r).rss))}×`,
      fmtMs(median(list.map((x) => x.millis))),
    ];
  }),
};

const throughputTable: Table = {
  columns: [
    'format (zstd, exporter defaults)',
    'data points/s (median)',
    'spread',
    'objects',
    'stored (listed)',
    'bytes/point',
    'worker CPU per point',
    'main thread CPU per point',
  ],
  rows: [...throughput].map(([format, list]) => {
    const rate = summarize(list.map((r) => r.points / r.seconds));
    const first = list[0] as Throughput;
    const cpu = (f: (r: Throughput) => number | undefined) => {
      const values = list.map(f).filter((v): v is number => v !== undefined);
      return values.length === list.length ? `${fmtNum(median(values))} µs` : 'n/a';
    };
    return [
      format,
      fmtRate(rate.median),
      fmtPct(rate.spreadPct),
      String(first.objects),
      `${fmtMiB(first.listedBytes)}${first.listedBytes === first.storedBytes ? ' = stats' : ' ≠ stats!'}`,
      fmtNum(first.storedBytes / first.points),
      cpu((r) =>
        r.workerCpuMillis === undefined ? undefined : (r.workerCpuMillis * 1000) / r.points,
      ),
      cpu((r) => (r.mainCpuMillis === undefined ? undefined : (r.mainCpuMillis * 1000) / r.points)),
    ];
  }),
};

// Targets. Per-minute objects are reported in the tables, not held to a target: no format's
// default makes them for Parquet any more; they show why its default is longer.
const GATED: LayoutKey[] = ['default', 'hour'];
const objectsText = (l: LayoutKey, key: ContenderKey) =>
  `${fmtInt(dayOf(l, key).objects)} objects, ${ageText(minutesOf(l, key))}`;
const sizeTargets = (l: LayoutKey): Target[] => {
  const ratio = vsJson(l, 'parquet');
  return [
    {
      name: `Parquet bytes/point ≤ OTLP JSON + zstd, a day at ${layout(l).label}`,
      measured: `${ratioText(ratio)} (${fmtNum(perPoint(l, 'parquet'))} vs ${fmtNum(perPoint(l, 'json-zstd'))} B; protobuf + zstd ${fmtNum(perPoint(l, 'proto-zstd'))} B; ~${fmtInt(pointsPerObject(l))} points per Parquet object, ~${fmtInt(pointsPerObject(l, 'json-zstd'))} per JSON object)`,
      threshold: '≤ 1×',
      pass: ratio <= 1,
    },
    {
      name: `stretch: Parquet bytes/point ≤ 0.5× OTLP JSON + zstd, a day at ${layout(l).label}`,
      measured: ratioText(ratio),
      threshold: '≤ 0.5× (stretch)',
      pass: ratio <= 0.5,
    },
  ];
};
const queryTarget = (l: LayoutKey): Target => {
  const parquet = median(queryMillis.get(streamOf(l, 'parquet')) ?? []);
  const json = median(queryMillis.get(streamOf(l, 'json-zstd')) ?? []);
  const plain = layout(l).queried.includes('json')
    ? `; vs uncompressed JSON ${speedText(speedup(l, 'json'))}`
    : '';
  return {
    name: `DuckDB query over a day at ${layout(l).label}: Parquet (${objectsText(l, 'parquet')}) vs OTLP JSON + zstd (${objectsText(l, 'json-zstd')})`,
    measured: `${speedText(speedup(l, 'json-zstd'))} (${fmtMs(parquet)} vs ${fmtMs(json)})${plain}`,
    threshold: '≥ 10×',
    pass: speedup(l, 'json-zstd') >= 10,
  };
};
const targets: Target[] = [
  ...GATED.flatMap(sizeTargets),
  {
    name: 'DuckDB answers the same on every format and batch age as the generator',
    measured: QUERIES.map((q) => `${q.stream} ${sameAnswer(q) ? 'same' : 'DIFFERS'}`).join(', '),
    threshold: `all equal (${expectedRows.length} service × hour sums)`,
    pass: QUERIES.every(sameAnswer),
    required: true,
  },
  ...GATED.map(queryTarget),
];
if (s3 === undefined) {
  targets.push({
    name: 'export into real S3: Parquet data points/s vs otlp-json (zstd)',
    measured: `not measured: no S3_ENDPOINT (${S3_SKIP_REASON})`,
    threshold: '≥ 50%',
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
  const workerPerPoint = (f: Format) => {
    const values = (throughput.get(f) ?? []).map((r) =>
      r.workerCpuMillis === undefined ? undefined : (r.workerCpuMillis * 1000) / r.points,
    );
    return values.every((v) => v !== undefined) ? median(values as number[]) : undefined;
  };
  const wp = workerPerPoint('parquet');
  const wj = workerPerPoint('otlp-json');
  targets.push({
    name: 'export into real S3: Parquet data points/s vs otlp-json (zstd)',
    measured: `${(ratio * 100).toFixed(1)}% (${fmtRate(rateOf('parquet'))} vs ${fmtRate(rateOf('otlp-json'))})${wp === undefined || wj === undefined ? '' : `; worker CPU ${fmtNum(wp)} vs ${fmtNum(wj)} µs per point`}`,
    threshold: '≥ 50%',
    pass: ratio >= 0.5,
  });
}
for (const [name, list] of stalls) {
  if (!name.startsWith('Parquet')) continue;
  const stall = stallOf(list);
  const onCpu = onCpuOf(list);
  const maxDelay = median(list.map((r) => r.delay.maxMillis));
  // As in the event-loop suite: with schedstat, the main thread's own CPU time inside its longest
  // stall (the rest of a stall it was ready but waiting for a core: the S3 server and the worker
  // share 2 cores); the wall-clock figures beside it.
  const figure = onCpu ?? stall;
  targets.push({
    name: `event-loop stall while a 16 MiB batch becomes Parquet and is uploaded, ${name}`,
    measured: `${onCpu === undefined ? '' : `on our thread's CPU ${stallText(onCpu)}; `}longest stall ${stallText(stall)}, max delay ${fmtMs(maxDelay)}, longest main-thread GC pause ${fmtMs(median(list.map((r) => r.gcMaxMillis)))} (idle ${fmtMs(IDLE_MILLIS)}: stall ${stallText(idleStall)}, max delay ${fmtMs(median(idles.map((d) => d.maxMillis)))})`,
    threshold: '≤ 5 ms',
    pass: figure <= 5,
  });
}
{
  // Per batch size, the worst round of each figure (a peak is what has to be budgeted). The docs'
  // figure is the transient cost of one file: the heap's growth over the job. The worker's heap
  // before the job (code, what earlier jobs left for the collector) is in the peak beside it.
  const parquetCases = [...memoryRuns].filter(([name]) => name.startsWith('Parquet'));
  const worst = (list: MemoryRun[], f: (r: MemoryRun) => number) => Math.max(...list.map(f));
  const growth = Math.max(
    ...parquetCases.map(([, list]) => worst(list, (r) => memoryFactor(r).heapGrowth)),
  );
  targets.push({
    name: "worker's heap growth while making Parquet, × the batch's OTLP JSON size (docs/parquet.md: 10–15×)",
    measured: parquetCases
      .map(
        ([name, list]) =>
          `${name.replace(/^Parquet, | batch$/g, '')}: ${fmtNum(worst(list, (r) => memoryFactor(r).heapGrowth))}× (peak heap in use ${fmtNum(worst(list, (r) => memoryFactor(r).heap))}×, process RSS growth ${fmtNum(worst(list, (r) => memoryFactor(r).rss))}×)`,
      )
      .join('; '),
    threshold: `≤ ${DOCS_HEAP_FACTOR}× at each size`,
    pass: growth <= DOCS_HEAP_FACTOR,
  });
}

gcObserver.disconnect();
const suiteSeconds = (performance.now() - suiteStarted) / 1000;
emitResult({
  suite: 'parquet',
  title:
    "format: 'parquet' against OTLP JSON and protobuf (size, query, throughput, stall, memory)",
  tables: [
    sizeTable,
    queryTable,
    ...(s3 === undefined ? [] : [throughputTable]),
    stallTable,
    memoryTable,
  ],
  targets,
  notes: [
    `Data: the realistic generator (bench/lib/realistic-metrics.ts: HTTP counters, explicit and exponential histograms, k8s pod gauges, semantic-convention attributes), three services (${SERVICES.map((s) => `${s.name} ${s.series} series`).join(', ')}) with resources of their own, recorded and collected once a minute (cumulative values grow through the day), re-timed to the minutes of ${new Date(DAY_START).toISOString().slice(0, 10)} UTC.`,
    `Day: ${HOURS} hours${args.quick ? ' (--quick: the full run has 24)' : ''} × 60 minutes × ${services.length} services = ${fmtInt(dayOf('minute', 'parquet').points)} points. Every export goes into one exporter per service and stream (the real S3MetricExporter, partitionTime 'data', prefix lake/) that stores into a local directory as a mirror of the bucket. A stream is a format at a batch age: with one export a minute, an age of n minutes is a forceFlush() after every n exports (the exporter's own timer is not waited for), and the default 8 MiB maxBatchBytes can seal a batch earlier. Layouts: ${LAYOUTS.map((l) => `${l.label}: ${l.contenders.map((k) => `${contender(k).key} ${ageText(minutesOf(l.key, k))}`).join(', ')}`).join('; ')}. The default batch ages are read from the exporter (FORMAT_ROWS[format].maxBatchAgeMillis in src/formats.ts: ${[...new Set(CONTENDERS.map((c) => c.format))].map((f) => `${f} ${fmtInt(FORMAT_ROWS[f].maxBatchAgeMillis)} ms`).join(', ')}); where a layout gives a format the same age as an earlier layout it reuses that stream's objects (written, counted and queried once), so ${STREAMS.length} streams make the ${LAYOUTS.reduce((n, l) => n + l.contenders.length, 0)} layout × format cells. The flushes fall on whole multiples of the age from midnight (aligned with the hours when the age divides 60). Parquet lands in hour partitions (its default layout), OTLP in minute partitions (the default layout). Worker CPU per point: the exporters' compression worker threads (Linux schedstat), summed over the services.`,
    `Parquet footers (schema and column-chunk metadata, read from the files): ${LAYOUTS.map((l) => `${ageText(minutesOf(l.key, 'parquet'))} objects ${fmtInt((footerBytes.get(streamOf(l.key, 'parquet')) ?? 0) / dayOf(l.key, 'parquet').objects)} bytes per file, ${fmtNum(footerPerPoint(l.key))} of ${fmtNum(perPoint(l.key, 'parquet'))} bytes per point`).join('; ')}.`,
    `Targets: bytes per point and the query speed-up are held for ${GATED.map((l) => layout(l).label).join(' and ')}. Per-minute objects are reported in the tables only (no target): Parquet's default no longer makes them, and they show why.`,
    `Query: DuckDB (@duckdb/node-api) in process, a fresh in-memory database per run (2 threads), the files in the page cache after one untimed run per stream; ${QUERY_GROUPS.map((g) => `${g.rounds} rounds over ${g.label} (${g.streams.join(', ')})`).join(', ')}: layouts that share a stream are timed in the same rounds, and fewer rounds where DuckDB needs seconds for large JSON objects; order alternated, the speed-up is the median of the per-round ratios. DuckDB reads zstd-compressed JSON itself (read_json compression = 'zstd'), so the OTLP JSON side queries the .json.zst objects as stored; the uncompressed .json row shows what decompression costs. The JSON query names only the fields it reads (columns = {...}), the best case for read_json. Hours are taken from the points' times (epoch), not from the paths, on both sides.`,
    s3 === undefined
      ? `Real S3 throughput not measured: ${S3_SKIP_REASON}.`
      : `Real S3: ${S3_EXPORTS} exports of ${fmtNum(S3_SERIES)} series (as the end-to-end suite), exporter defaults (8 MiB batches, zstd level 3, 4 uploads in flight) but maxBufferedBytes ${fmtMiB(S3_BUFFER_BYTES)} (room for the whole run: the Parquet worker falls behind the exports), timed from the first export() to forceFlush() resolving; ${S3_ROUNDS} round(s) after a warm-up, order alternated. CPU per point: the exporter's compression worker thread and the main thread, Linux schedstat.`,
    `Event loop: the 16 MiB batch (${batchExports.length} exports) exported first, then forceFlush() under the probe (monitorEventLoopDelay at 1 ms resolution plus a 1 ms interval that records gaps > ${GAP_MILLIS} ms); one small flush on the same exporter before, as warm-up; ${STALL_ROUNDS} rounds, medians. The target, as in the event-loop suite: the main thread's own CPU time within the longest stall of the flush when Linux schedstat is readable, the wall-clock stall and the max delay beside it; "waiting for a CPU" is the part of that stall the main thread was runnable but not running (schedstat), the rest it was on a CPU or blocked (e.g. in a GC pause, waiting for V8's helper threads). Main-thread GC: perf_hooks 'gc' entries that started during the flush; a Parquet flush lasts seconds, long enough for the main thread's own periodic collections (of the exports it made) to fall into it, and their wall time stretches while the worker keeps a core busy.`,
    `Memory: the exporter's worker (src/compression/body-worker.js, started as createBodyMaker() starts it: zstd level 3, ${zstdEngine}, a 2 MB young generation), one warm-up job, then one batch; its V8 heap sampled with worker.getHeapStatistics() every ~5 ms (answered by interrupt while the worker computes), the process's RSS every 2 ms (the main thread idles meanwhile). ${MEMORY_ROUNDS} round(s), each figure at its worst round (sampling can only miss a peak: the figures are lower bounds). "× batch" is relative to the batch's OTLP JSON bytes; growth over the job = peak in use − in use just before it (the transient cost docs/parquet.md states as 10–15×, and what the target holds); the heap in use before the job is the worker's code and what earlier jobs left for the collector.`,
    `Suite time inside the child: ${suiteSeconds.toFixed(0)} s.`,
  ],
  data: {
    quick: args.quick,
    day: Object.fromEntries(day),
    query: { millis: Object.fromEntries(queryMillis), expectedRows: expectedRows.length },
    parquetFooterBytes: Object.fromEntries(footerBytes),
    throughput: Object.fromEntries(throughput),
    stalls: Object.fromEntries(
      [...stalls].map(([k, list]) => [
        k,
        list.map(({ delay, ...r }) => ({ ...r, maxMillis: delay.maxMillis })),
      ]),
    ),
    memory: Object.fromEntries(memoryRuns),
    suiteSeconds,
  },
});
