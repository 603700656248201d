import { describe, expect, test } from 'vitest';
import { crashOf, everyChecked, exitCode } from '../../../bench/lib/result.js';

/**
 * The bench runner's verdict (bench/run.ts): a suite whose process did not end well counts as
 * crashed even when it printed its result line first, and the exit code fails on any failed
 * target (required ones even with --report-only), never on a skipped one.
 */

const ok = { code: 0, signal: null, capped: false };

describe('a suite crashed', () => {
  test('not when it printed its result and exited with 0', () => {
    expect(crashOf(ok, true)).toBeUndefined();
  });

  test('when it printed no result line, however it exited', () => {
    expect(crashOf(ok, false)).toBeDefined();
    expect(crashOf({ code: 1, signal: null, capped: false }, false)).toBe('exit 1');
    expect(crashOf({ code: null, signal: 'SIGKILL', capped: true }, false)).toBe('cap hit');
  });

  test('when it exited non-zero, by a signal or at the cap after its result line', () => {
    expect(crashOf({ code: 1, signal: null, capped: false }, true)).toMatch(/exit 1/);
    expect(crashOf({ code: null, signal: 'SIGSEGV', capped: false }, true)).toMatch(/SIGSEGV/);
    expect(crashOf({ code: null, signal: 'SIGKILL', capped: true }, true)).toMatch(/cap hit/);
  });
});

describe('the exit code', () => {
  const pass = { pass: true };
  const skip = { pass: null };
  const fail = { pass: false };
  const requiredFail = { pass: false, required: true };

  test('0 when every target passed or was skipped and nothing crashed', () => {
    expect(exitCode([pass, skip], false, false)).toBe(0);
    expect(exitCode([], false, false)).toBe(0);
  });

  test('1 on a failed target, or a crash', () => {
    expect(exitCode([pass, fail], false, false)).toBe(1);
    expect(exitCode([pass], true, false)).toBe(1);
    expect(exitCode([pass], true, true)).toBe(1);
  });

  test('--report-only: a failed performance target is reported only, a required one fails', () => {
    expect(exitCode([fail, skip], false, true)).toBe(0);
    expect(exitCode([fail, requiredFail], false, true)).toBe(1);
  });
});

describe('a check over every item', () => {
  test('passes when every expected item was checked and passed', () => {
    expect(everyChecked([true, true], 2)).toBe(true);
  });

  test('fails when one failed, or fewer were checked than expected', () => {
    expect(everyChecked([true, false], 2)).toBe(false);
    expect(everyChecked([true], 2)).toBe(false);
    expect(everyChecked([], 3)).toBe(false);
  });

  test('is skipped, not passed, when there was nothing to check', () => {
    expect(everyChecked([], 0)).toBeNull();
  });
});
