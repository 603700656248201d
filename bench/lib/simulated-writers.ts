/**
 * Simulated exporter instances writing Parquet into a local directory laid out like the bucket:
 * each instance's 10-minute batch (ten exports of its series, once a minute) becomes one file,
 * made by the exporter's column builders and Parquet writer (src/parquet/) and named as the
 * exporter names it (a UUIDv7 of the seal time, in the hour partition). Much faster than
 * running 100 exporters, and the files are the same.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as zlib from 'node:zlib';
import { UUID } from 'uuidv7';
import { defaultKeyTemplate } from '../../src/layout/formats.js';
import { KeyTemplate } from '../../src/layout/key-template.js';
import { MetricColumnBuilders } from '../../src/signals/metrics/parquet/column-builders.js';
import { encodeParquet } from '../../src/signals/metrics/parquet/encode.js';
import { prng } from '../../test/support/prng.js';

const SERVICES = ['checkout', 'payments', 'catalog', 'identity', 'shipping'];
const ROUTES = [
  '/',
  '/api/v1/cart',
  '/api/v1/checkout',
  '/api/v1/orders/{orderId}',
  '/api/v1/products',
  '/api/v1/products/{productId}',
  '/api/v1/session',
  '/graphql',
];
const METHODS = ['GET', 'POST'];
const STATUSES = ['200', '404', '500'];
const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** The metric the bench's query sums: a cumulative counter. */
export const COUNTER = 'http.server.requests';

export interface Instance {
  service: string;
  pod: string;
  /** The counter's value per series, growing export after export. */
  totals: number[];
  random: () => number;
}

export function instances(count: number, seed = 1): Instance[] {
  return Array.from({ length: count }, (_, i) => {
    const service = SERVICES[i % SERVICES.length] as string;
    return {
      service,
      pod: `${service}-7f9c6d5b8-${(i * 7919 + 12345).toString(36)}`,
      totals: [],
      random: prng(seed + i),
    };
  });
}

/**
 * One export of an instance at `millis`: `series` counter series, a fifth as many histogram
 * series and two gauges, as an OTLP/JSON ResourceMetrics.
 */
export function exportOf(
  instance: Instance,
  millis: number,
  series: number,
): { record: Buffer; points: number; counterSum: number } {
  const nanos = `${BigInt(millis) * 1_000_000n}`;
  const start = `${BigInt(millis - (millis % 86_400_000)) * 1_000_000n}`;
  const r = instance.random;
  const attrs = (i: number) => [
    { key: 'http.route', value: { stringValue: ROUTES[i % ROUTES.length] } },
    {
      key: 'http.request.method',
      value: { stringValue: METHODS[Math.floor(i / ROUTES.length) % METHODS.length] },
    },
    {
      key: 'http.response.status_code',
      value: {
        intValue: STATUSES[Math.floor(i / (ROUTES.length * METHODS.length)) % STATUSES.length],
      },
    },
  ];
  let counterSum = 0;
  const counter = Array.from({ length: series }, (_, i) => {
    instance.totals[i] = (instance.totals[i] ?? 0) + Math.floor(r() * 50);
    counterSum += instance.totals[i] as number;
    return {
      attributes: attrs(i),
      startTimeUnixNano: start,
      timeUnixNano: nanos,
      asInt: String(instance.totals[i]),
    };
  });
  const histograms = Array.from({ length: Math.max(1, Math.floor(series / 5)) }, (_, i) => {
    const counts = BOUNDS.map(() => Math.floor(r() * 20)).concat([Math.floor(r() * 3)]);
    const count = counts.reduce((a, b) => a + b, 0);
    return {
      attributes: attrs(i),
      startTimeUnixNano: start,
      timeUnixNano: nanos,
      count: String(count),
      sum: count * 0.07,
      bucketCounts: counts.map(String),
      explicitBounds: BOUNDS,
    };
  });
  const gauges = ['heap', 'rss'].map((kind) => ({
    attributes: [{ key: 'kind', value: { stringValue: kind } }],
    timeUnixNano: nanos,
    asDouble: 1e8 + r() * 1e7,
  }));
  const rm = {
    resource: {
      attributes: [
        { key: 'service.name', value: { stringValue: instance.service } },
        { key: 'service.instance.id', value: { stringValue: instance.pod } },
        { key: 'k8s.pod.name', value: { stringValue: instance.pod } },
        { key: 'k8s.namespace.name', value: { stringValue: instance.service } },
        { key: 'host.name', value: { stringValue: instance.pod } },
      ],
    },
    scopeMetrics: [
      {
        scope: { name: '@opentelemetry/instrumentation-http', version: '0.201.0' },
        metrics: [
          {
            name: COUNTER,
            unit: '1',
            sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: counter },
          },
          {
            name: 'http.server.request.duration',
            unit: 's',
            histogram: { aggregationTemporality: 2, dataPoints: histograms },
          },
          { name: 'process.memory.usage', unit: 'By', gauge: { dataPoints: gauges } },
        ],
      },
    ],
  };
  return {
    record: Buffer.from(JSON.stringify(rm)),
    points: counter.length + histograms.length + gauges.length,
    counterSum,
  };
}

const template = (prefix: string) =>
  new KeyTemplate(defaultKeyTemplate('parquet', 'metrics'), {
    prefix,
    filePrefix: '',
    timeZone: 'UTC',
  });

/** Writes one instance's batch of `exports` one-minute exports from `startMillis` as a file. */
export async function writeBatch(
  dir: string,
  prefix: string,
  instance: Instance,
  startMillis: number,
  exports: number,
  series: number,
): Promise<{ bytes: number; points: number; counterSums: number[] }> {
  const builders = new MetricColumnBuilders();
  let points = 0;
  const counterSums: number[] = [];
  for (let m = 0; m < exports; m++) {
    const e = exportOf(instance, startMillis + m * 60_000 + 7_000, series);
    builders.appendRequest({ resourceMetrics: [JSON.parse(e.record.toString())] });
    points += e.points;
    counterSums.push(e.counterSum);
  }
  const body = await encodeParquet(builders.seal(), {
    compression: 'zstd',
    compressPage: (page) =>
      zlib.zstdCompressSync(page, { params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 } }),
  });
  const sealedAt = startMillis + exports * 60_000;
  const id = UUID.fromFieldsV7(
    sealedAt,
    Math.floor(instance.random() * 4096),
    Math.floor(instance.random() * 2 ** 30),
    Math.floor(instance.random() * 2 ** 32),
  ).toString();
  const key = template(prefix).render({
    time: new Date(startMillis),
    attributes: {},
    extension: '.parquet',
    id,
  });
  const path = join(dir, ...key.split('/'));
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, body);
  return { bytes: body.length, points, counterSums };
}
