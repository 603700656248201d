/**
 * A body worker that hangs (never answers a job) must not hold every later batch: the job is
 * failed at its deadline, the worker stopped, and the next job gets a new worker. The hang is a
 * worker that reads its jobs and never answers, started where body-worker.js would be.
 */
import { afterEach, expect, test } from 'vitest';
import { settleWithin } from '../../../src/base/deadline.js';
import { BodyMakerError } from '../../../src/body/body-types.js';
import { createWorkerBodyMaker, workerAnswerMillis } from '../../../src/body/worker-body-maker.js';
import { restoreWorkers, swapWorkers } from '../../support/worker-swap.js';

/** Until restored, every new Worker takes its jobs and never answers. */
function hangingWorkers(): void {
  swapWorkers((_url, options) => [
    "require('node:worker_threads').parentPort.on('message', () => {});",
    { ...options, eval: true },
  ]);
}

afterEach(restoreWorkers);

test('a job the worker does not answer fails at its deadline; the next gets a new worker', async () => {
  const maker = createWorkerBodyMaker({
    body: 'framed',
    compression: 'gzip',
    level: 6,
    // Long enough for a new worker to start and answer on a busy machine.
    workerAnswerMillis: 3_000,
  });
  try {
    hangingWorkers();
    const hung = maker.make({
      records: [Buffer.from('{"a":1}')],
      framing: null,
      sha256: false,
      crc32: false,
    });
    let error: unknown;
    hung.catch((e: unknown) => {
      error = e;
    });
    // Well past the deadline, with slack for a busy machine.
    expect(await settleWithin(hung, 15_000)).toBe(true);
    expect(error).toBeInstanceOf(BodyMakerError);
    expect((error as Error).message).toBe(
      'the compression worker did not answer within 3000 ms; it is stopped and its batch is lost',
    );
    restoreWorkers();
    const made = await maker.make({
      records: [Buffer.from('{"b":2}')],
      framing: null,
      sha256: false,
      crc32: false,
    });
    expect(made.body.length).toBeGreaterThan(0);
  } finally {
    await maker.close();
  }
});

test('the deadline is 30 s, or a batch at 100 KiB/s when that is longer', () => {
  expect(workerAnswerMillis(8 * 1024 * 1024)).toBe(81_920);
  expect(workerAnswerMillis(1024 * 1024)).toBe(30_000);
  expect(workerAnswerMillis(undefined)).toBe(30_000);
});
