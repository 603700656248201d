import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, test } from 'vitest';
import { NoAnswerError, withAnswerDeadlines } from '../../../src/reader/answer-deadlines.js';

/** An attempt that never answers: it settles only when its signal is aborted. */
const silent = (signal: AbortSignal) =>
  new Promise<never>((_, reject) =>
    signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
  );

describe('withAnswerDeadlines', () => {
  test('an attempt silent past its deadline is sent again; the last one has no deadline', async () => {
    const starts: number[] = [];
    const started = Date.now();
    const result = await withAnswerDeadlines(
      async (signal, answered) => {
        starts.push(Date.now() - started);
        if (starts.length < 3) return silent(signal);
        // The last attempt answers later than any deadline: it is not given up.
        await sleep(120);
        answered();
        return 'third';
      },
      new AbortController().signal,
      [30, 60],
    );
    expect(result).toBe('third');
    const [, second = 0, third = 0] = starts;
    expect(starts).toHaveLength(3);
    expect(second).toBeGreaterThanOrEqual(25);
    expect(third - second).toBeGreaterThanOrEqual(55);
  });

  test('no answer to any attempt by the last deadline ends the read, every attempt stopped', async () => {
    const seen: AbortSignal[] = [];
    const started = Date.now();
    const reading = withAnswerDeadlines(
      async (signal) => {
        seen.push(signal);
        return silent(signal);
      },
      new AbortController().signal,
      [20, 30],
      150,
    );
    await expect(reading).rejects.toThrow(NoAnswerError);
    await expect(reading).rejects.toThrow('no answer in 0.15 s to 3 requests sent');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(seen.map((s) => s.aborted)).toEqual([true, true, true]);
  });

  test('an answer that has begun is not cut by the no-answer deadline', async () => {
    const result = await withAnswerDeadlines(
      async (_signal, answered) => {
        answered();
        await sleep(200);
        return 'slow body';
      },
      new AbortController().signal,
      [20, 30],
      100,
    );
    expect(result).toBe('slow body');
  });

  test('the request sent first, answering after the one sent beside it began, wins: that one is stopped', async () => {
    const seen: AbortSignal[] = [];
    const result = await withAnswerDeadlines(
      async (signal, answered) => {
        seen.push(signal);
        if (seen.length === 2) return silent(signal);
        // The first answers at 50 ms, after the second was sent at 20 ms.
        await sleep(50);
        answered();
        return 'first';
      },
      new AbortController().signal,
      [20, 1_000],
    );
    expect(result).toBe('first');
    expect(seen.map((s) => s.aborted)).toEqual([false, true]);
  });

  test('a failure ends the read at once, whatever is sent beside it (a server that is down)', async () => {
    let attempts = 0;
    const started = Date.now();
    const reading = withAnswerDeadlines(
      async (signal) => {
        attempts++;
        if (attempts > 1) return silent(signal);
        await sleep(60);
        throw new Error('connect timeout');
      },
      new AbortController().signal,
      [20, 20],
    );
    await expect(reading).rejects.toThrow('connect timeout');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(attempts).toBe(3);
  });

  test('an attempt that answered in time is not given up for a slow body', async () => {
    let attempts = 0;
    const result = await withAnswerDeadlines(
      async (signal, answered) => {
        attempts++;
        answered();
        await sleep(100);
        signal.throwIfAborted();
        return 'body';
      },
      new AbortController().signal,
      [20],
    );
    expect([result, attempts]).toEqual(['body', 1]);
  });

  test("the caller's abort ends the read with its reason, without another attempt", async () => {
    const controller = new AbortController();
    const stop = new Error('stop');
    const seen: AbortSignal[] = [];
    const reading = withAnswerDeadlines(
      (signal) => {
        seen.push(signal);
        return silent(signal);
      },
      controller.signal,
      [1_000],
    );
    setTimeout(() => controller.abort(stop), 20);
    await expect(reading).rejects.toThrow('aborted');
    // The attempt's request was aborted with the caller's reason, not the deadline's.
    expect(seen.map((s) => s.reason)).toEqual([stop]);
  });

  test("an attempt's own failure is the read's, not a reason to ask again", async () => {
    let attempts = 0;
    const reading = withAnswerDeadlines(
      async () => {
        attempts++;
        throw new Error('AccessDenied');
      },
      new AbortController().signal,
      [1_000],
    );
    await expect(reading).rejects.toThrow('AccessDenied');
    expect(attempts).toBe(1);
  });
});
