import { describe, expect, test } from 'vitest';
import {
  type BackoffPolicy,
  MAX_RETRY_AFTER_MILLIS,
  parseRetryAfter,
  retryDelay,
  slowRetryDelay,
} from '../../../src/s3/backoff.js';

const POLICY: BackoffPolicy = { initialDelayMillis: 100, maxDelayMillis: 1000 };
const constant = (value: number) => () => value;

describe('retryDelay (full jitter)', () => {
  test('is 0 for every attempt when random() returns 0', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect(retryDelay(attempt, POLICY, undefined, constant(0))).toBe(0);
    }
  });

  test('is half the doubling bound, capped at maxDelayMillis, when random() returns 0.5', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((a) =>
      retryDelay(a, POLICY, undefined, constant(0.5)),
    );
    // bounds: 100, 200, 400, 800, min(1600, 1000), 1000, 1000
    expect(delays).toEqual([50, 100, 200, 400, 500, 500, 500]);
  });

  test('is just below the bound (floored) when random() returns 0.999', () => {
    const delays = [1, 2, 3, 4, 5, 6].map((a) => retryDelay(a, POLICY, undefined, constant(0.999)));
    // floor(0.999 * bound) for bounds 100, 200, 400, 800, 1000, 1000
    expect(delays).toEqual([99, 199, 399, 799, 999, 999]);
  });

  test('the bound doubles per attempt until it reaches the cap', () => {
    const policy: BackoffPolicy = { initialDelayMillis: 250, maxDelayMillis: 30_000 };
    // random() = 1 - 2^-53 gives floor(bound * (1 - tiny)) = bound - 1 for these integer bounds
    const nearOne = constant(1 - 2 ** -53);
    const bounds = [1, 2, 3, 4, 5, 6, 7, 8, 9].map(
      (a) => retryDelay(a, policy, undefined, nearOne) + 1,
    );
    expect(bounds).toEqual([250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  test('stays capped at maxDelayMillis for very large attempt numbers', () => {
    expect(retryDelay(1_000, POLICY, undefined, constant(0.5))).toBe(500);
    expect(retryDelay(5_000, POLICY, undefined, constant(0.999))).toBe(999);
  });

  test('treats attempt 0 like attempt 1', () => {
    expect(retryDelay(0, POLICY, undefined, constant(0.5))).toBe(50);
  });

  test('is always an integer in [0, bound) for Math.random', () => {
    for (let i = 0; i < 1000; i++) {
      const attempt = 1 + (i % 8);
      const bound = Math.min(1000, 100 * 2 ** (attempt - 1));
      const delay = retryDelay(attempt, POLICY);
      expect(Number.isInteger(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(bound);
    }
  });

  test('Retry-After is a floor above the jittered delay', () => {
    expect(retryDelay(1, POLICY, 5_000, constant(0))).toBe(5_000);
    expect(retryDelay(3, POLICY, 250, constant(0.5))).toBe(250);
  });

  test('a jittered delay above Retry-After wins', () => {
    expect(retryDelay(4, POLICY, 10, constant(0.5))).toBe(400);
    expect(retryDelay(4, POLICY, 0, constant(0.5))).toBe(400);
  });

  test('Retry-After may exceed maxDelayMillis', () => {
    expect(retryDelay(1, POLICY, 120_000, constant(0))).toBe(120_000);
  });

  test('Retry-After is capped at MAX_RETRY_AFTER_MILLIS', () => {
    expect(MAX_RETRY_AFTER_MILLIS).toBe(600_000);
    expect(retryDelay(1, POLICY, 3_600_000, constant(0))).toBe(MAX_RETRY_AFTER_MILLIS);
    expect(retryDelay(1, POLICY, MAX_RETRY_AFTER_MILLIS + 1, constant(0.999))).toBe(
      MAX_RETRY_AFTER_MILLIS,
    );
  });
});

describe('slowRetryDelay', () => {
  const policy: BackoffPolicy = { initialDelayMillis: 250, maxDelayMillis: 30_000 };

  test('is max/2 when random() returns 0', () => {
    expect(slowRetryDelay(policy, constant(0))).toBe(15_000);
  });

  test('is 3/4 of max when random() returns 0.5', () => {
    expect(slowRetryDelay(policy, constant(0.5))).toBe(22_500);
  });

  test('is just below max when random() returns 0.999', () => {
    expect(slowRetryDelay(policy, constant(0.999))).toBe(29_985);
  });

  test('stays in [max/2, max] for Math.random', () => {
    for (let i = 0; i < 1000; i++) {
      const delay = slowRetryDelay(policy);
      expect(delay).toBeGreaterThanOrEqual(15_000);
      expect(delay).toBeLessThanOrEqual(30_000);
    }
  });
});

describe('parseRetryAfter', () => {
  const NOW = Date.parse('2026-03-04T05:06:07Z');

  /** Each test: parseRetryAfter(value, NOW) for each value is the millis beside it. */
  const cases: [title: string, values: [string | undefined, number | undefined][]][] = [
    [
      'parses delay-seconds',
      [
        ['3', 3_000],
        ['0', 0],
        ['120', 120_000],
      ],
    ],
    [
      'parses fractional seconds',
      [
        ['1.5', 1_500],
        ['0.0004', 0],
      ],
    ],
    ['trims surrounding whitespace', [['  7 ', 7_000]]],
    [
      'parses an HTTP date relative to the injected now',
      [
        ['Wed, 04 Mar 2026 05:06:37 GMT', 30_000],
        ['Wed, 04 Mar 2026 06:06:07 GMT', 3_600_000],
      ],
    ],
    [
      'an HTTP date equal to or before now is 0',
      [
        ['Wed, 04 Mar 2026 05:06:07 GMT', 0],
        ['Wed, 21 Oct 2015 07:28:00 GMT', 0],
      ],
    ],
    [
      'is undefined for undefined, empty and blank values',
      [
        [undefined, undefined],
        ['', undefined],
        ['   ', undefined],
      ],
    ],
  ];
  for (const [title, values] of cases) {
    test(title, () => {
      for (const [value, millis] of values) {
        expect(parseRetryAfter(value, NOW), JSON.stringify(value)).toBe(millis);
      }
    });
  }

  test('is undefined for non-numeric garbage', () => {
    for (const value of ['soon', 'abc', '3s', '1e3', '0x10', 'NaN', 'Infinity']) {
      expect(parseRetryAfter(value, NOW), value).toBeUndefined();
    }
  });

  test('is undefined for malformed values that V8 Date.parse reads as past dates', () => {
    // Neither delay-seconds (1*DIGIT) nor an HTTP-date; V8's lenient Date.parse makes 2001 dates.
    for (const value of ['-1', '+5', '1,5', 'garbage 12']) {
      expect(parseRetryAfter(value, NOW), value).toBeUndefined();
    }
  });

  test('is undefined for malformed values that V8 Date.parse reads as future dates', () => {
    // Otherwise a garbage header parks the batch for MAX_RETRY_AFTER_MILLIS.
    for (const value of ['retry in 2099', 'try again 2030']) {
      expect(parseRetryAfter(value, NOW), value).toBeUndefined();
    }
  });
});
