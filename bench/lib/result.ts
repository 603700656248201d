/**
 * What every suite reports: a markdown table, targets with PASS/FAIL, notes, raw data. A suite
 * runs in a child process of bench/run.ts and prints its result as one marked JSON line.
 */

export interface Table {
  columns: string[];
  rows: string[][];
}

export interface Target {
  name: string;
  /** What was measured, e.g. "3.1× (ours 1.2 M/s, official 0.4 M/s)". */
  measured: string;
  /** The threshold, e.g. "≥ 2×". */
  threshold: string;
  /** null: not evaluated (skipped). */
  pass: boolean | null;
  /** A correctness check, not a performance figure: failing it fails `npm run bench`. */
  required?: boolean;
}

export interface SuiteResult {
  suite: string;
  title: string;
  /** Set when the suite did not run, with the reason. */
  skipped?: string;
  tables: Table[];
  targets: Target[];
  notes: string[];
  /** Raw figures for bench/results/latest.json. */
  data: unknown;
}

export const RESULT_MARK = 'BENCH_RESULT ';

/** Prints the result line the parent parses; everything else a suite prints goes to stderr. */
export function emitResult(result: SuiteResult): void {
  process.stdout.write(`${RESULT_MARK}${JSON.stringify(result)}\n`);
}

/** Progress for the person watching; stderr, so stdout stays machine-readable. */
export function progress(message: string): void {
  process.stderr.write(`  ${message}\n`);
}

export function markdownTable(table: Table): string {
  const widths = table.columns.map((c, i) =>
    Math.max(c.length, ...table.rows.map((r) => (r[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [
    line(table.columns),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...table.rows.map(line),
  ].join('\n');
}

export function verdict(pass: boolean | null): string {
  return pass === null ? 'SKIP' : pass ? 'PASS' : 'FAIL';
}

/**
 * The verdict of a check over every one of `expected` items, given the results of those checked:
 * PASS only when each was checked and passed. With none expected (nothing to check here): null,
 * SKIP. Never a PASS over nothing.
 */
export function everyChecked(results: readonly boolean[], expected: number): boolean | null {
  if (expected === 0 && results.length === 0) return null;
  return results.length >= expected && results.every((ok) => ok);
}

/** How a suite's process ended (bench/lib/child.ts's ChildRun). */
export interface SuiteExit {
  code: number | null;
  signal: string | null;
  /** The runner's cap was hit and the process killed. */
  capped: boolean;
}

/**
 * Why a suite counts as crashed, or undefined: no result line, or a process that did not exit
 * with 0 (an error after its result line, a signal, the cap), whose result is reported but whose
 * crash fails the run as a crash before its result would.
 */
export function crashOf(exit: SuiteExit, hasResult: boolean): string | undefined {
  const how = exit.capped
    ? 'cap hit'
    : exit.code === 0
      ? undefined
      : `exit ${exit.code ?? exit.signal}`;
  if (!hasResult) return how ?? 'exit 0 without a result line';
  return how === undefined ? undefined : `${how} after its result line`;
}

/**
 * The runner's exit code: 1 if a suite crashed or a target failed; with `reportOnly`, failed
 * performance targets are reported without failing, required ones still fail. A skipped target
 * (pass null) never passes nor fails the run.
 */
export function exitCode(
  targets: readonly Pick<Target, 'pass' | 'required'>[],
  crashed: boolean,
  reportOnly: boolean,
): 0 | 1 {
  const failed = targets.filter((t) => t.pass === false);
  const gating = reportOnly ? failed.filter((t) => t.required === true) : failed;
  return crashed || gating.length > 0 ? 1 : 0;
}

/** Command-line flags shared by run.ts and every suite. */
export interface BenchArgs {
  quick: boolean;
  /** Directory for --cpu-prof profiles of the suites' child processes, or undefined. */
  cpuProfDir: string | undefined;
  /**
   * The number a suite's own `--name=N` gives, `fallback` when there is none; a value that is not
   * a number is refused, naming the flag.
   */
  number(name: string, fallback: number): number;
}

export function parseArgs(argv: readonly string[]): BenchArgs {
  const prof = argv.find((a) => a.startsWith('--cpu-prof-dir='));
  return {
    quick: argv.includes('--quick'),
    cpuProfDir: prof === undefined ? undefined : prof.slice('--cpu-prof-dir='.length),
    number(name, fallback) {
      const given = argv.find((a) => a.startsWith(`--${name}=`));
      if (given === undefined) return fallback;
      const text = given.slice(name.length + 3);
      const value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value)) {
        throw new Error(`--${name}=${text}: not a number; give one, e.g. --${name}=${fallback}`);
      }
      return value;
    },
  };
}
