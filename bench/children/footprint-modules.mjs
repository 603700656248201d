// @ts-check
/**
 * Child process of bench/footprint.ts: what each part of this package costs a process, step by
 * step, each on top of the ones before: RSS, V8 heap and external memory after a full GC, and
 * the process's threads. Plain Node.js with --expose-gc, loading the built package (dist/).
 * Prints one JSON line.
 */
import { readdirSync } from 'node:fs';

const DIST = process.env.DIST ?? '../../dist/';
const SINK = process.env.SINK ?? 'http://127.0.0.1:1';
const gc = /** @type {() => void} */ (/** @type {{ gc?: () => void }} */ (globalThis).gc);
if (gc === undefined) throw new Error('run with --expose-gc');

async function measure() {
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  const m = process.memoryUsage();
  const threads = process.platform === 'linux' ? readdirSync('/proc/self/task').length : 0;
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, threads };
}

const exporterOptions = {
  bucket: 'footprint',
  endpoint: SINK,
  region: 'us-east-1',
  credentials: { accessKeyId: 'FOOTPRINTACCESSKEY00', secretAccessKey: 'footprint-secret' },
};

/**
 * One export of a few hundred points, then a flush: the body made and uploaded to the sink.
 * @param {import('@opentelemetry/sdk-metrics').PushMetricExporter} exporter
 * @param {typeof import('@opentelemetry/sdk-metrics')} sdk
 */
async function exportOnce(exporter, sdk) {
  const { MeterProvider, PeriodicExportingMetricReader } = sdk;
  const provider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 })],
  });
  const counter = provider.getMeter('footprint').createCounter('requests');
  for (let i = 0; i < 300; i++) counter.add(1, { route: `/r/${i}` });
  await provider.forceFlush();
  return provider;
}

/** @type {{ step: string, rss: number, heapUsed: number, external: number, threads: number }[]} */
const steps = [];
/** @param {string} name @param {() => Promise<unknown>} f */
const step = async (name, f) => {
  await f();
  steps.push({ step: name, ...(await measure()) });
};
/** @type {any} */
let sdk;
/** @type {any} */
let ours;
/** @type {any[]} */
const keep = [];

await step('node', async () => {});
await step('@opentelemetry/sdk-metrics (every service has it)', async () => {
  sdk = await import('@opentelemetry/sdk-metrics');
});
await step(
  'the S3 transport: SigV4, HTTP handler, credential chain (`@smithy`, `@aws-sdk`)',
  async () => {
    keep.push(
      await import('@smithy/signature-v4'),
      await import('@smithy/node-http-handler'),
      await import('@smithy/core'),
      await import('@aws-sdk/credential-provider-node'),
      await import('@aws-sdk/xml-builder'),
    );
  },
);
await step('our encoders (OTLP/JSON, protobuf)', async () => {
  keep.push(
    await import(`${DIST}signals/metrics/otlp-json.js`),
    await import(`${DIST}signals/metrics/otlp-proto.js`),
  );
});
await step('the rest of `otel-s3-exporter` (pipeline, upload, config, spool)', async () => {
  ours = await import(`${DIST}index.js`);
});
await step('an exporter constructed (default: OTLP/JSON + zstd)', async () => {
  keep.push(new ours.S3MetricExporter(exporterOptions));
});
await step('... which made and uploaded one batch', async () => {
  keep.push(await exportOnce(keep[keep.length - 1], sdk));
});
await step(
  '@aws-sdk/client-s3 (only with `s3Client` or an endpoint the SDK must resolve)',
  async () => {
    keep.push(await import('@aws-sdk/client-s3'));
  },
);
await step('the reader (`otel-s3-exporter/reader`)', async () => {
  keep.push(await import(`${DIST}reader.js`));
});
await step('the Parquet modules on this thread (builders, writer, reader: hyparquet)', async () => {
  keep.push(
    await import(`${DIST}signals/metrics/parquet/column-builders.js`),
    await import(`${DIST}signals/metrics/parquet/encode.js`),
    await import(`${DIST}signals/metrics/parquet/read.js`),
  );
});
await step('a Parquet exporter that made one file (its worker started)', async () => {
  const exporter = new ours.S3MetricExporter({ ...exporterOptions, format: 'parquet' });
  keep.push(exporter, await exportOnce(exporter, sdk));
});

console.log(JSON.stringify({ modules: { node: process.version, steps } }));
process.exit(0);
