/**
 * close() stops the body worker within a grace: Worker.terminate() resolves only once the
 * worker's thread has stopped, and a thread inside a native call (a compression library) stops
 * only when that call returns.
 */
import { Worker } from 'node:worker_threads';
import { afterEach, expect, test, vi } from 'vitest';
import { createWorkerBodyMaker } from '../../../src/body/worker-body-maker.js';
import { captureDiag } from '../../support/diag-capture.js';

const logged = captureDiag();

afterEach(() => {
  vi.restoreAllMocks();
});

test('a worker whose terminate() never resolves: close() resolves after its grace and says so', async () => {
  const maker = createWorkerBodyMaker({ body: 'framed', compression: 'gzip', level: 6 });
  await maker.make({
    records: [Buffer.from('{"a":1}')],
    framing: null,
    sha256: false,
    crc32: false,
  });
  const terminate = Worker.prototype.terminate;
  // The thread stops (nothing outlives the test), but the promise never says so.
  vi.spyOn(Worker.prototype, 'terminate').mockImplementation(function (this: Worker) {
    void terminate.call(this);
    return new Promise<number>(() => {});
  });
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    maker.close().then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), 5_000);
    }),
  ]);
  clearTimeout(timer);
  expect(ended).toBe(true);
  expect(performance.now() - start).toBeGreaterThanOrEqual(990);
  expect(logged).toContainEqual({
    level: 'warn',
    text: 'otel-s3-exporter: the compression worker did not stop within 1000 ms of shutdown; it is left to end on its own',
  });
});
