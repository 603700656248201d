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
/** Samples a histogram point is in Prometheus' TSDB: a bucket each (and +Inf), sum and count. */
export const SAMPLES_PER_HISTOGRAM = BOUNDS.length + 1 + 2;
/** The metric the bench's query sums: a cumulative counter. */
export const COUNTER = 'http.server.requests';

/**
 * How the values move: 'random' draws them afresh (no encoding can shrink them: the suite's
 * worst case); 'realistic' moves them as a service's do, as bench/lib/realistic-metrics.ts
 * records them: cumulative counters that grow by small steps, histograms whose buckets fill
 * slowly (cumulative, most requests fast), gauges that drift.
 */
export type Values = 'random' | 'realistic';

export interface Instance {
  service: string;
  pod: string;
  values: Values;
  /** The counter's value per series, growing export after export. */
  totals: number[];
  /**
   * Realistic values: each histogram series' cumulative bucket counts; its sum and count at
   * 2i and 2i + 1 of `sums`; the gauges.
   */
  buckets: number[][];
  sums: number[];
  gauges: number[];
  random: () => number;
}

export function instances(count: number, seed = 1, values: Values = 'random'): Instance[] {
  return Array.from({ length: count }, (_, i) => {
    const service = SERVICES[i % SERVICES.length] as string;
    return {
      service,
      pod: `${service}-7f9c6d5b8-${(i * 7919 + 12345).toString(36)}`,
      values,
      totals: [],
      buckets: [],
      sums: [],
      gauges: [],
      random: prng(seed + i),
    };
  });
}

/** Where a request's duration falls among BOUNDS (and the overflow bucket): most are fast. */
const BUCKET_WEIGHTS = [8, 14, 20, 18, 14, 10, 7, 4, 2, 1, 1, 1];

/** A realistic minute of one histogram series: a few requests added to its cumulative buckets. */
function realisticBuckets(counts: number[], random: () => number): number[] {
  const requests = Math.floor(random() * 6);
  const total = BUCKET_WEIGHTS.reduce((a, b) => a + b, 0);
  for (let n = 0; n < requests; n++) {
    let pick = random() * total;
    let b = 0;
    while (b < BUCKET_WEIGHTS.length - 1 && pick >= (BUCKET_WEIGHTS[b] as number)) {
      pick -= BUCKET_WEIGHTS[b] as number;
      b++;
    }
    counts[b] = (counts[b] ?? 0) + 1;
  }
  return counts;
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
  const realistic = instance.values === 'realistic';
  let counterSum = 0;
  const counter = Array.from({ length: series }, (_, i) => {
    // Realistic: a route's requests a minute, few for most series (small steps).
    const step = realistic ? Math.floor(r() ** 3 * 12) : Math.floor(r() * 50);
    instance.totals[i] = (instance.totals[i] ?? 0) + step;
    counterSum += instance.totals[i] as number;
    return {
      attributes: attrs(i),
      startTimeUnixNano: start,
      timeUnixNano: nanos,
      asInt: String(instance.totals[i]),
    };
  });
  const histograms = Array.from({ length: Math.max(1, Math.floor(series / 5)) }, (_, i) => {
    if (realistic && instance.buckets[i] === undefined)
      instance.buckets[i] = BOUNDS.map(() => 0).concat([0]);
    const counts = realistic
      ? [...realisticBuckets(instance.buckets[i] as number[], r)]
      : BOUNDS.map(() => Math.floor(r() * 20)).concat([Math.floor(r() * 3)]);
    const count = counts.reduce((a, b) => a + b, 0);
    let sum = count * 0.07;
    if (realistic) {
      // The new requests' durations added to the series' cumulative sum.
      const added = count - (instance.sums[2 * i + 1] ?? 0);
      instance.sums[2 * i] = (instance.sums[2 * i] ?? 0) + added * (0.02 + r() * 0.1);
      instance.sums[2 * i + 1] = count;
      sum = instance.sums[2 * i] as number;
    }
    return {
      attributes: attrs(i),
      startTimeUnixNano: start,
      timeUnixNano: nanos,
      count: String(count),
      sum,
      bucketCounts: counts.map(String),
      explicitBounds: BOUNDS,
    };
  });
  const gauges = ['heap', 'rss'].map((kind, g) => {
    // Realistic: memory in bytes, drifting by up to 64 KiB a minute from where it was.
    if (realistic) {
      instance.gauges[g] = (instance.gauges[g] ?? 1e8) + Math.round((r() - 0.5) * 131_072);
    }
    const value = realistic ? (instance.gauges[g] as number) : 1e8 + r() * 1e7;
    return {
      attributes: [{ key: 'kind', value: { stringValue: kind } }],
      timeUnixNano: nanos,
      asDouble: value,
    };
  });
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

const zstd3 = (bytes: Uint8Array) =>
  zlib.zstdCompressSync(bytes, { params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 } });

/**
 * Writes one instance's batch of `exports` one-minute exports from `startMillis` as a file; with
 * `otlp`, also measures the exports as OTLP/JSON + zstd (`otlpBytes`).
 */
export async function writeBatch(
  dir: string,
  prefix: string,
  instance: Instance,
  startMillis: number,
  exports: number,
  series: number,
  otlp = false,
): Promise<{ bytes: number; points: number; counterSums: number[]; otlpBytes: number }> {
  const builders = new MetricColumnBuilders();
  let points = 0;
  let otlpBytes = 0;
  const counterSums: number[] = [];
  for (let m = 0; m < exports; m++) {
    const e = exportOf(instance, startMillis + m * 60_000 + 7_000, series);
    builders.appendRequest({ resourceMetrics: [JSON.parse(e.record.toString())] });
    points += e.points;
    counterSums.push(e.counterSum);
    // With `otlp`: the export's bytes as the default format stores it (one object a minute).
    if (otlp) otlpBytes += zstd3(e.record).length;
  }
  const body = await encodeParquet(builders.seal(), {
    compression: 'zstd',
    compressPage: zstd3,
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
  return { bytes: body.length, points, counterSums, otlpBytes };
}
