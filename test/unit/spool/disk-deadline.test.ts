import { stat } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { DiskDeadline } from '../../../src/spool/disk-deadline.js';

/** Holds the thread, as a long collection or a burst of work in the service does. */
function busy(millis: number): void {
  const until = performance.now() + millis;
  while (performance.now() < until) {
    // a stalled event loop
  }
}

test('an operation that finished while the event loop was stalled past the deadline is not taken for a timeout', async () => {
  const deadline = new DiskDeadline(50);
  const results: string[] = [];
  for (let i = 0; i < 5; i++) {
    const run = deadline.run(() => stat(import.meta.dirname));
    // The stat ends on libuv's threads within a millisecond; the deadline's timer is due too
    // when the loop comes back.
    busy(150);
    results.push(
      await run.then(
        () => 'answered',
        (error: Error) => error.message,
      ),
    );
  }
  expect(results).toEqual(Array(5).fill('answered'));
  expect(deadline.stalled).toBe(false);
});

test('an operation that does not answer is still abandoned at its deadline', async () => {
  const deadline = new DiskDeadline(50);
  let release = () => {};
  const started = performance.now();
  const run = deadline.run(() => new Promise<void>((resolve) => (release = resolve)));
  await expect(run).rejects.toThrow('the disk did not answer within 50 ms');
  // An upper bound with slack: the verdict waits at most one turn of the loop past the timer.
  expect(performance.now() - started).toBeLessThan(1_000);
  expect(deadline.stalled).toBe(true);
  release();
  await new Promise((resolve) => setImmediate(resolve));
  expect(deadline.stalled).toBe(false);
});
