/**
 * Compaction (issue 19, docs/parquet.md "Compaction"): a day of 100 instances writing Parquet at
 * the default batch age (10 minutes: 6 files an hour each, 14,400 files), compacted by
 * compactMetrics in a child process of its own, on a local directory laid out like the bucket
 * (the directory store: the compactor's CPU and memory, without a network; over S3 it adds a
 * GET per input, a few range GETs per output and the DeleteObjects).
 * The compactor is the otel-s3 CLI from dist/ (the suite builds it), as users run it.
 *  1. DuckDB's "sum of a counter by service and hour" over the day, before and after (the
 *     answers must equal the generator's sums).
 *  2. Stored bytes before and after.
 *  3. Throughput: data points compacted per second (wall and CPU), one process.
 *  4. The compactor's peak RSS against 2 × --target-file-bytes + 100 MB: on the day (the default
 *     128 MiB target), and on one heavy hour (600 files of about 4.8 k points, 1.2 k with --quick)
 *     with the same target: memory must not grow with the hour's points.
 *  5. Realistic values beside the simulated (4 hours, 1 with --quick): the same fleet with
 *     counters, histograms and gauges that move as a service's do; bytes a point and a
 *     Prometheus sample as OTLP/JSON + zstd, as the exporter's Parquet, and compacted.
 * The instances are simulated (bench/lib/simulated-writers.ts): each export has 40 counter
 * series, 8 histograms and 2 gauges (50 points), ten exports a file: 500 points a file, a small
 * service (docs/parquet.md measures 2,000 for a medium one). Fewer points keep the suite's run
 * time reasonable; the file count, which the query ratio is about, is the real one. Smaller
 * files make the "before" side's bytes per point higher (the 3.7 KB footer weighs more).
 */

import { execFileSync, spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ROOT } from './lib/child.js';
import {
  type Contender,
  comparePeers,
  medianOf,
  type PeerResult,
  pyarrowPython,
  sortedness,
} from './lib/compaction-peers.js';
import { fmtInt, fmtMiB, fmtMs, fmtNum } from './lib/format.js';
import { emitResult, parseArgs, progress, type Table, type Target } from './lib/result.js';
import {
  COUNTER,
  type Instance,
  instances,
  SAMPLES_PER_HISTOGRAM,
  writeBatch,
} from './lib/simulated-writers.js';
import { median } from './lib/stats.js';

type Written = Awaited<ReturnType<typeof writeBatch>>;

const args = parseArgs(process.argv.slice(2));
const MiB = 1024 * 1024;
/** The UTC day before yesterday: every hour of it has settled. */
const DAY_START = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 2 * 86_400_000;
const INSTANCES = 100;
const SLOTS_PER_HOUR = 6;
const EXPORTS_PER_FILE = 10;
const SERIES = 40;
const HEAVY_SERIES = args.quick ? 100 : 400;
const HEAVY_TARGET_BYTES = 128 * MiB;
const DEFAULT_TARGET_BYTES = 128 * MiB;
const QUERY_ROUNDS = 3;
const bound = (target: number) => 2 * target + 100 * 1e6;
const flag = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
/** Side by side with DuckDB (and pyarrow): the day's first hours, interleaved rounds. */
const PEER_HOURS = Number(flag('peer-hours') ?? (args.quick ? 1 : 4));
const PEER_ROUNDS = Number(flag('peer-rounds') ?? (args.quick ? 3 : 5));
/** Only the side-by-side run (the day's other measurements are skipped). */
const PEER_ONLY = process.argv.includes('--peer-only');
/** Hours of the realistic fleet (issue 34, item 3). */
const REALISTIC_HOURS = args.quick ? 1 : 4;
const HOURS = PEER_ONLY ? PEER_HOURS : args.quick ? 4 : 24;

const root = await mkdtemp(join(tmpdir(), 'otel-s3-bench-compaction-'));
try {
  // 1. The day.
  const expected = new Map<string, { total: number; points: number }>();
  const fleet = instances(INSTANCES);
  const started = performance.now();
  const { files, points } = await writeFleet(
    'day',
    fleet,
    HOURS,
    false,
    (instance, start, written) => {
      const key = `${instance.service}|${Math.floor(start / 3_600_000)}`;
      const e = expected.get(key) ?? { total: 0, points: 0 };
      e.total += written.counterSums.reduce((a, b) => a + b, 0);
      e.points += EXPORTS_PER_FILE * SERIES;
      expected.set(key, e);
    },
  );
  progress(
    `compaction: ${fmtInt(files)} files, ${fmtInt(points)} points in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  const dayDir = join(root, 'day');
  progress('compaction: npm run build (the CLI runs from dist/)');
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });

  // 0. Side by side with DuckDB and pyarrow, on copies of the day's first hours.
  const peerInput = join(root, 'peer-input');
  const hourDirs = [
    ...new Set(
      (await readdir(dayDir, { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile() && e.name.endsWith('.parquet'))
        .map((e) => e.parentPath),
    ),
  ].sort();
  for (const dir of hourDirs.slice(0, PEER_HOURS)) {
    await cp(dir, join(peerInput, relative(dayDir, dir)), { recursive: true });
  }
  const peerPoints = (points * Math.min(PEER_HOURS, HOURS)) / HOURS;
  const python = await pyarrowPython();
  const contenders: Contender[] = ['ours', 'duckdb', ...(python ? (['pyarrow'] as const) : [])];
  const peers = await comparePeers({
    root,
    input: 'peer-input',
    rounds: PEER_ROUNDS,
    contenders,
    python,
    ours: (prefix) => compactChild(root, prefix, undefined),
  });
  await rm(peerInput, { recursive: true, force: true });
  const peer = peerSummary(peers, peerPoints);
  const realistic = await realisticHours();
  if (PEER_ONLY) {
    const million = await millionHour();
    emitResult({
      suite: 'compaction',
      title: `Compaction side by side: ${PEER_HOURS} hours of ${INSTANCES} instances (--peer-only)`,
      tables: [...peer.tables, million.table, realistic.table],
      targets: [...peer.targets, ...million.targets, ...realistic.targets],
      notes: [...peer.notes, ...realistic.notes],
      data: { peers, peerPoints, million: million.data, realistic: realistic.data },
    });
    await rm(root, { recursive: true, force: true });
    process.exit(0);
  }
  const bytesBefore = await parquetBytes(dayDir);

  // 2. The query before.
  const sql = `
SELECT ServiceName AS service, epoch_us(TimeUnix) // 3600000000 AS hour,
       sum(ValueAsInt) AS total, count(*) AS points
FROM read_parquet('${dayDir}/**/*.parquet', hive_partitioning = true)
WHERE MetricName = '${COUNTER}'
GROUP BY ALL ORDER BY ALL`;
  const before = await timedQueries(sql, 'before');

  // 3. Compaction, in its own process: the CLI as users run it, from dist/.
  progress('compaction: compacting the day (otel-s3 compact, a process of its own)');
  const day = await compactChild(root, 'day', undefined);
  const bytesAfter = await parquetBytes(dayDir);
  const after = await timedQueries(sql, 'after');

  // 4. The heavy hour, with the same target.
  progress(`compaction: writing a heavy hour (${HEAVY_SERIES} counter series an export)`);
  let heavyPoints = 0;
  for (let slot = 0; slot < SLOTS_PER_HOUR; slot++) {
    for (const instance of instances(INSTANCES, 1_000)) {
      const start = DAY_START + slot * 600_000;
      heavyPoints += (
        await writeBatch(root, 'heavy', instance, start, EXPORTS_PER_FILE, HEAVY_SERIES)
      ).points;
    }
  }
  progress('compaction: compacting the heavy hour (otel-s3 compact, a process of its own)');
  const heavy = await compactChild(root, 'heavy', HEAVY_TARGET_BYTES);
  const heavySorted = await sortedness(join(root, 'heavy'));

  const sameAnswers =
    JSON.stringify(before.rows) === JSON.stringify(expectedRows(expected)) &&
    JSON.stringify(after.rows) === JSON.stringify(before.rows);
  const speedup = before.millis / after.millis;
  const bytesRatio = bytesAfter / bytesBefore;
  const tables: Table[] = [
    ...peer.tables,
    realistic.table,
    {
      columns: [
        '',
        'files',
        'bytes',
        'bytes per point',
        `DuckDB query (median of ${QUERY_ROUNDS})`,
      ],
      rows: [
        [
          'before: 10-minute files',
          fmtInt(files),
          fmtMiB(bytesBefore),
          fmtNum(bytesBefore / points),
          fmtMs(before.millis),
        ],
        [
          'after compaction',
          fmtInt(day.outputs),
          fmtMiB(bytesAfter),
          fmtNum(bytesAfter / points),
          fmtMs(after.millis),
        ],
      ],
    },
    {
      columns: [
        'compaction run',
        'points',
        'files in → out',
        'wall',
        'CPU',
        'points/s (wall)',
        'peak RSS',
        'bound',
      ],
      rows: [
        runRow(`the day, target ${fmtMiB(DEFAULT_TARGET_BYTES)}`, day, files, DEFAULT_TARGET_BYTES),
        runRow(
          `a heavy hour, target ${fmtMiB(HEAVY_TARGET_BYTES)}`,
          heavy,
          INSTANCES * SLOTS_PER_HOUR,
          HEAVY_TARGET_BYTES,
        ),
      ],
    },
  ];
  const targets: Target[] = [
    ...peer.targets,
    ...realistic.targets,
    {
      name: 'the query gives the generated sums, before and after',
      measured: sameAnswers ? 'equal' : 'DIFFERENT',
      threshold: 'equal',
      pass: sameAnswers,
      required: true,
    },
    {
      name: 'every point compacted, nothing failed',
      measured: `${fmtInt(day.points)} of ${fmtInt(points)}, ${fmtInt(heavy.points)} of ${fmtInt(heavyPoints)}; ${day.failed.length + heavy.failed.length} failed`,
      threshold: 'all',
      pass:
        day.points === points &&
        heavy.points === heavyPoints &&
        day.failed.length + heavy.failed.length === 0,
      required: true,
    },
    {
      name: 'DuckDB query over the day, before / after',
      measured: `${fmtNum(speedup)}× (${fmtMs(before.millis)} → ${fmtMs(after.millis)})`,
      threshold: '≥ 20×',
      pass: speedup >= 20,
    },
    {
      name: 'bytes after / before',
      measured: `${fmtNum(bytesRatio)} (${fmtMiB(bytesBefore)} → ${fmtMiB(bytesAfter)})`,
      threshold: '≤ 0.8',
      pass: bytesRatio <= 0.8,
    },
    {
      name: 'peak RSS compacting the day',
      measured: fmtMiB(day.maxRssBytes),
      threshold: `≤ 2 × ${fmtMiB(DEFAULT_TARGET_BYTES)} + 100 MB`,
      pass: day.maxRssBytes <= bound(DEFAULT_TARGET_BYTES),
    },
    {
      name: 'peak RSS compacting the heavy hour',
      measured: `${fmtMiB(heavy.maxRssBytes)} (${heavy.outputs} outputs)`,
      threshold: `≤ 2 × ${fmtMiB(HEAVY_TARGET_BYTES)} + 100 MB`,
      pass: heavy.maxRssBytes <= bound(HEAVY_TARGET_BYTES),
    },
    {
      name: 'the heavy hour fully sorted',
      measured: `${heavySorted.sortedHours} of ${heavySorted.hours} hours; ${fmtInt(heavySorted.runs)} runs of ${fmtInt(heavySorted.series)} series`,
      threshold: 'one run per series',
      pass: heavySorted.sortedHours === heavySorted.hours,
    },
  ];
  emitResult({
    suite: 'compaction',
    title: `Compaction: a day of ${INSTANCES} instances writing Parquet every 10 minutes${args.quick ? ` (--quick: ${HOURS} hours)` : ''}`,
    tables,
    targets,
    notes: [
      ...peer.notes,
      "Stored on a local directory (the compactor's directory store): compaction CPU and memory without a network. Over S3 add a GET per input, range GETs per output and the deletes.",
      `${EXPORTS_PER_FILE} exports of ${SERIES + SERIES / 5 + 2} points per file (${EXPORTS_PER_FILE * (SERIES + SERIES / 5 + 2)} points), simulated writers using the exporter's Parquet body code.`,
      'Throughput: one process, one hour at a time (partitionConcurrency 1), reading every input whole from the directory.',
      ...realistic.notes,
    ],
    data: {
      realistic: realistic.data,
      peers,
      peerPoints,
      files,
      points,
      bytesBefore,
      bytesAfter,
      before,
      after,
      day,
      heavy,
      heavyPoints,
    },
  });
} finally {
  await rm(root, { recursive: true, force: true });
}

/**
 * `hours` of the fleet written under `prefix`: every instance's file of each 10-minute slot (with
 * `otlp`, its exports measured as OTLP/JSON + zstd too); `onFile` sees each file written.
 */
async function writeFleet(
  prefix: string,
  fleet: Instance[],
  hours: number,
  otlp: boolean,
  onFile?: (instance: Instance, start: number, written: Written) => void,
): Promise<{ files: number; points: number; otlpBytes: number }> {
  let files = 0;
  let points = 0;
  let otlpBytes = 0;
  for (let h = 0; h < hours; h++) {
    progress(
      `compaction: writing ${prefix} hour ${h + 1}/${hours} (${fmtInt(files)} files so far)`,
    );
    for (let slot = 0; slot < SLOTS_PER_HOUR; slot++) {
      for (const instance of fleet) {
        const start = DAY_START + h * 3_600_000 + slot * 600_000;
        const written = await writeBatch(
          root,
          prefix,
          instance,
          start,
          EXPORTS_PER_FILE,
          SERIES,
          otlp,
        );
        files++;
        points += written.points;
        otlpBytes += written.otlpBytes;
        onFile?.(instance, start, written);
      }
    }
  }
  return { files, points, otlpBytes };
}

/**
 * Realistic values beside the simulated (issue 34, item 3): the same fleet and files, its
 * counters growing by small steps, its histograms filling slowly, its gauges drifting
 * (simulated-writers.ts, 'realistic'); bytes a point as OTLP/JSON + zstd (one object a minute,
 * the default format), as the exporter's Parquet files, and compacted, beside the Prometheus
 * TSDB's published figure.
 */
async function realisticHours(): Promise<{
  table: Table;
  targets: Target[];
  notes: string[];
  data: unknown;
}> {
  const fleet = instances(INSTANCES, 1_000, 'realistic');
  const { files, points, otlpBytes } = await writeFleet('realistic', fleet, REALISTIC_HOURS, true);
  const dir = join(root, 'realistic');
  const before = await parquetBytes(dir);
  progress('compaction: compacting the realistic hours');
  const run = await compactChild(root, 'realistic', undefined);
  const after = await parquetBytes(dir);
  // Prometheus counts a histogram point as its buckets, sum and count.
  const samples =
    (points / (SERIES + SERIES / 5 + 2)) * (SERIES + (SERIES / 5) * SAMPLES_PER_HISTOGRAM + 2);
  const row = (label: string, objects: number, bytes: number) => [
    label,
    fmtInt(objects),
    fmtMiB(bytes),
    fmtNum(bytes / points),
    fmtNum(bytes / samples),
  ];
  return {
    table: {
      columns: [
        `realistic values: ${REALISTIC_HOURS} h of ${INSTANCES} instances, ${fmtInt(points)} points (${fmtInt(samples)} Prometheus samples)`,
        'objects',
        'bytes',
        'bytes per point',
        'bytes per sample',
      ],
      rows: [
        row('OTLP/JSON + zstd (one object a minute)', files * EXPORTS_PER_FILE, otlpBytes),
        row("the exporter's Parquet (10-minute files)", files, before),
        row('compacted', run.outputs, after),
        ['Prometheus TSDB (its published figure, not measured here)', '', '', '', 'about 1.3'],
      ],
    },
    targets: [
      {
        name: 'realistic hours: every point compacted, nothing failed',
        measured: `${fmtInt(run.points)} of ${fmtInt(points)}; ${run.failed.length} failed`,
        threshold: 'all',
        pass: run.points === points && run.failed.length === 0,
        required: true,
      },
    ],
    notes: [
      'Realistic values: counters that grow by 0-11 a minute (most by 0-1), histograms whose cumulative buckets take 0-5 requests a minute (most in the fast buckets) with a growing sum, memory gauges drifting by up to 64 KiB a minute. Samples as Prometheus counts them: a counter or gauge point is one, a histogram point its 12 buckets, sum and count.',
    ],
    data: { files, points, otlpBytes, before, after, run },
  };
}

/**
 * An hour of more than 1,000,000 points (600 files of 1,700), compacted with the default target:
 * its output must be one sorted run (the merge of spilled runs), every point kept, within the
 * memory bound.
 */
async function millionHour(): Promise<{ table: Table; targets: Target[]; data: unknown }> {
  const series = 140; // 10 exports × (140 counters + 28 gauges + 2 histograms) a file
  progress('compaction: writing an hour of 1,020,000 points');
  let written = 0;
  for (let slot = 0; slot < SLOTS_PER_HOUR; slot++) {
    for (const instance of instances(INSTANCES, 2_000)) {
      const start = DAY_START + slot * 600_000;
      written += (await writeBatch(root, 'million', instance, start, EXPORTS_PER_FILE, series))
        .points;
    }
  }
  progress('compaction: compacting the 1,020,000-point hour (otel-s3 compact)');
  const result = await compactChild(root, 'million', undefined);
  const sorted = await sortedness(join(root, 'million'));
  await rm(join(root, 'million'), { recursive: true, force: true });
  const one = sorted.hours === 1 && sorted.sortedHours === 1;
  return {
    table: {
      columns: ['one hour', 'points', 'wall', 'points/s', 'peak RSS', 'outputs', 'sorted'],
      rows: [
        [
          `${fmtInt(written)} points, target ${fmtMiB(DEFAULT_TARGET_BYTES)}`,
          fmtInt(result.points),
          fmtMs(result.millis),
          fmtInt(Math.round(result.points / (result.millis / 1000))),
          fmtMiB(result.maxRssBytes),
          fmtInt(result.outputs),
          `${fmtInt(sorted.runs)} runs of ${fmtInt(sorted.series)} series, ${fmtInt(sorted.stepsBack)} steps back`,
        ],
      ],
    },
    targets: [
      {
        name: `an hour of ${fmtInt(written)} points: one sorted run, every point kept`,
        measured: `${one ? 'one run' : 'NOT one run'}; ${fmtInt(sorted.runs)} runs of ${fmtInt(sorted.series)} series; ${fmtInt(result.points)} of ${fmtInt(written)} points`,
        threshold: 'one sorted run, all points',
        pass: one && result.points === written && result.failed.length === 0,
      },
      {
        name: `peak RSS compacting ${fmtInt(written)} points`,
        measured: fmtMiB(result.maxRssBytes),
        threshold: `≤ 2 × ${fmtMiB(DEFAULT_TARGET_BYTES)} + 100 MB`,
        pass: result.maxRssBytes <= bound(DEFAULT_TARGET_BYTES),
      },
    ],
    data: { written, result, sorted },
  };
}

interface ChildResult {
  millis: number;
  cpuMillis: number;
  maxRssBytes: number;
  points: number;
  objectsRead: number;
  outputs: number;
  failed: string[];
}

/**
 * `otel-s3 compact --format json` from dist/ (what users run: no TypeScript loader in the
 * process), with a preload that reports its peak RSS and CPU time at exit.
 */
async function compactChild(
  dir: string,
  prefix: string,
  target: number | undefined,
): Promise<ChildResult> {
  const run = await runNode(
    [
      '--import',
      './bench/children/peak-rss.mjs',
      'dist/cli.js',
      'compact',
      '--dir',
      dir,
      '--prefix',
      prefix,
      '--settle',
      '0',
      '--format',
      'json',
      '--no-progress',
      ...(target === undefined ? [] : ['--target-file-bytes', String(target)]),
    ],
    3_600_000,
  );
  const usage = run.stderr.split('\n').find((l) => l.startsWith('PEAK_RSS '));
  const line = run.stdout.find((l) => l.startsWith('{'));
  if (run.code !== 0 || line === undefined || usage === undefined) {
    throw new Error(`otel-s3 compact failed (${run.code}): ${run.stderr}`);
  }
  const report = JSON.parse(line) as {
    partitions: {
      status: string;
      partition: string;
      error?: string;
      read: { points: number; objects: number };
      written: unknown[];
    }[];
  };
  const { maxRssBytes, cpuMillis, millis } = JSON.parse(usage.slice('PEAK_RSS '.length)) as {
    maxRssBytes: number;
    cpuMillis: number;
    millis: number;
  };
  const partitions = report.partitions;
  return {
    millis,
    cpuMillis,
    maxRssBytes,
    points: partitions.reduce((n, p) => n + p.read.points, 0),
    objectsRead: partitions.reduce((n, p) => n + p.read.objects, 0),
    outputs: partitions.reduce((n, p) => n + p.written.length, 0),
    failed: partitions
      .filter((p) => p.status !== 'compacted')
      .map((p) => `${p.partition}: ${p.status} ${p.error ?? ''}`),
  };
}

function runRow(label: string, r: ChildResult, filesIn: number, target: number): string[] {
  return [
    label,
    fmtInt(r.points),
    `${fmtInt(filesIn)} → ${fmtInt(r.outputs)}`,
    fmtMs(r.millis),
    fmtMs(r.cpuMillis),
    fmtInt(Math.round(r.points / (r.millis / 1000))),
    fmtMiB(r.maxRssBytes),
    fmtMiB(bound(target)),
  ];
}

async function parquetBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.parquet'))
      total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

interface Answer {
  service: string;
  hour: number;
  total: number;
  points: number;
}

async function timedQueries(
  sql: string,
  label: string,
): Promise<{ millis: number; rows: Answer[] }> {
  let rows: Answer[] = [];
  const times: number[] = [];
  for (let round = 0; round <= QUERY_ROUNDS; round++) {
    progress(
      `compaction: query ${label}, round ${round}/${QUERY_ROUNDS}${round === 0 ? ' (untimed)' : ''}`,
    );
    const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
    const connection = await db.connect();
    try {
      const t = performance.now();
      const reader = await connection.runAndReadAll(sql);
      if (round > 0) times.push(performance.now() - t);
      rows = (reader.getRowObjectsJson() as Record<string, unknown>[]).map((r) => ({
        service: String(r.service),
        hour: Number(r.hour),
        total: Number(r.total),
        points: Number(r.points),
      }));
    } finally {
      connection.closeSync();
      db.closeSync();
    }
  }
  return { millis: median(times), rows };
}

function expectedRows(expected: Map<string, { total: number; points: number }>): Answer[] {
  return [...expected]
    .map(([k, v]) => {
      const [service, hour] = k.split('|');
      return { service: service as string, hour: Number(hour), ...v };
    })
    .sort((a, b) => (a.service === b.service ? a.hour - b.hour : a.service < b.service ? -1 : 1));
}

/** Runs node with these arguments in the repository, capped; stdout lines and stderr. */
function runNode(
  args: string[],
  capMillis: number,
): Promise<{ code: number | null; stdout: string[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), capMillis);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: out.split('\n'), stderr: err });
    });
  });
}

/** The side-by-side tables and targets: ratios against DuckDB at threads=1 from the same rounds. */
function peerSummary(
  peers: PeerResult[],
  peerPoints: number,
): { tables: Table[]; targets: Target[]; notes: string[] } {
  const by = (c: Contender) => peers.find((p) => p.contender === c);
  const ours = by('ours') as PeerResult;
  const duck = by('duckdb') as PeerResult;
  const rate = (r: PeerResult) => peerPoints / (medianOf(r, 'millis') / 1000);
  const perPoint = (r: PeerResult) => medianOf(r, 'outBytes') / peerPoints;
  const label: Record<Contender, string> = {
    ours: 'otel-s3 compact --settle 0 (zstd level 3)',
    duckdb: 'DuckDB, threads=1, COPY … ORDER BY (zstd level 3)',
    pyarrow: 'pyarrow: dataset → sort_indices → write_table (zstd level 3)',
  };
  const rows = peers.map((r) => [
    label[r.contender],
    fmtMs(medianOf(r, 'millis')),
    fmtMs(medianOf(r, 'cpuMillis')),
    fmtInt(Math.round(rate(r))),
    fmtNum(rate(r) / rate(duck)),
    fmtMiB(medianOf(r, 'maxRssBytes')),
    fmtNum(perPoint(r)),
    fmtNum(perPoint(r) / perPoint(duck)),
    `${r.sorted.sortedHours} of ${r.sorted.hours} (${fmtInt(r.sorted.runs)} runs, ${fmtInt(r.sorted.series)} series)`,
    r.sameRows ? 'yes' : 'NO',
  ]);
  const speed = rate(ours) / rate(duck);
  const bytes = perPoint(ours) / perPoint(duck);
  const rss = medianOf(ours, 'maxRssBytes');
  const duckRss = medianOf(duck, 'maxRssBytes');
  const sorted = ours.sorted.sortedHours === ours.sorted.hours;
  return {
    tables: [
      {
        columns: [
          `contender (median of ${ours.rounds.length} interleaved rounds)`,
          'wall',
          'CPU',
          'points/s (wall)',
          '× DuckDB',
          'peak RSS',
          'bytes/point out',
          '× DuckDB',
          'hours fully sorted',
          'every row kept',
        ],
        rows,
      },
    ],
    targets: [
      {
        name: 'side by side: every contender kept every row',
        measured:
          peers
            .filter((p) => !p.sameRows)
            .map((p) => p.contender)
            .join(', ') || 'all',
        threshold: 'all',
        pass: peers.every((p) => p.sameRows),
        required: true,
      },
      {
        name: 'points/s (wall), ours / DuckDB threads=1 (both zstd level 3)',
        measured: `${fmtNum(speed)}×`,
        threshold: '≥ 1',
        pass: speed >= 1,
      },
      {
        name: 'peak RSS, ours / DuckDB',
        measured: `${fmtMiB(rss)} / ${fmtMiB(duckRss)}`,
        threshold: `< DuckDB's and ≤ 2 × ${fmtMiB(DEFAULT_TARGET_BYTES)} + 100 MB`,
        pass: rss < duckRss && rss <= bound(DEFAULT_TARGET_BYTES),
      },
      {
        name: 'every output hour fully sorted (ours)',
        measured: `${ours.sorted.sortedHours} of ${ours.sorted.hours}; ${fmtInt(ours.sorted.runs)} runs of ${fmtInt(ours.sorted.series)} series`,
        threshold: 'all',
        pass: sorted,
      },
      {
        name: 'output bytes/point, ours / DuckDB (both zstd level 3)',
        measured: `${fmtNum(bytes)} (${fmtNum(perPoint(ours))} / ${fmtNum(perPoint(duck))})`,
        threshold: '≤ 0.85',
        pass: bytes <= 0.85,
      },
    ],
    notes: [
      `Side by side: ${PEER_HOURS} hours of the day (${fmtInt(peerPoints)} points), each contender on a fresh copy, the order turning round by round; wall time from the parent, CPU and peak RSS from the process itself. DuckDB's Parquet defaults but the codec: zstd at level 3, as ours (COMPRESSION zstd, COMPRESSION_LEVEL 3); pyarrow zstd at level 3 too (compression_level=3; its default is 1).`,
    ],
  };
}
