import { stat } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { settleWithin } from '../../../src/base/deadline.js';

/** Holds the thread, as a long collection or a burst of work in the service does. */
function busy(millis: number): void {
  const until = performance.now() + millis;
  while (performance.now() < until) {
    // a stalled event loop
  }
}

test('work that ended while the event loop was stalled past the deadline settled in time', async () => {
  const answers: boolean[] = [];
  for (let i = 0; i < 5; i++) {
    // A stat ends on libuv's threads within a millisecond; the timer is due too when the loop
    // comes back, and runs before the poll phase delivers the stat.
    const waited = settleWithin(stat(import.meta.dirname), 50);
    busy(150);
    answers.push(await waited);
  }
  expect(answers).toEqual([true, true, true, true, true]);
});

test('work that does not end is given up at the deadline', async () => {
  const started = performance.now();
  expect(await settleWithin(new Promise(() => {}), 50)).toBe(false);
  const took = performance.now() - started;
  expect(took).toBeGreaterThanOrEqual(49);
  // An upper bound with slack: the verdict waits one turn of the loop past the timer.
  expect(took).toBeLessThan(1_000);
});
