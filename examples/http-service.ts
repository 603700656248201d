/**
 * A small node:http service whose metrics go to S3, with a graceful shutdown on SIGTERM/SIGINT:
 * stop accepting requests, flush the metrics, exit 0 (or 1 if the flush missed its deadline).
 *
 *   S3_ENDPOINT=http://127.0.0.1:9000 S3_ACCESS_KEY_ID=minioadmin S3_SECRET_ACCESS_KEY=minioadmin \
 *   S3_BUCKET=metrics PORT=8080 npx tsx examples/http-service.ts
 *
 * Without S3_ENDPOINT it writes to AWS S3 with the default credential chain.
 */
import { createServer } from 'node:http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
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
  // Half of the hooks' deadline: forceFlush and shutdown may each take this long.
  flushTimeoutMillis: 5_000,
});

const meterProvider = new MeterProvider({
  resource: resourceFromAttributes({ 'service.name': 'http-service' }),
  readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 10_000 })],
});
exporter.recordSelfMetrics(meterProvider);

const meter = meterProvider.getMeter('http-service');
const requests = meter.createCounter('http.server.request.count', { unit: '{request}' });
const duration = meter.createHistogram('http.server.request.duration', { unit: 's' });
const active = meter.createUpDownCounter('http.server.active_requests', { unit: '{request}' });

const server = createServer((req, res) => {
  const started = performance.now();
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
  // Stop taking requests first, so the last ones are counted in the final flush.
  beforeShutdown: () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    }),
});

server.listen(Number(env.PORT ?? 8080), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : undefined;
  // One JSON line on stdout, so scripts (and the test) can find the port.
  console.log(JSON.stringify({ listening: port }));
});
