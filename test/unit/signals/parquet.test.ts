import { gunzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { createPageCompressor } from '../../../src/compression/compressors.js';
import {
  decodeObject,
  decodeStoredObjectAsync,
  ObjectDecodeError,
} from '../../../src/reader/decode-object.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import { resourceMetricsToJsonBytes } from '../../../src/signals/metrics/otlp-json.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { parquetToRequest } from '../../../src/signals/metrics/parquet/read.js';
import { dataPointRows, type PointRow } from '../../../src/signals/metrics/rows.js';
import { collectingProvider, recordEveryInstrument } from '../../support/service.js';
import { zstdCompress, zstdDecompress } from '../../support/zstd.js';

/** OTLP/JSON records (one ResourceMetrics each) as a Parquet file, through the column builders. */
function parquetBody(
  records: Buffer[],
  options: {
    compression: 'zstd' | 'gzip' | 'none';
    compressPage: ((page: Uint8Array) => Uint8Array | Promise<Uint8Array>) | undefined;
  },
): Promise<Uint8Array> {
  const builders = new MetricColumnBuilders();
  for (const record of records) {
    builders.appendRequest({ resourceMetrics: [JSON.parse(record.toString('utf8'))] });
  }
  return encodeParquet(builders.seal(), {
    compression: options.compression,
    ...(options.compressPage === undefined ? {} : { compressPage: options.compressPage }),
  });
}

const decompressors = {
  decompress: (compression: 'zstd' | 'gzip', input: Uint8Array) =>
    new Uint8Array(compression === 'zstd' ? zstdDecompress(input) : gunzipSync(input)),
  maxDecompressedBytes: 64 * 1024 * 1024,
};

/** What Parquet keeps of a point: times in whole microseconds, attribute values as text. */
function documentedLosses(row: PointRow): PointRow {
  // 2026-12-01T04:52:18.004123456Z → …18.004123000Z
  const toMicros = (iso: string) => (iso === '' ? '' : `${iso.slice(0, -4)}000Z`);
  const asText = (values: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
  return {
    ...row,
    start: toMicros(row.start),
    time: toMicros(row.time),
    resource: asText(row.resource) as PointRow['resource'],
    attributes: asText(row.attributes) as PointRow['attributes'],
  };
}

async function everyInstrumentRecords(): Promise<Buffer[]> {
  const { provider, collect } = collectingProvider('parquet-test');
  recordEveryInstrument(provider);
  const first = await collect();
  recordEveryInstrument(provider);
  const second = await collect();
  await provider.shutdown();
  return [resourceMetricsToJsonBytes(first), resourceMetricsToJsonBytes(second)];
}

describe('Parquet body', () => {
  for (const [compression, compressPage] of [
    ['zstd', (b: Uint8Array) => new Uint8Array(zstdCompress(b))],
    ['gzip', createPageCompressor({ compression: 'gzip', level: 6 }).compressPage],
    ['none', undefined],
  ] as const) {
    test(`${compression}: every instrument type reads back as recorded, up to the documented losses`, async () => {
      const records = await everyInstrumentRecords();
      const body = await parquetBody(records, { compression, compressPage });
      expect(Buffer.from(body.subarray(0, 4)).toString()).toBe('PAR1');
      const { request, rows } = await parquetToRequest(body, decompressors);
      // The same records as one OTLP/JSON object, read back by the JSON path.
      const json = metricsExport.records['otlp-json'].assemble(
        records,
        records.reduce((n, r) => n + r.length, 0),
      );
      const expected = dataPointRows(decodeObject('x.json', json));
      expect(expected.length).toBeGreaterThan(10);
      expect(rows).toBe(expected.length);
      const got = dataPointRows(request);
      const key = (r: PointRow) => JSON.stringify([r.metric, r.time, r.attributes]);
      expect(got.map(documentedLosses).sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
        expected.map(documentedLosses).sort((a, b) => key(a).localeCompare(key(b))),
      );
    });
  }

  test('the synchronous decoder refuses a Parquet object and names the asynchronous one', async () => {
    const body = Buffer.from(
      await parquetBody(await everyInstrumentRecords(), {
        compression: 'none',
        compressPage: undefined,
      }),
    );
    expect(() => decodeObject('x.parquet', body)).toThrow(ObjectDecodeError);
    expect(() => decodeObject('x.parquet', body)).toThrow(/use decodeStoredObjectAsync\(\)/);
    expect((await decodeStoredObjectAsync('x.parquet', body)).encoding.format).toBe('parquet');
  });

  test('integer values beyond 2^53 keep their exact value (ValueAsInt beside Value)', async () => {
    const request = {
      resourceMetrics: [
        {
          resource: { attributes: [] },
          scopeMetrics: [
            {
              scope: { name: 's' },
              metrics: [
                {
                  name: 'big',
                  sum: {
                    aggregationTemporality: 2,
                    isMonotonic: true,
                    dataPoints: [
                      { asInt: '9007199254740993', timeUnixNano: '1000', startTimeUnixNano: '0' },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    const body = await parquetBody(
      request.resourceMetrics.map((rm) => Buffer.from(JSON.stringify(rm))),
      { compression: 'none', compressPage: undefined },
    );
    const back = await parquetToRequest(body, decompressors);
    expect(JSON.stringify(back.request)).toContain('"asInt":"9007199254740993"');
  });
});
