/**
 * A body worker whose body maker cannot be set up (a module or an addon that does not load in
 * the worker) answers each job with its batch given back, to be stored as its OTLP records: the
 * failure must not kill the worker as an unhandled rejection, which would take the batch with
 * it. Set up here with a Parquet body of no signal, which parquetMaker() refuses.
 */
import { expect, test } from 'vitest';
import { BodyMakerError } from '../../../src/body/body-types.js';
import { createWorkerBodyMaker } from '../../../src/body/worker-body-maker.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';

function oneGauge() {
  const builders = new MetricColumnBuilders();
  builders.appendRequest({
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [{ name: 'g', gauge: { dataPoints: [{ timeUnixNano: '1000', asInt: '1' }] } }],
          },
        ],
      },
    ],
  });
  return builders.seal();
}

test('a body maker that fails to set up in the worker gives every batch back', async () => {
  const maker = createWorkerBodyMaker({
    body: 'parquet',
    signal: undefined as never,
    compression: 'zstd',
    level: 3,
    engine: 'node:zlib',
  });
  const errors: unknown[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      try {
        await maker.make({ columns: oneGauge(), framing: null, sha256: false, crc32: false });
      } catch (error) {
        errors.push(error);
      }
    }
  } finally {
    await maker.close();
  }
  expect(errors).toHaveLength(2);
  for (const error of errors) {
    expect(error).toBeInstanceOf(BodyMakerError);
    expect((error as Error).message).toBe(
      'Parquet body failed: Error: a Parquet body needs its signal',
    );
    expect((error as BodyMakerError).contents?.columns).toMatchObject({ rows: 1 });
  }
});
