import { UUID } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { defaultKeyTemplate } from '../../../src/layout/formats.js';
import { KeyTemplate } from '../../../src/layout/key-template.js';
import { dataPointRows, readMetrics, type UnreadableObject } from '../../../src/reader.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { collect, keyAt, writeAtKey } from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';

/**
 * Another writer's object may hold an aggregation temporality this package never writes (a
 * later OTLP's 3, a bug's 2.5, a name OTLP does not have). A point's row shows it as stored, as
 * text, never as '' (a gauge's none); expected values are what each test writes.
 */

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('otel-s3-stored-temporality-');
});
afterAll(() => removeDir(dir));

/** One counter point's request, in OTLP/JSON's shape, with `aggregationTemporality` as given. */
const request = (aggregationTemporality: number | string) => ({
  resourceMetrics: [
    {
      resource: { attributes: [] },
      scopeMetrics: [
        {
          scope: { name: 's' },
          metrics: [
            {
              name: 'requests',
              sum: {
                aggregationTemporality,
                isMonotonic: true,
                dataPoints: [
                  {
                    startTimeUnixNano: '1772600760000000000',
                    timeUnixNano: '1772600767000000000',
                    asInt: '3',
                  },
                ],
              },
            },
          ],
        },
      ],
    },
  ],
});

let reads = 0;
async function readOne(key: string, bytes: Uint8Array) {
  const root = `${dir}/${++reads}`;
  await writeAtKey(root, key, bytes);
  const problems: UnreadableObject[] = [];
  const objects = await collect(
    readMetrics({ dir: root, prefix: 'p', onError: (p) => problems.push(p) }),
  );
  expect(problems).toEqual([]);
  const rows = objects.flatMap((o) => dataPointRows(o.request));
  expect(rows.map((r) => r.value)).toEqual([3]);
  return rows[0];
}

describe('an aggregation temporality outside the enum is shown as stored', () => {
  test.each([
    [1, 'delta'],
    ['AGGREGATION_TEMPORALITY_CUMULATIVE', 'cumulative'],
    [3, '3'],
    [2.5, '2.5'],
    ['AGGREGATION_TEMPORALITY_LATER', 'AGGREGATION_TEMPORALITY_LATER'],
  ])('OTLP/JSON %j', async (stored, shown) => {
    const bytes = Buffer.from(JSON.stringify(request(stored)));
    const row = await readOne(keyAt('p', READER_T0, '.json'), bytes);
    expect(row?.temporality).toBe(shown);
  });

  test.each([
    [2, 'cumulative'],
    [3, '3'],
    [-1, '-1'],
  ])('Parquet %j', async (stored, shown) => {
    const builders = new MetricColumnBuilders();
    builders.appendRequest(request(stored));
    const bytes = new Uint8Array(await encodeParquet(builders.seal(), { compression: 'none' }));
    const id = UUID.fromFieldsV7(READER_T0.getTime(), 1, 0, ++reads).toString();
    const key = new KeyTemplate(defaultKeyTemplate('parquet', 'metrics'), {
      prefix: 'p',
      filePrefix: '',
      timeZone: 'UTC',
    }).render({ time: READER_T0, attributes: {}, extension: '.parquet', id });
    const row = await readOne(key, bytes);
    expect(row?.temporality).toBe(shown);
  });
});
