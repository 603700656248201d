import fc from 'fast-check';
import type { Canonical } from './otlp-reference.js';

/**
 * Comparing decoded OTLP messages in property tests: as text (quicker than a deep equality), and
 * on failure naming the first line that differs with the lines around it (a deep equality's diff
 * would be cut short inside fast-check's report).
 */

/** -0 told apart from 0, which JSON.stringify drops the sign of. */
const signedZero = (_: string, v: unknown) => (Object.is(v, -0) ? '-0 (negative zero)' : v);

const asText = (message: unknown, indent?: number) => JSON.stringify(message, signedZero, indent);

/** `value` with every object's keys in sorted order (our decoder lists fields in wire order). */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    out[key] = sortedKeys((value as Record<string, unknown>)[key]);
  }
  return out;
}

/** A check that throws unless a message is `expected`. */
export function sameMessageAs(
  expected: Canonical | unknown,
  expectedName = 'the official message',
): (what: string, actual: unknown) => void {
  const expectedText = asText(expected);
  return (what, actual) => {
    if (asText(actual) === expectedText) return;
    const a = (asText(actual, 1) ?? 'undefined').split('\n');
    const e = (asText(expected, 1) ?? 'undefined').split('\n');
    let line = 0;
    while (a[line] === e[line]) line++;
    const around = (lines: string[]) => lines.slice(Math.max(0, line - 6), line + 3).join('\n');
    throw new Error(
      `${what} differs from ${expectedName} at line ${line + 1}\n` +
        `-- ours:\n${around(a)}\n-- expected:\n${around(e)}`,
    );
  };
}

/**
 * Runs a property with a fresh seed each run (so CI keeps exploring); a failure names its seed
 * and path, and FUZZ_SEED=<seed> FUZZ_PATH=<path> replays that case. FUZZ_RUNS sets the count.
 */
export function checkProperty<T>(
  arbitrary: fc.Arbitrary<T>,
  property: (value: T) => void,
  defaultRuns: number,
  testFile: string,
): void {
  const parameters: fc.Parameters<[T]> = {
    numRuns: fuzzRuns(defaultRuns),
    ...(process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) }),
    ...(process.env.FUZZ_PATH === undefined ? {} : { path: process.env.FUZZ_PATH }),
  };
  const run = fc.check(fc.property(arbitrary, property), parameters);
  if (!run.failed) return;
  const replay = `FUZZ_SEED=${run.seed} FUZZ_PATH=${run.counterexamplePath} npx vitest run ${testFile}`;
  throw new Error(`${fc.defaultReportMessage(run)}\n\nReplay: ${replay}`, {
    cause: run.errorInstance,
  });
}

export function fuzzRuns(defaultRuns: number): number {
  return Number(process.env.FUZZ_RUNS ?? defaultRuns);
}
