/**
 * The body worker frees a job's columns once the job's file is made, not at its next full
 * collection (issue 36): the columns arrive by transfer, the encode's allocations promote them
 * out of the young generation, and the worker's heap hardly grows, so a full collection can be
 * many batches away. Read in the worker's own heap statistics (external memory: the
 * ArrayBuffers it holds), Worker.getHeapStatistics(), Node.js ≥ 22.16.
 */
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, test } from 'vitest';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import type { SealedColumns } from '../../../src/signals/metrics/parquet/sealed.js';
import { syntheticMetrics } from '../../support/service.js';

const canRead =
  typeof (Worker.prototype as { getHeapStatistics?: unknown }).getHeapStatistics === 'function' &&
  typeof (ArrayBuffer.prototype as { transfer?: unknown }).transfer === 'function';

const workers: Worker[] = [];
afterAll(async () => {
  for (const w of workers) await w.terminate();
});

/** The body worker as createWorkerBodyMaker() starts it, for Parquet of metrics. */
function bodyWorker(): Worker {
  const w = new Worker(new URL('../../../src/body/body-worker.js', import.meta.url), {
    workerData: {
      body: 'parquet',
      signal: 'metrics',
      compression: 'zstd',
      level: 3,
      zstdEngine: 'node:zlib',
    },
    resourceLimits: { maxYoungGenerationSizeMb: 2 },
  });
  workers.push(w);
  return w;
}

let nextId = 1;
/** Posts one job as the exporter does (the columns transferred); resolves with the body's size. */
function job(w: Worker, columns: SealedColumns): Promise<number> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const onReply = (reply: { id: number; body?: ArrayBuffer; error?: string }) => {
      if (reply.id !== id) return;
      w.off('message', onReply);
      if (reply.body === undefined) reject(new Error(reply.error));
      else resolve(reply.body.byteLength);
    };
    w.on('message', onReply);
    w.postMessage({ id, columns, sha256: false, crc32: false }, columns.transfer);
  });
}

/**
 * A batch of `exports` collections of the same 1,000 series: megabytes of columns, a small file
 * (few distinct values), so what the encode itself leaves behind is small beside the columns.
 */
function sealed(exports: number, tag: number): { columns: SealedColumns; bytes: number } {
  const builders = new MetricColumnBuilders();
  const rm = syntheticMetrics(1_000, tag);
  for (let i = 0; i < exports; i++) builders.appendResourceMetrics(rm);
  const columns = builders.seal();
  return { columns, bytes: columns.transfer.reduce((n, b) => n + b.byteLength, 0) };
}

type HeapStatistics = { external_memory: number };
const external = async (w: Worker) =>
  (await (w as unknown as { getHeapStatistics(): Promise<HeapStatistics> }).getHeapStatistics())
    .external_memory;

describe.runIf(canRead)('body worker memory', () => {
  test("a job's columns are freed when its file is made, not at a later collection", async () => {
    const w = bodyWorker();
    // A first small job: the encoder's modules and buffers, what every later job starts from.
    await job(w, sealed(1, 0).columns);
    for (let batch = 1; batch <= 3; batch++) {
      const before = await external(w);
      const { columns, bytes } = sealed(60, batch);
      expect(await job(w, columns)).toBeGreaterThan(0);
      // The worker frees them after it posts the reply: let it finish that turn.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const after = await external(w);
      expect(bytes).toBeGreaterThan(2_000_000);
      // Not freed, they would be all there, with the encode's own garbage on top.
      expect(after - before).toBeLessThan(bytes);
    }
  });
});
