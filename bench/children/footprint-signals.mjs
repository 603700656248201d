// @ts-check
/**
 * Spans and log records for bench/children/footprint-service.mjs (SIGNALS=all): a TracerProvider
 * and a LoggerProvider beside the service's MeterProvider, with the SDK's BatchSpanProcessor and
 * BatchLogRecordProcessor (defaults), and the exporters of MODE:
 *   none: exporters that discard (the baseline: the SDKs are loaded and run, nothing exported);
 *   otlp-http: the OpenTelemetry OTLP/HTTP trace and logs exporters (the service makes the
 *     metrics one);
 *   ours (otlp-json | otlp-proto | parquet): one S3Exporters for the three signals, its metric
 *     exporter handed back for the service's reader.
 * Light traffic: REQUESTS_PER_SECOND HTTP server spans (semantic-convention attributes, an event)
 * and as many request log records, emitted with each recording of the metrics.
 */
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

const REQUESTS_PER_SECOND = Number(process.env.REQUESTS_PER_SECOND ?? 100);
const ROUTES = [
  '/api/v1/cart/{cartId}',
  '/api/v1/checkout',
  '/api/v1/orders/{orderId}',
  '/healthz',
];

/** An exporter that discards, for spans or log records. */
const discard = () => ({
  export: (/** @type {unknown} */ _items, /** @type {(r: { code: 0 }) => void} */ done) =>
    done({ code: 0 }),
  forceFlush: async () => {},
  shutdown: async () => {},
});

/**
 * @param {string} mode
 * @param {string} sink
 * @param {string} pkg the built package's entry
 */
export async function startSignals(mode, sink, pkg) {
  /** @type {any} */
  let metricExporter;
  /** @type {any} */
  let spanExporter;
  /** @type {any} */
  let logExporter;
  if (mode === 'none') {
    spanExporter = discard();
    logExporter = discard();
  } else if (mode === 'otlp-http') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    const { OTLPLogExporter } = await import('@opentelemetry/exporter-logs-otlp-http');
    spanExporter = new OTLPTraceExporter({ url: `${sink}/v1/traces` });
    logExporter = new OTLPLogExporter({ url: `${sink}/v1/logs` });
  } else {
    const { S3Exporters } = await import(pkg);
    const group = new S3Exporters({
      bucket: 'footprint',
      endpoint: sink,
      region: 'us-east-1',
      credentials: { accessKeyId: 'FOOTPRINTACCESSKEY00', secretAccessKey: 'footprint-secret' },
    });
    metricExporter = group.metricExporter({ format: mode });
    // Parquet is the metrics' only: spans and log records keep their default format then.
    const own = mode === 'parquet' ? {} : { format: mode };
    spanExporter = group.spanExporter(own);
    logExporter = group.logRecordExporter(own);
  }
  const tracerProvider = new TracerProvider({
    spanProcessors: [new BatchSpanProcessor({ exporter: spanExporter })],
  });
  const loggerProvider = new LoggerProvider({
    processors: [new BatchLogRecordProcessor({ exporter: logExporter })],
  });
  const tracer = tracerProvider.getTracer('@opentelemetry/instrumentation-http', '0.208.0');
  const logger = loggerProvider.getLogger('checkout.http', '2.14.3');
  let request = 0;
  return {
    metricExporter,
    /** One second's requests: a span and a log record each. */
    record() {
      for (let i = 0; i < REQUESTS_PER_SECOND; i++) {
        request++;
        const route = ROUTES[request % ROUTES.length] ?? '/';
        const status = request % 50 === 0 ? 500 : 200;
        const span = tracer.startSpan(`GET ${route}`, {
          kind: 1, // SERVER
          attributes: {
            'http.request.method': 'GET',
            'url.scheme': 'https',
            'url.path': route.replace(/\{[a-zA-Z]+\}/, String(request)),
            'http.route': route,
            'server.address': 'shop.example.com',
            'server.port': 443,
            'client.address': `10.0.${request % 256}.${(request * 7) % 256}`,
            'user_agent.original': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0',
          },
        });
        span.addEvent('request.handled', { 'handler.name': 'ordersController', 'db.calls': 3 });
        span.setAttribute('http.response.status_code', status);
        logger.emit({
          severityNumber: status >= 500 ? 17 : 9,
          severityText: status >= 500 ? 'ERROR' : 'INFO',
          body: `GET ${route} ${status} in ${request % 250} ms`,
          attributes: {
            'http.request.method': 'GET',
            'http.route': route,
            'http.response.status_code': status,
            'duration.ms': request % 250,
            'user.id': `u-${request % 100_000}`,
          },
        });
        span.end();
      }
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), loggerProvider.shutdown()]);
    },
    /** Ours: what the span and log record exporters stored and dropped. */
    stats() {
      /** @param {any} e */
      const of = (e) => {
        const s = typeof e.stats === 'function' ? e.stats() : undefined;
        return s === undefined
          ? undefined
          : { batches: s.batchesUploaded, items: s.pointsUploaded, dropped: s.pointsDropped };
      };
      return { spans: of(spanExporter), logs: of(logExporter) };
    },
  };
}
