/**
 * A small node:http service whose metrics go to S3, with a graceful shutdown on SIGTERM/SIGINT:
 * stop accepting requests, flush the metrics, exit 0 (or 1 if the shutdown missed its 12 s
 * deadline). S3 failing does not make it 1: the exporter gives up at its own flushTimeoutMillis
 * and names what it could not store on stderr (OTEL_S3_FLUSH_TIMEOUT, OTEL_S3_DATA_DROPPED).
 *
 *   S3_ENDPOINT=http://127.0.0.1:9000 S3_ACCESS_KEY_ID=minioadmin S3_SECRET_ACCESS_KEY=minioadmin \
 *   S3_BUCKET=metrics PORT=8080 node --import tsx examples/http-service.ts
 *
 * (Not `npx tsx`: npx exits on SIGTERM without passing it on, and the service never hears it.)
 *
 * Without S3_ENDPOINT it writes to AWS S3 with the default credential chain.
 */
import { createServer } from 'node:http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
// In your own project: from 'otel-s3-exporter' (this repository's examples run on its source).
import { installShutdownHooks, S3MetricExporter } from '../src/index.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const env = process.env;
const accessKeyId = env.S3_ACCESS_KEY_ID ?? env.AWS_ACCESS_KEY_ID;
const secretAccessKey = env.S3_SECRET_ACCESS_KEY ?? env.AWS_SECRET_ACCESS_KEY;

const exporter = new S3MetricExporter({
  bucket: env.S3_BUCKET ?? 'metrics',
  prefix: env.S3_PREFIX ?? 'http-service',
  ...(env.S3_ENDPOINT ? { endpoint: env.S3_ENDPOINT } : {}),
  ...(env.S3_REGION ? { region: env.S3_REGION } : {}),
  ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey } } : {}),
  // (12 s deadline − 5 s) / 2: forceFlush and shutdown may each take this long (README).
  flushTimeoutMillis: 3_500,
});

const meterProvider = new MeterProvider({
  resource: resourceFromAttributes({ 'service.name': 'http-service' }),
  readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 10_000 })],
});
exporter.recordSelfMetrics(meterProvider);

const meter = meterProvider.getMeter('http-service');
const requests = meter.createCounter('http.server.request.count', { unit: '{request}' });
const duration = meter.createHistogram('http.server.request.duration', {
  unit: 's',
  // The boundaries the HTTP semantic conventions advise, in seconds: the SDK's default ones
  // (0 to 10000) are for milliseconds, and would put every request in the first bucket.
  advice: {
    explicitBucketBoundaries: [
      0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
    ],
  },
});
const active = meter.createUpDownCounter('http.server.active_requests', { unit: '{request}' });

/** Set once shutdown starts: each response then closes its connection (see beforeShutdown). */
let closing = false;

const server = createServer((req, res) => {
  const started = performance.now();
  if (closing) res.setHeader('connection', 'close');
  active.add(1);
  const route = req.url === '/' || req.url === '/slow' ? req.url : 'other';
  const finish = (status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    const attributes = {
      'http.request.method': req.method ?? 'GET',
      'http.route': route,
      'http.response.status_code': status,
    };
    requests.add(1, attributes);
    duration.record((performance.now() - started) / 1000, attributes);
    active.add(-1);
  };
  if (route === '/') finish(200, 'ok\n');
  else if (route === '/slow') setTimeout(() => finish(200, 'slow ok\n'), 50);
  else finish(404, 'not found\n');
});

installShutdownHooks(meterProvider, {
  timeoutMillis: 12_000,
  // Stop taking requests first, so the last ones are counted in the final flush. close() waits
  // for every connection to end, and a keep-alive client (a load balancer) never lets one go
  // idle: idle ones are closed now, busy ones after their next response, and any left after
  // 3 s at once.
  beforeShutdown: () =>
    new Promise<void>((resolve) => {
      closing = true;
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 3_000).unref();
    }),
});

server.listen(Number(env.PORT ?? 8080), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : undefined;
  // One JSON line on stdout, so scripts (and the test) can find the port.
  console.log(JSON.stringify({ listening: port }));
});
