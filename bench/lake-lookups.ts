/**
 * Issue 33, item 2: the lookups people make in a lake of spans and log records, in DuckDB over a
 * realistic day, Parquet against OTLP/JSON + zstd, in one run:
 *  1. A day of a 20-service shop (bench/lib/lake-day.ts: each service a few instances, traces of
 *     5–30 HTTP server, HTTP client and database spans, the log records of those requests in the
 *     traces' context, about 1 % of spans in error) is written by the real S3SpanExporter and
 *     S3LogRecordExporter, one per instance, signal and format, into a local directory that
 *     mirrors the bucket (bench/lib/directory-s3.ts), at each format's default batch age
 *     (Parquet 10 min, OTLP 1 min: forceFlush() at those marks of the day's clock) and with
 *     partitionTime 'data' (each batch under the hour of its data).
 *  2. Three lookups over that mirror, each in a fresh in-memory DuckDB (no cache carried over),
 *     warmed once (read_json and DuckDB's floors too), then interleaved rounds (the same number for every read), medians
 *     and ratios: every span of one trace by
 *     TraceId over the day; the error spans of one service in one hour (that hour's path); the
 *     log records of one trace over the day. read_parquet (the queries of docs/parquet.md) against
 *     read_json over the .json.zst objects, unnesting resourceSpans / scopeSpans / spans (or the
 *     logs' levels) with the columns given (faster than letting DuckDB detect them). Each answer
 *     is checked against what the generator made (the span ids, the records' span ids and
 *     bodies). Bytes read: what the process read from files during the query (/proc/self/io
 *     rchar; DuckDB 1.5's profiling `total_bytes_read` counts no local file reads).
 *  3. After compaction: a copy of the day's Parquet files compacted by `otel-s3 compact` from
 *     dist/ (the suite builds it; one process a signal, --settle 0, on the directory store), as
 *     users run it: each hour's files merged into one sorted file with TraceId bloom filters, the
 *     inputs deleted. Its wall and CPU time (and peak RSS) are reported; the same three lookups
 *     run over what is left (the outputs only: checked, with every span and record once).
 *  4. Bloom filters on TraceId (which the exporter's files have): the day's Parquet files
 *     rewritten by pyarrow (OTEL_S3_PYARROW_PYTHON; the same rows in the same order, the same
 *     encodings and zstd) without and with a TraceId bloom filter (ndv = the file's distinct ids,
 *     fpp 1 %); and, for reference, pyarrow's stand-in for compaction used before it existed
 *     (each hour's files as one file, sorted as the exporter sorts), without and with the filter.
 *
 * Targets: issue 33's: each lookup at least 20× faster than read_json over the exporter's files,
 * and at least 100× over the compacted outputs; every answer equal to what was generated.
 * Flags: --hours=N (24), --traces-per-second=X (5), --instances=N (per service), --services=N,
 * --rounds=N (read_json's as read_parquet's, each after one untimed run), --repeats=N (runs a round
 * of a lookup under 250 ms), --keep (leave the mirror and print where), --no-bloom (no pyarrow
 * rewrites).
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { cp, mkdtemp, open, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import type { ExportResult } from '@opentelemetry/core';
import { S3LogRecordExporter, S3SpanExporter } from '../src/index.js';
import { OUTPUT_EXTENSION } from '../src/layout/outputs.js';
import type { LogRecordLike } from '../src/signals/logs/log-record.js';
import type { SpanLike } from '../src/signals/traces/span.js';
import { ROOT, runNode } from './lib/child.js';
import { DirectoryS3 } from './lib/directory-s3.js';
import { fmtInt, fmtMiB, fmtMs, fmtNum, MiB } from './lib/format.js';
import { isError, LakeDay, type Trace } from './lib/lake-day.js';
import { emitResult, parseArgs, progress, type Target } from './lib/result.js';
import { readsAndFloors } from './lib/rounds.js';
import { median } from './lib/stats.js';

const args = parseArgs(process.argv.slice(2));
const flag = (name: string): string | undefined =>
  process.argv
    .slice(2)
    .find((a) => a.startsWith(`--${name}=`))
    ?.slice(name.length + 3);
const numberFlag = (name: string, fallback: number): number => {
  const v = flag(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    throw new Error(`--${name}=${v} is not allowed: a positive number`);
  }
  return n;
};
const suiteStarted = performance.now();

/** Issue 33's targets. */
const SPEEDUP = 20;
const COMPACTED_SPEEDUP = 100;

const HOURS = numberFlag('hours', args.quick ? 6 : 24);
const SERVICES = numberFlag('services', args.quick ? 8 : 20);
const INSTANCES = numberFlag('instances', 1);
/**
 * 5 traces a second: about 81 spans and 40 log records a second for the shop, 4 spans a second an
 * instance (docs/parquet.md, "Lookups": at 1 a second a lookup before compaction costs what
 * opening the day's files costs, whatever their layout).
 */
const TRACES_PER_SECOND = numberFlag('traces-per-second', args.quick ? 0.25 : 5);
const ROUNDS = numberFlag('rounds', args.quick ? 2 : 3);
/** A lookup (read_json's too) whose untimed first run took less than FAST_MILLIS runs REPEATS times a round. */
const FAST_MILLIS = 250;
const REPEATS = numberFlag('repeats', 5);
if (flag('json-rounds') !== undefined) {
  throw new Error(
    `--json-rounds=${flag('json-rounds')} is not allowed: read_json runs the rounds every read runs (--rounds=N)`,
  );
}
const KEEP = process.argv.includes('--keep');
const BLOOM = !process.argv.includes('--no-bloom');
/** The day: 2026-12-03 UTC. */
const DAY_START = Date.UTC(2026, 11, 3);
/** The formats' default batch ages, in minutes (FORMAT_ROWS' maxBatchAgeMillis). */
const PARQUET_MINUTES = 10;
const JSON_MINUTES = 1;
const BLOOM_FPP = 0.01;

const root = await mkdtemp(join(tmpdir(), 'otel-s3-bench-lookups-'));
if (!KEEP) process.once('exit', () => rmSync(root, { recursive: true, force: true }));
const dirOf = (variant: Variant, signal: Signal) => join(root, variant, signal);
type Signal = 'traces' | 'logs';
type Variant =
  | 'parquet'
  | 'json'
  | 'compacted'
  | 'pyarrow'
  | 'pyarrow-bloom'
  | 'hourly'
  | 'hourly-bloom';

// 1. The day, through the exporters.

const day = new LakeDay({
  startMillis: DAY_START,
  hours: HOURS,
  services: SERVICES,
  instancesPerService: INSTANCES,
  tracesPerSecond: TRACES_PER_SECOND,
  seed: 33,
});

type Exporter = S3SpanExporter | S3LogRecordExporter;
interface InstanceExporters {
  spans: { parquet: S3SpanExporter; json: S3SpanExporter };
  logs: { parquet: S3LogRecordExporter; json: S3LogRecordExporter };
}
const sinks = {
  parquet: new DirectoryS3(join(root, 'parquet')),
  json: new DirectoryS3(join(root, 'json')),
};
const common = {
  bucket: 'bench',
  compression: 'zstd' as const,
  // Filed under the hour of the data, as a day of real exports would be.
  partitionTime: 'data' as const,
  // Sealed by forceFlush() at each format's default batch age of the day's clock.
  maxBatchAgeMillis: 2 ** 31 - 1,
  maxBufferedBytes: 256 * MiB,
  flushTimeoutMillis: 300_000,
};
const exporters: InstanceExporters[] = day.instances.map(() => ({
  spans: {
    parquet: new S3SpanExporter({
      ...common,
      // No prefix: Parquet spans and log records are filed under a folder of their own, 'traces/'.
      prefix: '',
      format: 'parquet',
      s3Client: sinks.parquet.client,
    }),
    json: new S3SpanExporter({
      ...common,
      prefix: 'traces',
      format: 'otlp-json',
      s3Client: sinks.json.client,
    }),
  },
  logs: {
    parquet: new S3LogRecordExporter({
      ...common,
      // No prefix: Parquet spans and log records are filed under a folder of their own, 'logs/'.
      prefix: '',
      format: 'parquet',
      s3Client: sinks.parquet.client,
    }),
    json: new S3LogRecordExporter({
      ...common,
      prefix: 'logs',
      format: 'otlp-json',
      s3Client: sinks.json.client,
    }),
  },
}));

function exportOnce(exporter: Exporter, items: readonly unknown[]): Promise<void> {
  return new Promise((resolve, reject) =>
    exporter.export(items as never, (result: ExportResult) =>
      result.code === 0 ? resolve() : reject(result.error ?? new Error('export failed')),
    ),
  );
}

/** What the lookups must return, from the generator. */
const TARGET_MINUTE = Math.min(day.minutes - 1, Math.floor(day.minutes * 0.56)); // 13:26 of 24 h
interface Expected {
  traceId: string;
  spanIds: string[];
  /** `${SpanId}|${Body}` of each of the trace's log records. */
  logs: string[];
}
let bigTrace: Expected | undefined;
/** Error spans' ids, by `${service}|${hour}`. */
const errorSpans = new Map<string, string[]>();
const totals = { traces: 0, spans: 0, logs: 0, errorSpans: 0 };

const expectedOf = (t: Trace): Expected => ({
  traceId: t.traceId,
  spanIds: t.spans.map((s) => s.span.spanContext().spanId).sort(),
  logs: t.logs.map((l) => `${l.record.spanContext?.spanId}|${String(l.record.body)}`).sort(),
});

progress(
  `lookups: a day of ${HOURS} h, ${SERVICES} services × ${INSTANCES} instances, ${TRACES_PER_SECOND} traces/s, into ${root}`,
);
const writeStarted = performance.now();
for (let m = 0; m < day.minutes; m++) {
  const traces = day.tracesOfMinute(m);
  const spansOf: SpanLike[][] = day.instances.map(() => []);
  const logsOf: LogRecordLike[][] = day.instances.map(() => []);
  for (const t of traces) {
    totals.traces++;
    for (const { instance, span } of t.spans) {
      (spansOf[instance] as SpanLike[]).push(span);
      if (isError(span)) {
        totals.errorSpans++;
        const key = `${day.instances[instance]?.service}|${Math.floor(m / 60)}`;
        errorSpans.set(key, [...(errorSpans.get(key) ?? []), span.spanContext().spanId]);
      }
    }
    for (const { instance, record } of t.logs) (logsOf[instance] as LogRecordLike[]).push(record);
    totals.spans += t.spans.length;
    totals.logs += t.logs.length;
  }
  if (m === TARGET_MINUTE) {
    // The largest trace of the minute that has log records.
    const big = traces.reduce((a, b) => (b.spans.length > a.spans.length ? b : a));
    bigTrace = expectedOf(big);
  }
  await Promise.all(
    exporters.flatMap((e, i) => {
      const spans = spansOf[i] as SpanLike[];
      const logs = logsOf[i] as LogRecordLike[];
      return [
        ...(spans.length > 0
          ? [exportOnce(e.spans.parquet, spans), exportOnce(e.spans.json, spans)]
          : []),
        ...(logs.length > 0
          ? [exportOnce(e.logs.parquet, logs), exportOnce(e.logs.json, logs)]
          : []),
      ];
    }),
  );
  const flushes: Promise<void>[] = [];
  if ((m + 1) % JSON_MINUTES === 0 || m === day.minutes - 1) {
    for (const e of exporters) flushes.push(e.spans.json.forceFlush(), e.logs.json.forceFlush());
  }
  if ((m + 1) % PARQUET_MINUTES === 0 || m === day.minutes - 1) {
    for (const e of exporters)
      flushes.push(e.spans.parquet.forceFlush(), e.logs.parquet.forceFlush());
  }
  await Promise.all(flushes);
  if ((m + 1) % 60 === 0) {
    progress(
      `lookups: hour ${(m + 1) / 60}/${HOURS} written (${((performance.now() - writeStarted) / 1000).toFixed(0)} s)`,
    );
  }
}
interface Stored {
  objects: number;
  bytes: number;
  items: number;
}
const stored = new Map<string, Stored>();
for (const signal of ['spans', 'logs'] as const) {
  for (const format of ['parquet', 'json'] as const) {
    const s: Stored = { objects: 0, bytes: 0, items: 0 };
    for (const e of exporters) {
      const exporter = e[signal][format];
      const stats = exporter.stats();
      await exporter.shutdown();
      if (stats.pointsDropped > 0 || stats.batchesUploaded !== stats.batchesSealed) {
        throw new Error(`${signal} ${format}: lost data: ${JSON.stringify(stats)}`);
      }
      s.objects += stats.batchesUploaded;
      s.bytes += stats.bytesUploaded;
      s.items += stats.pointsUploaded;
    }
    const want = signal === 'spans' ? totals.spans : totals.logs;
    if (s.items !== want) throw new Error(`${signal} ${format}: ${s.items} stored, ${want} made`);
    stored.set(`${signal}|${format}`, s);
  }
}
const writeSeconds = (performance.now() - writeStarted) / 1000;
progress(`lookups: the day took ${writeSeconds.toFixed(0)} s to write`);
if (bigTrace === undefined) throw new Error('no trace to look up');

/** The hour and service of the error lookup: the hour of the target minute, its service with the most error spans behind the entry points. */
const ERROR_HOUR = Math.floor(TARGET_MINUTE / 60);
const errorService = [...errorSpans]
  .filter(([k]) => k.endsWith(`|${ERROR_HOUR}`))
  .map(([k, ids]) => ({ service: k.split('|')[0] as string, ids }))
  .filter((e) => !['frontend', 'mobile-gateway', 'partner-api'].includes(e.service))
  .sort((a, b) => b.ids.length - a.ids.length)[0];
if (errorService === undefined) throw new Error(`no error span in hour ${ERROR_HOUR}`);

// 3 (made before the queries, so that all variants' rounds interleave). The day compacted by
// `otel-s3 compact` from dist/, as users run it, on a copy of the exporter's files.

interface Compaction {
  signal: Signal;
  millis: number;
  cpuMillis: number;
  maxRssBytes: number;
  partitions: number;
  inputs: number;
  inputBytes: number;
  items: number;
  outputs: { key: string; bytes: number; rows: number }[];
  deleted: number;
}
const compactions: Compaction[] = [];
progress('lookups: npm run build (the compactor runs from dist/)');
execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
await cp(join(root, 'parquet'), join(root, 'compacted'), { recursive: true });
for (const signal of ['traces', 'logs'] as const) {
  const run = await runNode('dist/cli.js', {
    // Prints the process's CPU time and peak RSS at exit (stderr).
    nodeFlags: ['--import', './bench/children/peak-rss.mjs'],
    args: [
      'compact',
      '--dir',
      join(root, 'compacted'),
      '--signal',
      signal,
      '--from',
      new Date(DAY_START).toISOString(),
      '--to',
      new Date(DAY_START + HOURS * 3_600_000).toISOString(),
      '--settle',
      '0',
      '--format',
      'json',
      '--no-progress',
    ],
    capMillis: 1_200_000,
  });
  // The preload prints at the exit of each thread (the compaction's worker, then the process):
  // the last line is the process's.
  const usage = run.stderr
    .split('\n')
    .filter((l) => l.startsWith('PEAK_RSS '))
    .at(-1);
  const line = run.stdout.find((l) => l.startsWith('{'));
  if (run.code !== 0 || line === undefined || usage === undefined) {
    throw new Error(`otel-s3 compact --signal ${signal} failed (${run.code}): ${run.stderr}`);
  }
  const report = JSON.parse(line) as {
    partitions: {
      partition: string;
      status: string;
      error?: string;
      read: { objects: number; bytes: number; points: number };
      written: { key: string; bytes: number; rows: number }[];
      deleted: number;
      skipped: unknown[];
    }[];
  };
  const bad = report.partitions.filter((p) => p.status !== 'compacted' || p.skipped.length > 0);
  if (bad.length > 0 || report.partitions.length !== HOURS) {
    throw new Error(`otel-s3 compact --signal ${signal}: ${JSON.stringify(bad).slice(0, 2000)}`);
  }
  const { millis, cpuMillis, maxRssBytes } = JSON.parse(usage.slice('PEAK_RSS '.length)) as {
    millis: number;
    cpuMillis: number;
    maxRssBytes: number;
  };
  const sum = (f: (p: (typeof report.partitions)[number]) => number) =>
    report.partitions.reduce((n, p) => n + f(p), 0);
  compactions.push({
    signal,
    millis,
    cpuMillis,
    maxRssBytes,
    partitions: report.partitions.length,
    inputs: sum((p) => p.read.objects),
    inputBytes: sum((p) => p.read.bytes),
    items: sum((p) => p.read.points),
    outputs: report.partitions.flatMap((p) => p.written),
    deleted: sum((p) => p.deleted),
  });
  progress(
    `lookups: otel-s3 compact --signal ${signal}: ${HOURS} hours in ${(millis / 1000).toFixed(1)} s (CPU ${(cpuMillis / 1000).toFixed(1)} s)`,
  );
}

// DuckDB compacting the same hours, as a cron job would (bench/children/duckdb-compact.mjs: one
// COPY … ORDER BY a sorted file per hour, one thread as ours has, zstd level 3 as ours writes):
// the peer of these runs.
interface PeerCompaction {
  signal: 'traces' | 'logs';
  millis: number;
  cpuMillis: number;
  maxRssBytes: number;
  outputBytes: number;
}
const peerCompactions: PeerCompaction[] = [];
/** Each table's row order (docs/parquet.md, "Row order and statistics"), as ORDER BY keys. */
const SORT_SQL = {
  traces: 'ServiceName, StatusCode, TraceId, Timestamp',
  logs: 'ServiceName, TraceId, Timestamp',
} as const;
for (const signal of ['traces', 'logs'] as const) {
  const out = join(root, 'duckdb-compacted', signal);
  const run = await runNode('bench/children/duckdb-compact.mjs', {
    nodeFlags: ['--import', './bench/children/peak-rss.mjs'],
    args: [join(root, 'parquet', signal), out, '1', 'zstd', SORT_SQL[signal]],
    capMillis: 1_200_000,
  });
  const usage = run.stderr
    .split('\n')
    .filter((l) => l.startsWith('PEAK_RSS '))
    .at(-1);
  if (run.code !== 0 || usage === undefined) {
    throw new Error(`DuckDB's compaction of ${signal} failed (${run.code}): ${run.stderr}`);
  }
  const { millis, cpuMillis, maxRssBytes } = JSON.parse(usage.slice('PEAK_RSS '.length)) as {
    millis: number;
    cpuMillis: number;
    maxRssBytes: number;
  };
  let outputBytes = 0;
  for (const f of await filesUnder(out, '.parquet')) outputBytes += (await stat(join(out, f))).size;
  peerCompactions.push({ signal, millis, cpuMillis, maxRssBytes, outputBytes });
  progress(
    `lookups: DuckDB's compaction of ${signal}: ${HOURS} hours in ${(millis / 1000).toFixed(1)} s (CPU ${(cpuMillis / 1000).toFixed(1)} s)`,
  );
}

// 4 (also before the queries). Rewritten by pyarrow.

const REWRITE = `
import sys, os
import pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq
mode, src, plain, bloom, fpp = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
plain_ids = {'TraceId', 'SpanId', 'ParentSpanId', 'Body'}
def write(table, rel):
    dictionary = [c for c in table.column_names if c not in plain_ids and not c.startswith('Links.')]
    ndv = max(1, pc.count_distinct(table.column('TraceId')).as_py())
    for out, options in ((plain, None), (bloom, {'TraceId': {'ndv': ndv, 'fpp': fpp}})):
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(table, path, compression='zstd', compression_level=3,
                       use_dictionary=dictionary, row_group_size=65536,
                       bloom_filter_options=options, store_schema=False)
names = sys.stdin.read().split()
if mode == 'files':
    # Each file as it is: the same rows in the same order.
    for rel in names:
        write(pq.read_table(os.path.join(src, rel)), rel)
else:
    # Each hour's files as one, sorted as the exporter sorts a batch: a stand-in for compaction.
    hours = {}
    for rel in names:
        hours.setdefault(os.path.dirname(rel), []).append(rel)
    for hour, rels in hours.items():
        table = pa.concat_tables([pq.read_table(os.path.join(src, r)) for r in rels])
        keys = ['ServiceName', 'StatusCode', 'TraceId', 'Timestamp'] if 'StatusCode' in table.column_names else ['ServiceName', 'TraceId', 'Timestamp']
        table = table.sort_by([(k, 'ascending') for k in keys])
        write(table, os.path.join(hour, 'compacted.parquet'))
`;

async function filesUnder(dir: string, ext: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((n) => n.endsWith(ext)).sort();
}
/** Bytes of the Parquet files' footers (metadata, its length, the magic) under a directory. */
async function footerBytes(dir: string): Promise<number> {
  let total = 0;
  const tail = Buffer.alloc(8);
  for (const name of await filesUnder(dir, '.parquet')) {
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
async function bytesUnder(dir: string, ext: string): Promise<number> {
  let total = 0;
  for (const f of await filesUnder(dir, ext)) total += (await stat(join(dir, f))).size;
  return total;
}

const python = process.env.OTEL_S3_PYARROW_PYTHON;
const bloomSkipped = !BLOOM
  ? '--no-bloom'
  : python === undefined
    ? 'OTEL_S3_PYARROW_PYTHON is not set'
    : undefined;
if (bloomSkipped === undefined) {
  const started = performance.now();
  const run = promisify(execFile);
  for (const signal of ['traces', 'logs'] as const) {
    const src = dirOf('parquet', signal);
    const files = await filesUnder(src, '.parquet');
    // Two processes, one a core: each file rewritten as it is; each hour's files as one.
    const halves = [files.filter((_, i) => i % 2 === 0), files.filter((_, i) => i % 2 === 1)];
    const jobs = [
      ...halves.map((list) => ({ mode: 'files', list, out: ['pyarrow', 'pyarrow-bloom'] })),
      { mode: 'hours', list: files, out: ['hourly', 'hourly-bloom'] },
    ];
    const rewrite = async (job: (typeof jobs)[number]) => {
      const child = run(
        python as string,
        [
          '-c',
          REWRITE,
          job.mode,
          src,
          dirOf(job.out[0] as Variant, signal),
          dirOf(job.out[1] as Variant, signal),
          String(BLOOM_FPP),
        ],
        { maxBuffer: 1 << 24 },
      );
      child.child.stdin?.end(job.list.join('\n'));
      await child;
    };
    await Promise.all([rewrite(jobs[0] as never), rewrite(jobs[1] as never)]);
    await rewrite(jobs[2] as never);
  }
  progress(
    `lookups: pyarrow rewrote the Parquet files in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

// 2. The lookups.

const hourPath = (hour: number) => {
  const d = new Date(DAY_START + hour * 3_600_000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `year=${d.getUTCFullYear()}/month=${p(d.getUTCMonth() + 1)}/day=${p(d.getUTCDate())}/hour=${p(d.getUTCHours())}`;
};
const hourStart = new Date(DAY_START + ERROR_HOUR * 3_600_000).toISOString();
const hourEnd = new Date(DAY_START + (ERROR_HOUR + 1) * 3_600_000).toISOString();
const hourNanos = (BigInt(DAY_START) + BigInt(ERROR_HOUR) * 3_600_000n) * 1_000_000n;

const SPANS_JSON_TYPE =
  'STRUCT("resource" STRUCT("attributes" STRUCT("key" VARCHAR, "value" STRUCT("stringValue" VARCHAR))[]), ' +
  '"scopeSpans" STRUCT("spans" STRUCT("traceId" VARCHAR, "spanId" VARCHAR, "parentSpanId" VARCHAR, "name" VARCHAR, ' +
  '"startTimeUnixNano" VARCHAR, "endTimeUnixNano" VARCHAR, "status" STRUCT("code" INTEGER, "message" VARCHAR))[])[])[]';
const LOGS_JSON_TYPE =
  'STRUCT("resource" STRUCT("attributes" STRUCT("key" VARCHAR, "value" STRUCT("stringValue" VARCHAR))[]), ' +
  '"scopeLogs" STRUCT("logRecords" STRUCT("timeUnixNano" VARCHAR, "severityText" VARCHAR, ' +
  '"body" STRUCT("stringValue" VARCHAR), "traceId" VARCHAR, "spanId" VARCHAR)[])[])[]';
const readJson = (glob: string, field: string, type: string) =>
  `read_json('${glob}', format = 'newline_delimited', compression = 'zstd', columns = {${field}: '${type}'})`;
/** Spans of OTLP/JSON requests, one row each, with their resource's service.name. */
const jsonSpans = (glob: string) => `(
  SELECT list_filter(rs.resource.attributes, a -> a.key = 'service.name')[1].value.stringValue AS service,
         unnest(flatten(list_transform(rs.scopeSpans, ss -> ss.spans))) AS s
  FROM (SELECT unnest(resourceSpans) AS rs FROM ${readJson(glob, 'resourceSpans', SPANS_JSON_TYPE)}))`;
const jsonLogs = (glob: string) => `(
  SELECT unnest(flatten(list_transform(rl.scopeLogs, sl -> sl.logRecords))) AS r
  FROM (SELECT unnest(resourceLogs) AS rl FROM ${readJson(glob, 'resourceLogs', LOGS_JSON_TYPE)}))`;

interface Lookup {
  key: string;
  label: string;
  /** The variants' SQL; each returns a column `id` to check. */
  sql: Partial<Record<Variant, string>>;
  /** The files the Parquet variants read (DuckDB's floor over them: see floorSql). */
  files: Partial<Record<Variant, string>>;
  expected: string[];
}
const parquetGlob = (variant: Variant, signal: Signal, hour?: number) =>
  `${dirOf(variant, signal)}/${hour === undefined ? '**' : hourPath(hour)}/*.parquet`;
const jsonGlob = (signal: Signal, hour?: number) =>
  `${dirOf('json', signal)}/${hour === undefined ? '**' : `${hourPath(hour)}/**`}/*.json.zst`;
const parquetVariants: Variant[] =
  bloomSkipped === undefined
    ? ['parquet', 'compacted', 'pyarrow', 'pyarrow-bloom', 'hourly', 'hourly-bloom']
    : ['parquet', 'compacted'];
/** The variants with one file an hour: the lookup of one hour reads that hour's path. */
const hourVariants = parquetVariants.filter((v) =>
  ['compacted', 'hourly', 'hourly-bloom'].includes(v),
);
const byVariant = (f: (v: Variant) => string): Partial<Record<Variant, string>> =>
  Object.fromEntries(parquetVariants.map((v) => [v, f(v)]));

const traceSpans = (t: Expected): Lookup => ({
  key: `trace-spans-${t.traceId}`,
  label: `every span of one trace (${t.spanIds.length} spans) by TraceId, over the day`,
  sql: {
    ...byVariant(
      (v) => `SELECT "SpanName", "SpanId" AS id, "ParentSpanId", "Timestamp", "Duration"
FROM read_parquet('${parquetGlob(v, 'traces')}')
WHERE "TraceId" = '${t.traceId}'
ORDER BY "Timestamp", "SpanId"`,
    ),
    json: `SELECT s.name AS "SpanName", s.spanId AS id, s.parentSpanId AS "ParentSpanId",
       s.startTimeUnixNano AS "Timestamp", s.endTimeUnixNano::HUGEINT - s.startTimeUnixNano::HUGEINT AS "Duration"
FROM ${jsonSpans(jsonGlob('traces'))}
WHERE s.traceId = '${t.traceId}'
ORDER BY s.startTimeUnixNano, s.spanId`,
  },
  files: byVariant((v) => parquetGlob(v, 'traces')),
  expected: t.spanIds,
});

const lookups: Lookup[] = [
  traceSpans(bigTrace),
  {
    key: 'error-spans',
    label: `the error spans of one service (${errorService.service}, ${errorService.ids.length} spans) in one hour (that hour's path)`,
    sql: {
      ...Object.fromEntries(
        (['parquet', ...hourVariants] as Variant[]).map((v) => [
          v,
          `SELECT "TraceId", "SpanId" AS id, "SpanName", "StatusMessage", "Duration"
FROM read_parquet('${parquetGlob(v, 'traces', ERROR_HOUR)}')
WHERE "ServiceName" = '${errorService.service}' AND "StatusCode" = 'Error'
  AND "Timestamp" >= '${hourStart}' AND "Timestamp" < '${hourEnd}'
ORDER BY "Timestamp", "SpanId"`,
        ]),
      ),
      json: `SELECT s.traceId AS "TraceId", s.spanId AS id, s.name AS "SpanName", s.status.message AS "StatusMessage"
FROM ${jsonSpans(jsonGlob('traces', ERROR_HOUR))}
WHERE service = '${errorService.service}' AND s.status.code = 2
  AND s.startTimeUnixNano::HUGEINT >= ${hourNanos} AND s.startTimeUnixNano::HUGEINT < ${hourNanos + 3_600_000_000_000n}
ORDER BY s.startTimeUnixNano, s.spanId`,
    },
    files: Object.fromEntries(
      (['parquet', ...hourVariants] as Variant[]).map((v) => [
        v,
        parquetGlob(v, 'traces', ERROR_HOUR),
      ]),
    ),
    expected: [...errorService.ids].sort(),
  },
  {
    key: 'trace-logs',
    label: `the log records of one trace (${bigTrace.logs.length} records) by TraceId, over the day`,
    sql: {
      ...byVariant(
        (v) => `SELECT "Timestamp", "SeverityText", "Body", "SpanId" || '|' || "Body" AS id
FROM read_parquet('${parquetGlob(v, 'logs')}')
WHERE "TraceId" = '${bigTrace?.traceId}'
ORDER BY "Timestamp"`,
      ),
      json: `SELECT r.timeUnixNano AS "Timestamp", r.severityText AS "SeverityText", r.body.stringValue AS "Body",
       r.spanId || '|' || r.body.stringValue AS id
FROM ${jsonLogs(jsonGlob('logs'))}
WHERE r.traceId = '${bigTrace.traceId}'
ORDER BY r.timeUnixNano`,
    },
    files: byVariant((v) => parquetGlob(v, 'logs')),
    expected: bigTrace.logs,
  },
];

/**
 * DuckDB's floor over a lookup's files: the least any query reading them costs (each file opened,
 * its footer read and its schema bound; count(*) reads no column). A lookup cannot be faster than
 * its files' floor, nor its ratio to read_json higher than read_json's time over it.
 */
const floorSql = (glob: string) => `SELECT count(*) AS id FROM read_parquet('${glob}')`;
const FLOOR_VARIANTS: Variant[] = ['parquet', 'compacted'];
const floors = new Map<string, number[]>(); // `${lookup}|${variant}`

const readChars = (): number =>
  Number(/rchar:\s+(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);

/** One query on a fresh in-memory DuckDB (no cache carried between runs): time, bytes read, ids. */
async function runQuery(sql: string): Promise<{ millis: number; bytes: number; ids: string[] }> {
  const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const connection = await db.connect();
  try {
    const chars = readChars();
    const started = performance.now();
    const reader = await connection.runAndReadAll(sql);
    const millis = performance.now() - started;
    const bytes = readChars() - chars;
    const ids = (reader.getRowObjectsJson() as Record<string, unknown>[]).map((r) => String(r.id));
    return { millis, bytes, ids };
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

interface Measured {
  millis: number[];
  bytes: number[];
  correct: boolean;
  got: number;
}
const measured = new Map<string, Measured>(); // `${lookup}|${variant}`
const runs = lookups.flatMap((l) =>
  (Object.keys(l.sql) as Variant[]).map((v) => ({
    lookup: l,
    variant: v,
    sql: l.sql[v] as string,
  })),
);
// Every read, read_json as read_parquet, runs once untimed first (DuckDB's code loaded, the files
// in the page cache; the answer checked), then ROUNDS interleaved rounds (bench/lib/rounds.ts).
const check = (r: (typeof runs)[number], ids: string[]) => {
  const m = measured.get(`${r.lookup.key}|${r.variant}`);
  if (m !== undefined) return;
  measured.set(`${r.lookup.key}|${r.variant}`, {
    millis: [],
    bytes: [],
    got: ids.length,
    correct: JSON.stringify([...ids].sort()) === JSON.stringify(r.lookup.expected),
  });
};
let roundShown = -1;
// DuckDB's floor over each lookup's Parquet files is a step of the same schedule, right after its
// read: one untimed run first, then every round, by the same repeat rule.
await readsAndFloors(
  runs,
  (r) => r.lookup.files[r.variant] !== undefined && FLOOR_VARIANTS.includes(r.variant),
  {
    rounds: ROUNDS,
    repeats: REPEATS,
    fastMillis: FAST_MILLIS,
    run: async ({ read: r, floor }, round) => {
      if (round > roundShown) {
        roundShown = round;
        progress(`lookups: round ${round + 1}/${ROUNDS}`);
      }
      const key = `${r.lookup.key}|${r.variant}`;
      if (floor) {
        const { millis } = await runQuery(floorSql(r.lookup.files[r.variant] as string));
        if (round >= 0) {
          if (!floors.has(key)) floors.set(key, []);
          floors.get(key)?.push(millis);
        }
        return millis;
      }
      const { millis, bytes, ids } = await runQuery(r.sql);
      check(r, ids);
      if (round >= 0) {
        const m = measured.get(key) as Measured;
        m.millis.push(millis);
        m.bytes.push(bytes);
      }
      return millis;
    },
  },
);
const floorOf = (l: Lookup, v: Variant): number => median(floors.get(`${l.key}|${v}`) ?? [NaN]);
/**
 * How the floor bounds a speed-up: "at most", unless noise put the floor above the read it
 * bounds (small data, few rounds), where it is only "about".
 */
const bound = (floor: number, read: Measured) =>
  floor <= median(read.millis) ? 'at most' : 'about';

// The report.

const LABELS: Record<Variant, string> = {
  parquet: 'Parquet (this exporter)',
  json: 'OTLP/JSON + zstd (read_json)',
  compacted: 'after compaction: otel-s3 compact outputs (TraceId bloom filters)',
  pyarrow: 'Parquet rewritten by pyarrow, no bloom filter',
  'pyarrow-bloom': `Parquet rewritten by pyarrow, TraceId bloom filter (fpp ${BLOOM_FPP})`,
  hourly: 'reference: one sorted pyarrow file per hour, no bloom filter',
  'hourly-bloom': 'reference: one sorted pyarrow file per hour, TraceId bloom filter',
};
const targets: Target[] = [];
const lookupRows: string[][] = [];
const get = (l: Lookup, v: Variant) => measured.get(`${l.key}|${v}`);
for (const l of lookups) {
  const json = get(l, 'json') as Measured;
  for (const v of Object.keys(l.sql) as Variant[]) {
    const m = get(l, v) as Measured;
    const floor = FLOOR_VARIANTS.includes(v) ? floorOf(l, v) : undefined;
    lookupRows.push([
      l.label,
      LABELS[v],
      fmtMs(median(m.millis)),
      v === 'json' ? '1×' : `${(median(json.millis) / median(m.millis)).toFixed(1)}×`,
      floor === undefined
        ? ''
        : `${fmtMs(floor)} (${bound(floor, m)} ${(median(json.millis) / floor).toFixed(0)}×)`,
      fmtMiB(median(m.bytes)),
      `${m.got} of ${l.expected.length}${m.correct ? '' : ' WRONG'}`,
    ]);
    targets.push({
      name: `${l.label}: ${LABELS[v]} returns what was generated`,
      measured: `${m.got} rows${m.correct ? ', the same ids' : ', other ids'}`,
      threshold: `${l.expected.length} rows, the same ids`,
      pass: m.correct,
      required: true,
    });
  }
  const p = get(l, 'parquet') as Measured;
  const speedup = median(json.millis) / median(p.millis);
  targets.push({
    name: `${l.label}: read_json time ÷ read_parquet time`,
    measured: `${speedup.toFixed(1)}× (${fmtMs(median(p.millis))} against ${fmtMs(median(json.millis))}; bytes read ${fmtMiB(median(p.bytes))} against ${fmtMiB(median(json.bytes))}; DuckDB's floor over these files ${fmtMs(floorOf(l, 'parquet'))}, ${bound(floorOf(l, 'parquet'), p)} ${(median(json.millis) / floorOf(l, 'parquet')).toFixed(1)}×)`,
    threshold: `≥ ${SPEEDUP}×`,
    pass: speedup >= SPEEDUP,
  });
}
for (const l of lookups) {
  const json = get(l, 'json') as Measured;
  const before = get(l, 'parquet') as Measured;
  const after = get(l, 'compacted') as Measured;
  const speedup = median(json.millis) / median(after.millis);
  targets.push({
    name: `${l.label}, after compaction (otel-s3 compact): read_json time ÷ read_parquet time`,
    measured: `${speedup.toFixed(1)}× (${fmtMs(median(after.millis))} against ${fmtMs(median(json.millis))}; bytes read ${fmtMiB(median(after.bytes))}, before compaction ${fmtMiB(median(before.bytes))}, read_json ${fmtMiB(median(json.bytes))}; DuckDB's floor over these files ${fmtMs(floorOf(l, 'compacted'))}, ${bound(floorOf(l, 'compacted'), after)} ${(median(json.millis) / floorOf(l, 'compacted')).toFixed(1)}×)`,
    threshold: `≥ ${COMPACTED_SPEEDUP}×`,
    pass: speedup >= COMPACTED_SPEEDUP,
  });
}

// What the sort order and min/max statistics skip for a TraceId lookup, and what a bloom filter does.
const metadataRows: string[][] = [];
async function skipFigures(variant: Variant, signal: Signal, traceId: string) {
  const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const connection = await db.connect();
  try {
    const reader = await connection.runAndReadAll(`
SELECT count(DISTINCT file_name)::INTEGER AS files, count(*)::INTEGER AS row_groups,
       count(*) FILTER (WHERE stats_min_value <= '${traceId}' AND '${traceId}' <= stats_max_value)::INTEGER AS in_range,
       sum(total_compressed_size)::BIGINT AS id_bytes,
       coalesce(sum(bloom_filter_length), 0)::BIGINT AS bloom_bytes
FROM parquet_metadata('${parquetGlob(variant, signal)}')
WHERE path_in_schema = 'TraceId'`);
    const figures = reader.getRowObjectsJson()[0] as Record<string, number | string>;
    if (Number(figures.bloom_bytes) > 0) {
      // The row groups whose bloom filter does not rule the id out (DuckDB's own probe).
      const probe = await connection.runAndReadAll(`
SELECT count(*) FILTER (WHERE NOT bloom_filter_excludes)::INTEGER AS passed
FROM parquet_bloom_probe('${parquetGlob(variant, signal)}', 'TraceId', '${traceId}')`);
      figures.passed = (probe.getRowObjectsJson()[0] as Record<string, number>).passed as number;
    }
    const holding = await connection.runAndReadAll(`
SELECT count(DISTINCT filename)::INTEGER AS holding
FROM read_parquet('${parquetGlob(variant, signal)}', filename = true) WHERE "TraceId" = '${traceId}'`);
    figures.holding = (holding.getRowObjectsJson()[0] as Record<string, number>).holding as number;
    return figures;
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}
for (const signal of ['traces', 'logs'] as const) {
  for (const v of parquetVariants) {
    const f = await skipFigures(v, signal, bigTrace.traceId);
    const total = await bytesUnder(dirOf(v, signal), '.parquet');
    metadataRows.push([
      signal === 'traces' ? 'spans' : 'log records',
      LABELS[v],
      fmtInt(Number(f.files)),
      fmtInt(Number(f.row_groups)),
      fmtInt(Number(f.in_range)),
      f.passed === undefined ? '–' : fmtInt(Number(f.passed)),
      fmtInt(Number(f.holding)),
      fmtMiB(total),
      fmtMiB(await footerBytes(dirOf(v, signal))),
      fmtMiB(Number(f.id_bytes)),
      Number(f.bloom_bytes) === 0
        ? '–'
        : `${fmtMiB(Number(f.bloom_bytes))} (${((Number(f.bloom_bytes) / total) * 100).toFixed(1)} %)`,
    ]);
  }
}

// What compaction left: only its outputs, every span and log record once.
const compactionRows: string[][] = [];
for (const c of compactions) {
  const dir = dirOf('compacted', c.signal);
  const files = await filesUnder(dir, '.parquet');
  const notOutputs = files.filter((f) => !f.endsWith(OUTPUT_EXTENSION));
  const want = c.signal === 'traces' ? totals.spans : totals.logs;
  const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  const connection = await db.connect();
  let rows: number;
  let distinct: number;
  try {
    // Spans: each SpanId once; log records: each (SpanId, Timestamp, Body) once.
    const key =
      c.signal === 'traces' ? '"SpanId"' : '("SpanId", "Timestamp", "Body", "SeverityText")';
    const reader = await connection.runAndReadAll(
      `SELECT count(*)::BIGINT AS n, count(DISTINCT ${key})::BIGINT AS d FROM read_parquet('${parquetGlob('compacted', c.signal)}')`,
    );
    const r = reader.getRowObjectsJson()[0] as Record<string, string>;
    rows = Number(r.n);
    distinct = Number(r.d);
  } finally {
    connection.closeSync();
    db.closeSync();
  }
  const items = c.signal === 'traces' ? 'spans' : 'log records';
  targets.push({
    name: `otel-s3 compact --signal ${c.signal}: every hour compacted, only outputs left, every one of the ${items} once`,
    measured: `${c.partitions} hours compacted; ${files.length} files left, ${notOutputs.length} of them not outputs; ${fmtInt(rows)} rows, ${fmtInt(distinct)} distinct; ${fmtInt(c.items)} read`,
    threshold: `${HOURS} hours; 0 other files; ${fmtInt(want)} rows, all distinct, all read`,
    pass:
      c.partitions === HOURS &&
      notOutputs.length === 0 &&
      rows === want &&
      distinct === want &&
      c.items === want,
    required: true,
  });
  const outBytes = c.outputs.reduce((n, o) => n + o.bytes, 0);
  compactionRows.push([
    items,
    `${fmtInt(c.inputs)} (${fmtMiB(c.inputBytes)})`,
    `${fmtInt(c.outputs.length)} (${fmtMiB(outBytes)})`,
    fmtInt(c.items),
    fmtMs(c.millis),
    fmtMs(c.cpuMillis),
    fmtInt(Math.round(c.items / (c.cpuMillis / 1000))),
    fmtMiB(c.maxRssBytes),
    '',
  ]);
  const peer = peerCompactions.find((p) => p.signal === c.signal) as PeerCompaction;
  compactionRows.push([
    `${items}: DuckDB, one thread, COPY … ORDER BY per hour (zstd level 3, as ours)`,
    `${fmtInt(c.inputs)} (${fmtMiB(c.inputBytes)})`,
    `${fmtInt(HOURS)} (${fmtMiB(peer.outputBytes)})`,
    fmtInt(c.items),
    fmtMs(peer.millis),
    fmtMs(peer.cpuMillis),
    fmtInt(Math.round(c.items / (peer.cpuMillis / 1000))),
    fmtMiB(peer.maxRssBytes),
    `ours ${(c.millis / peer.millis).toFixed(2)}× its wall time, ${(c.cpuMillis / peer.cpuMillis).toFixed(2)}× its CPU`,
  ]);
}

const spansPerSecond = totals.spans / (HOURS * 3600);
const logsPerSecond = totals.logs / (HOURS * 3600);
const storedRows = (['spans', 'logs'] as const).flatMap((signal) =>
  (['parquet', 'json'] as const).map((format) => {
    const s = stored.get(`${signal}|${format}`) as Stored;
    return [
      signal === 'spans' ? 'spans' : 'log records',
      format === 'parquet'
        ? `Parquet, ${PARQUET_MINUTES}-minute batches`
        : `OTLP/JSON + zstd, ${JSON_MINUTES}-minute batches`,
      fmtInt(s.objects),
      fmtInt(s.items),
      fmtMiB(s.bytes),
      fmtNum(s.bytes / s.items),
    ];
  }),
);

if (KEEP) progress(`lookups: the mirror is kept in ${root}`);
const seconds = (performance.now() - suiteStarted) / 1000;
emitResult({
  suite: 'lookups',
  title: 'Lookups in a day of spans and log records: DuckDB over Parquet against OTLP/JSON + zstd',
  tables: [
    {
      columns: ['items', 'stored as', 'objects', 'items', 'bytes', 'bytes per item'],
      rows: storedRows,
    },
    {
      columns: [
        'compacted',
        'input files (bytes)',
        'outputs (bytes)',
        'rows',
        'wall',
        'CPU',
        'rows per CPU second',
        'peak RSS',
        'against DuckDB',
      ],
      rows: compactionRows,
    },
    {
      columns: [
        'lookup',
        'read',
        'median time',
        'vs read_json',
        "DuckDB's floor over those files (count(*))",
        'bytes read (median)',
        'rows',
      ],
      rows: lookupRows,
    },
    {
      columns: [
        'table',
        'written by',
        'files',
        'row groups',
        "row groups whose TraceId min/max holds the trace's id",
        'row groups its bloom filter lets through',
        'files that hold the trace',
        'bytes',
        'footers',
        'TraceId column chunks',
        'bloom filters',
      ],
      rows: metadataRows,
    },
  ],
  targets,
  notes: [
    `The day: ${HOURS} h, ${SERVICES} services × ${INSTANCES} instances (${day.instances.length} processes, each one exporter per signal and format); ${fmtInt(totals.traces)} traces (${fmtNum(totals.spans / totals.traces)} spans each on average, 5 to 30), ${fmtInt(totals.spans)} spans (${fmtNum(spansPerSecond)}/s), ${fmtInt(totals.logs)} log records (${fmtNum(logsPerSecond)}/s), ${((totals.errorSpans / totals.spans) * 100).toFixed(2)} % of spans in error; written in ${writeSeconds.toFixed(0)} s.`,
    `Compaction: \`otel-s3 compact --dir … --signal traces|logs --settle 0 --format json\` from dist/, one process a signal, one hour at a time (the default), on a copy of the exporter's files in a local directory (no network); wall and CPU time (user + system) and peak RSS of the whole process, startup included; the lookups "after compaction" read only what it left. DuckDB's row: the same inputs compacted by DuckDB (bench/children/duckdb-compact.mjs, one process a signal, one thread, each hour one \`COPY (SELECT * … ORDER BY …)\` in the table's order to a file of its own, zstd level 3 as ours), measured alike; no bookkeeping (leases, verification, deletes), no bloom filters.`,
    `Each lookup: a fresh in-memory DuckDB; every read (read_json as read_parquet) one untimed run (checked), then ${ROUNDS} interleaved rounds, the order reversed every other round; a lookup whose untimed run took under ${FAST_MILLIS} ms (read_json's too) run ${REPEATS} times in a row in each round (one preemption of the busy machine is not its median); times are medians of every run; bytes read are the process's read() bytes during the query (/proc/self/io rchar). DuckDB's floor: \`SELECT count(*) FROM read_parquet(…)\` over the lookup's files, scheduled as a read right after its lookup (one untimed run, then every round, the same repeat rule): each file opened, its footer read and its schema bound, no column read; no query over those files is faster, so read_json's time over it bounds the ratio any layout of those files can reach.`,
    bloomSkipped === undefined
      ? `pyarrow rewrote every Parquet file twice (same rows, same order, zstd level 3, ids and Body PLAIN, the rest dictionary-encoded), once with a TraceId bloom filter (ndv = the file's distinct TraceIds, fpp ${BLOOM_FPP}).`
      : `Bloom filters not measured: ${bloomSkipped}.`,
    `Suite: ${seconds.toFixed(0)} s.`,
  ],
  data: {
    shape: day.shape,
    totals,
    stored: Object.fromEntries(stored),
    lookups: Object.fromEntries(measured),
    compactions: compactions.map(({ outputs, ...c }) => ({ ...c, outputs: outputs.length })),
    writeSeconds,
  },
});
// The DuckDB instances' threads and the exporters' idle workers do not hold the process.
await writeFile(join(root, 'done'), '');
process.exit(0);
