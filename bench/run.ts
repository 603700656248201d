/**
 * `npm run bench [-- --quick] [-- --only=encode,zstd-engines] [-- --cpu-prof]`: runs each suite
 * in a child process of its own (a fresh heap, --expose-gc), prints markdown tables with the
 * targets (PASS/FAIL) and writes bench/results/latest.json. With S3_ENDPOINT (+ S3_ACCESS_KEY_ID,
 * S3_SECRET_ACCESS_KEY) the real server is used where the suites can use it. Any other flag is
 * passed on to the suites (e.g. `--steady-seconds=60` for the footprint suite).
 *
 * Exit code: 1 if a suite crashed or any target failed (performance targets included), so a
 * regression fails the run; `--report-only` reports failed targets without failing (0 unless
 * a suite crashed or a required correctness target failed).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { ROOT, runTs } from './lib/child.js';
import { type LoadReport, measureLoad } from './lib/machine-load.js';
import {
  crashOf,
  exitCode,
  markdownTable,
  RESULT_MARK,
  type SuiteResult,
  type Target,
  verdict,
} from './lib/result.js';
import { s3Env } from './lib/s3-env.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

interface Suite {
  name: string;
  file: string;
  /** Generous: a suite that hangs is reported, not waited for forever. */
  capMillis: number;
}
const SUITES: Suite[] = [
  { name: 'encode', file: 'bench/encode-throughput.ts', capMillis: 300_000 },
  { name: 'encode-signals', file: 'bench/encode-signals.ts', capMillis: 600_000 },
  { name: 'parquet-signals', file: 'bench/parquet-signals.ts', capMillis: 600_000 },
  { name: 'lookups', file: 'bench/lake-lookups.ts', capMillis: 1_800_000 },
  { name: 'bloom-filters', file: 'bench/bloom-filters.ts', capMillis: 600_000 },
  { name: 'event-loop', file: 'bench/event-loop-blocking.ts', capMillis: 600_000 },
  { name: 'shutdown', file: 'bench/shutdown-blackhole.ts', capMillis: 300_000 },
  { name: 'end-to-end', file: 'bench/end-to-end-s3.ts', capMillis: 300_000 },
  { name: 'memory', file: 'bench/memory-cycles.ts', capMillis: 300_000 },
  { name: 'outage', file: 'bench/memory-outage.ts', capMillis: 300_000 },
  { name: 'journal', file: 'bench/journal-cost.ts', capMillis: 600_000 },
  { name: 'zstd-engines', file: 'bench/zstd-engines.ts', capMillis: 900_000 },
  { name: 'parquet', file: 'bench/parquet.ts', capMillis: 1_200_000 },
  { name: 'parquet-peak', file: 'bench/parquet-peak.ts', capMillis: 900_000 },
  { name: 'footprint', file: 'bench/footprint.ts', capMillis: 2_400_000 },
  { name: 'compaction', file: 'bench/compaction.ts', capMillis: 3_600_000 },
];

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const reportOnly = argv.includes('--report-only');
const only = argv
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
/** Flags for the suites themselves (e.g. the footprint suite's --steady-seconds=N), passed on. */
const suiteFlags = argv.filter(
  (a) => !['--quick', '--report-only', '--cpu-prof'].includes(a) && !a.startsWith('--only='),
);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const profDir = argv.includes('--cpu-prof')
  ? join(ROOT, 'bench/results/profiles', stamp)
  : undefined;
const resultsDir = join(ROOT, 'bench/results');
mkdirSync(resultsDir, { recursive: true });
if (profDir !== undefined) mkdirSync(profDir, { recursive: true });

interface SuiteRecord extends SuiteResult {
  load: LoadReport;
  seconds: number;
}

const records: SuiteRecord[] = [];
let crashed = false;
const allLoad = measureLoad();
const started = performance.now();
for (const suite of SUITES.filter((s) => only === undefined || only.includes(s.name))) {
  process.stderr.write(`\n[${suite.name}] ${suite.file}\n`);
  const load = measureLoad();
  const run = await runTs(suite.file, {
    args: [
      ...(quick ? ['--quick'] : []),
      ...(profDir ? [`--cpu-prof-dir=${profDir}`] : []),
      ...suiteFlags,
    ],
    nodeFlags: [
      '--expose-gc',
      ...(profDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`]),
    ],
    capMillis: suite.capMillis,
    echoStderr: true,
  });
  const line = run.stdout.find((l) => l.startsWith(RESULT_MARK));
  const crash = crashOf(run, line !== undefined);
  if (crash !== undefined) crashed = true;
  const lastWords = run.stderr.trim().split('\n').slice(-5).join(' / ');
  let result: SuiteResult;
  if (line === undefined) {
    result = {
      suite: suite.name,
      title: suite.file,
      skipped: `CRASHED (${crash}): ${lastWords}`,
      tables: [],
      targets: [],
      notes: [],
      data: null,
    };
  } else {
    result = JSON.parse(line.slice(RESULT_MARK.length)) as SuiteResult;
    // Its result stands as printed; the crash after it fails the run all the same.
    if (crash !== undefined) result.notes.push(`CRASHED (${crash}): ${lastWords}`);
  }
  records.push({ ...result, load: load(), seconds: run.millis / 1000 });
}
const totalLoad = allLoad();

const fmtLoad = (l: LoadReport) =>
  l.foreignCores === null
    ? `load average ${l.loadavg1.toFixed(2)}`
    : `other processes used ${l.foreignCores.toFixed(2)} of ${cpus().length} cores on average (we used ${(l.ownCores ?? 0).toFixed(2)}); load average ${l.loadavg1.toFixed(2)}`;

const s3 = s3Env();
const out: string[] = [];
out.push(`# otel-s3-exporter benchmarks${quick ? ' (--quick)' : ''}`);
out.push('');
out.push(
  `${new Date().toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · ${(totalmem() / 2 ** 30).toFixed(0)} GiB · S3: ${s3?.endpoint ?? 'none (S3_ENDPOINT not set)'}`,
);
out.push(`Machine load during the whole run: ${fmtLoad(totalLoad)}.`);
for (const r of records) {
  out.push('');
  out.push(`## ${r.title}`);
  out.push('');
  if (r.skipped !== undefined) {
    out.push(`Skipped: ${r.skipped}`);
    continue;
  }
  for (const table of r.tables) {
    out.push(markdownTable(table));
    out.push('');
  }
  for (const note of r.notes) out.push(`- ${note}`);
  out.push(`- ${r.seconds.toFixed(0)} s; during this suite ${fmtLoad(r.load)}.`);
}
const targets: (Target & { suite: string })[] = records.flatMap((r) =>
  r.targets.map((t) => ({ ...t, suite: r.suite })),
);
out.push('');
out.push('## Targets');
out.push('');
out.push(
  markdownTable({
    columns: ['target', 'measured', 'threshold', 'result'],
    rows: targets.map((t) => [t.name, t.measured, t.threshold, verdict(t.pass)]),
  }),
);
const counts = { PASS: 0, FAIL: 0, SKIP: 0 };
for (const t of targets) counts[verdict(t.pass) as keyof typeof counts]++;
out.push('');
out.push(
  `${counts.PASS} PASS, ${counts.FAIL} FAIL, ${counts.SKIP} SKIP in ${((performance.now() - started) / 1000).toFixed(0)} s${crashed ? '; a suite CRASHED' : ''}`,
);
console.log(out.join('\n'));

const file = join(resultsDir, 'latest.json');
writeFileSync(
  file,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      quick,
      node: process.version,
      cpus: cpus().length,
      s3Endpoint: s3?.endpoint ?? null,
      load: totalLoad,
      suites: records,
      targets,
      markdown: out.join('\n'),
    },
    null,
    2,
  )}\n`,
);
console.error(`\nwrote ${file}${profDir === undefined ? '' : `; CPU profiles in ${profDir}`}`);
const failed = targets.filter((t) => t.pass === false);
const gating = reportOnly ? failed.filter((t) => t.required === true) : failed;
if (gating.length > 0) {
  console.error(
    `failed: ${gating.map((t) => `${t.suite}: ${t.name}`).join('; ')}` +
      (reportOnly ? '' : ' (--report-only reports performance targets without failing)'),
  );
}
process.exit(exitCode(targets, crashed, reportOnly));
