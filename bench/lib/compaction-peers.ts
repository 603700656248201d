/**
 * The compaction suite's side-by-side run (issue 34): the same hours of input compacted by
 * `otel-s3 compact`, by DuckDB (`COPY … ORDER BY`, threads=1, zstd at level 3 as ours) and, where
 * Python has pyarrow, by pyarrow (zstd at level 3 too), interleaved round by round (the order turns each round), each
 * on a fresh copy of the input. Measures wall and CPU time, peak RSS and the output's bytes a
 * point, checks that each contender kept every row (an order-independent hash of the rows equal
 * to the input's), and how sorted each output hour is (DuckDB over the outputs: runs of one
 * series against series).
 */

import { spawn } from 'node:child_process';
import { cp, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { duckdbRows } from '../../test/support/duckdb.js';
import { ROOT } from './child.js';
import { progress } from './result.js';
import { median } from './stats.js';

export type Contender = 'ours' | 'duckdb' | 'pyarrow';

export interface PeerRun {
  millis: number;
  cpuMillis: number;
  maxRssBytes: number;
  outBytes: number;
}

export interface Sortedness {
  /** Output hours. */
  hours: number;
  /** Hours whose rows are one sorted run: every series contiguous and in time order, services and metrics ascending. */
  sortedHours: number;
  /** Contiguous runs of one series, summed over hours (equal to `series` when fully sorted). */
  runs: number;
  series: number;
  /** Rows whose service or metric sorts before the previous row's. */
  stepsBack: number;
}

export interface PeerResult {
  contender: Contender;
  rounds: PeerRun[];
  rows: number;
  sameRows: boolean;
  sorted: Sortedness;
}

/** The sort key's columns; a series is these but time. */
const SERIES = `ServiceName AS s, MetricName AS m, ResourceAttributes::VARCHAR AS ra,
  ScopeName AS sc, Attributes::VARCHAR AS a`;

/** Row count and an order-independent hash of every row's identity and values. */
async function fingerprint(glob: string): Promise<{ rows: number; hash: string }> {
  const rows = await duckdbRows(`
SELECT count(*) AS n, sum(hash(ServiceName, MetricName, ResourceAttributes::VARCHAR,
  Attributes::VARCHAR, TimeUnix, StartTimeUnix, Value, ValueAsInt, Count, Sum, Min, Max,
  BucketCounts::VARCHAR, ExplicitBounds::VARCHAR, Flags)::HUGEINT)::VARCHAR AS h
FROM read_parquet('${glob}')`);
  const r = rows[0] as { n: unknown; h: unknown };
  return { rows: Number(r.n), hash: String(r.h) };
}

/** How sorted each output hour is: its files in name order (the order they were written). */
export async function sortedness(dir: string): Promise<Sortedness> {
  const rows = await duckdbRows(`
WITH t AS (
  SELECT regexp_replace(filename, '/[^/]*$', '') AS hour, filename AS f, file_row_number AS n,
    ${SERIES}, TimeUnix AS ti
  FROM read_parquet('${dir}/**/*.parquet', filename = true, file_row_number = true)
), w AS (
  SELECT *, lag(s) OVER o AS ps, lag(m) OVER o AS pm, lag(ra) OVER o AS pra, lag(sc) OVER o AS psc,
    lag(a) OVER o AS pa, lag(ti) OVER o AS pti
  FROM t WINDOW o AS (PARTITION BY hour ORDER BY f, n)
), h AS (
  SELECT hour,
    count(*) FILTER (WHERE ps IS NULL OR s <> ps OR m <> pm OR ra <> pra OR sc <> psc OR a <> pa) AS runs,
    count(*) FILTER (WHERE s < ps OR (s = ps AND m < pm)) AS back,
    count(*) FILTER (WHERE s = ps AND m = pm AND ra = pra AND sc = psc AND a = pa AND ti < pti) AS tback
  FROM w GROUP BY hour
), series AS (
  SELECT hour, count(*) AS series FROM (SELECT DISTINCT hour, s, m, ra, sc, a FROM t) GROUP BY hour
)
SELECT count(*) AS hours, count(*) FILTER (WHERE runs = series AND back = 0 AND tback = 0) AS sorted,
  sum(runs) AS runs, sum(series) AS series, sum(back) AS back
FROM h JOIN series USING (hour)`);
  const r = rows[0] as Record<string, unknown>;
  return {
    hours: Number(r.hours),
    sortedHours: Number(r.sorted),
    runs: Number(r.runs),
    series: Number(r.series),
    stepsBack: Number(r.back),
  };
}

export async function parquetBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.parquet'))
      total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** Whether OTEL_S3_PYARROW_PYTHON names a Python with pyarrow. */
export async function pyarrowPython(): Promise<string | undefined> {
  const python = process.env.OTEL_S3_PYARROW_PYTHON;
  if (python === undefined || python === '') return undefined;
  const run = await runProcess(python, ['-c', 'import pyarrow'], 60_000);
  return run.code === 0 ? python : undefined;
}

export interface PeerOptions {
  /** The directory the inputs are under (root/input). */
  root: string;
  input: string;
  rounds: number;
  contenders: Contender[];
  python?: string;
  /** `otel-s3 compact --dir root --prefix <prefix>`: time, CPU and peak RSS. */
  ours(prefix: string): Promise<{ millis: number; cpuMillis: number; maxRssBytes: number }>;
}

/** Runs the contenders over copies of root/input, interleaved; the first round is also checked. */
export async function comparePeers(o: PeerOptions): Promise<PeerResult[]> {
  const inputDir = join(o.root, o.input);
  const expected = await fingerprint(`${inputDir}/**/*.parquet`);
  const results = new Map<Contender, PeerResult>();
  for (let round = 0; round < o.rounds; round++) {
    const order = o.contenders.map((_, i) => o.contenders[(i + round) % o.contenders.length]);
    for (const contender of order as Contender[]) {
      progress(`compaction: side by side, round ${round + 1}/${o.rounds}, ${contender}`);
      const work = join(o.root, `peer-${contender}`);
      const out = contender === 'ours' ? work : `${work}-out`;
      await rm(work, { recursive: true, force: true });
      await rm(`${work}-out`, { recursive: true, force: true });
      await cp(inputDir, work, { recursive: true });
      let usage: { millis: number; cpuMillis: number; maxRssBytes: number };
      if (contender === 'ours') usage = await o.ours(`peer-${contender}`);
      else if (contender === 'duckdb') {
        usage = await measured(
          process.execPath,
          ['--import', './bench/children/peak-rss.mjs', 'bench/children/duckdb-compact.mjs'],
          [work, out, '1', 'zstd'],
        );
      } else {
        usage = await measured(
          o.python as string,
          ['bench/children/pyarrow-compact.py'],
          [work, out],
        );
      }
      const outBytes = await parquetBytes(out);
      let result = results.get(contender);
      if (result === undefined) {
        const got = await fingerprint(`${out}/**/*.parquet`);
        result = {
          contender,
          rounds: [],
          rows: got.rows,
          sameRows: got.rows === expected.rows && got.hash === expected.hash,
          sorted: await sortedness(out),
        };
        results.set(contender, result);
      }
      result.rounds.push({ ...usage, outBytes });
      await rm(work, { recursive: true, force: true });
      await rm(`${work}-out`, { recursive: true, force: true });
    }
  }
  return o.contenders.map((c) => results.get(c) as PeerResult);
}

export const medianOf = (r: PeerResult, key: keyof PeerRun) => median(r.rounds.map((x) => x[key]));

/** Runs a command whose stderr ends with a PEAK_RSS line; the wall time is measured here. */
async function measured(
  command: string,
  prefixArgs: string[],
  args: string[],
): Promise<{ millis: number; cpuMillis: number; maxRssBytes: number }> {
  const started = performance.now();
  const run = await runProcess(command, [...prefixArgs, ...args], 3_600_000);
  const millis = performance.now() - started;
  const usage = run.stderr.split('\n').find((l) => l.startsWith('PEAK_RSS '));
  if (run.code !== 0 || usage === undefined) {
    throw new Error(`${command} ${prefixArgs.join(' ')} failed (${run.code}): ${run.stderr}`);
  }
  const u = JSON.parse(usage.slice('PEAK_RSS '.length)) as {
    maxRssBytes: number;
    cpuMillis: number;
  };
  return { millis, cpuMillis: u.cpuMillis, maxRssBytes: u.maxRssBytes };
}

function runProcess(
  command: string,
  args: string[],
  capMillis: number,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), capMillis);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr: err });
    });
  });
}
