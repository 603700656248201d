/** Times the tests choose, the same in every file that uses them. */

export const HOUR_MS = 3_600_000;

/** The start of the hour two days ago: long settled, so compaction takes it. */
export const SETTLED_HOUR = Math.floor((Date.now() - 2 * 86_400_000) / HOUR_MS) * HOUR_MS;

/** When the reader tests' objects were written. */
export const READER_T0 = new Date('2026-03-04T05:06:07.000Z');

/** When the CLI tests' objects were written. */
export const CLI_T0 = new Date('2026-11-30T04:00:00.000Z');

/** `at(n)`: the time `n` units of `unitMillis` (default 1 ms) after `t0`. */
export const timesAfter =
  (t0: Date, unitMillis = 1) =>
  (n: number): Date =>
    new Date(t0.getTime() + n * unitMillis);
