/**
 * A body worker that cannot start: `new Worker()` throws when its thread cannot be created
 * (ERR_WORKER_INIT_FAILED, EAGAIN: out of threads or memory). Nothing was handed over then, so
 * the batch is given back (stored as its OTLP records), not lost. The failure is real: the
 * worker is asked for a stack no thread can get.
 */
import { afterEach, expect, test } from 'vitest';
import { BodyMakerError } from '../../../src/body/body-types.js';
import { createWorkerBodyMaker } from '../../../src/body/worker-body-maker.js';
import { captureDiag } from '../../support/diag-capture.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportTagged, TRACES } from '../../support/signal-driver.js';
import { restoreWorkers, swapWorkers } from '../../support/worker-swap.js';

const logged = captureDiag();

/** Until restored, every new Worker fails to create its thread, as Node.js reports it. */
function noThreads(): void {
  swapWorkers((url, options) => [
    url,
    { ...options, resourceLimits: { ...options.resourceLimits, stackSizeMb: 1e7 } },
  ]);
}

afterEach(restoreWorkers);

test('make() answers a worker that cannot start with the batch given back', async () => {
  const maker = createWorkerBodyMaker({ body: 'framed', compression: 'gzip', level: 6 });
  noThreads();
  const records = [Buffer.from('{"a":1}'), Buffer.from('{"b":2}')];
  let error: unknown;
  try {
    await maker.make({ records, framing: null, sha256: false, crc32: false });
  } catch (e) {
    error = e;
  }
  await maker.close();
  expect(error).toBeInstanceOf(BodyMakerError);
  expect((error as Error).message).toMatch(/ERR_WORKER_INIT_FAILED|EAGAIN/);
  expect((error as BodyMakerError).contents?.records?.map(String)).toEqual(['{"a":1}', '{"b":2}']);
});

test('an exporter whose worker cannot start stores the batch as its OTLP records', async () => {
  const s3 = new ScriptedS3();
  const exporter = scriptedExporter(
    s3,
    { format: 'parquet', compression: 'zstd', flushTimeoutMillis: 5_000 },
    TRACES,
  );
  try {
    noThreads();
    await exportTagged(TRACES, exporter, 10, 1);
    await exporter.forceFlush();
    const stats = exporter.stats();
    expect(stats.pointsDroppedByReason).toEqual({});
    expect(stats.batchesUploaded).toBe(1);
    expect([...s3.stored.keys()].map((k) => k.slice(k.lastIndexOf('.')))).toEqual(['.json']);
  } finally {
    await exporter.shutdown();
  }
  expect(
    logged.some((l) => l.level === 'error' && /uploading batch 1 as its records/.test(l.text)),
  ).toBe(true);
});
