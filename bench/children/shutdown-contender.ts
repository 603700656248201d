/**
 * Child process of bench/shutdown-blackhole.ts: one exporter (CONTENDER = ours | otlp-http |
 * locked) behind a PeriodicExportingMetricReader exports for a while into a black hole
 * (ENDPOINT), then meterProvider.shutdown() is called with no timeout, as NodeSDK does. Or all
 * three signals (CONTENDER = ours-3: one S3Exporters' metric, span and log record exporters;
 * otlp-http-3: the three OTLP/HTTP exporters), each behind its SDK's processor (the span and log
 * record ones exporting every 500 ms), then the three providers shut down side by side with no
 * timeout, as NodeSDK.shutdown() does. Prints JSON lines: each forceFlush()/shutdown() start and
 * end (naming the signal for the three), and {"shutdownMillis"} at the end.
 */
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import type { PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { type ExporterStats, S3Exporters, S3MetricExporter } from '../../src/index.js';
import { LockedUploadExporter } from '../lib/locked-exporter.js';
import { TimedExporter, TimedSignalExporter } from '../lib/timed-exporter.js';

const env = process.env;
const endpoint = env.ENDPOINT as string;
const credentials = {
  accessKeyId: env.S3_ACCESS_KEY_ID ?? 'BENCHACCESSKEY000000',
  secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? 'benchsecretkey00000000000000000000000000',
};
const bucket = 'bench-blackhole';
const flushTimeoutMillis = Number(env.FLUSH_TIMEOUT_MILLIS);
/** The span and log record processors export this often, so their exports are stuck too. */
const PROCESSOR_DELAY_MILLIS = 500;

/** Has stats(): ours. */
interface WithStats {
  stats(): ExporterStats;
}

/** The providers to shut down, and ours (to report what they held). */
interface Setup {
  providers: { name: string; provider: { shutdown(): Promise<void> } }[];
  meterProvider: MeterProvider;
  tracerProvider?: TracerProvider;
  loggerProvider?: LoggerProvider;
  ours: Record<string, WithStats>;
  exports: () => number;
}

function metricsOnly(): Setup {
  let inner: PushMetricExporter;
  switch (env.CONTENDER) {
    case 'ours':
      inner = new S3MetricExporter({
        bucket,
        prefix: 'blackhole',
        endpoint,
        credentials,
        flushTimeoutMillis,
        maxBatchAgeMillis: 100, // so uploads are already stuck in the black hole at shutdown
      });
      break;
    case 'otlp-http':
      inner = new OTLPMetricExporter({ url: `${endpoint}/v1/metrics` });
      break;
    case 'locked':
      inner = new LockedUploadExporter({ endpoint, bucket, credentials });
      break;
    default:
      throw new Error(`unknown CONTENDER ${env.CONTENDER}`);
  }
  const exporter = new TimedExporter(inner);
  const meterProvider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 500 })],
  });
  return {
    providers: [{ name: 'meter', provider: meterProvider }],
    meterProvider,
    ours: inner instanceof S3MetricExporter ? { metrics: inner } : {},
    exports: () => exporter.exports,
  };
}

function threeSignals(): Setup {
  let metrics: PushMetricExporter;
  let spans: ConstructorParameters<typeof BatchSpanProcessor>[0]['exporter'];
  let logs: ConstructorParameters<typeof BatchLogRecordProcessor>[0]['exporter'];
  let ours: Setup['ours'] = {};
  if (env.CONTENDER === 'ours-3') {
    const group = new S3Exporters({
      bucket,
      prefix: 'blackhole',
      endpoint,
      credentials,
      flushTimeoutMillis,
      maxBatchAgeMillis: 100, // so uploads are already stuck in the black hole at shutdown
    });
    const m = group.metricExporter();
    const s = group.spanExporter();
    const l = group.logRecordExporter();
    [metrics, spans, logs] = [m, s, l];
    ours = { metrics: m, spans: s, logs: l };
  } else if (env.CONTENDER === 'otlp-http-3') {
    metrics = new OTLPMetricExporter({ url: `${endpoint}/v1/metrics` });
    spans = new OTLPTraceExporter({ url: `${endpoint}/v1/traces` });
    logs = new OTLPLogExporter({ url: `${endpoint}/v1/logs` });
  } else {
    throw new Error(`unknown CONTENDER ${env.CONTENDER}`);
  }
  const metricExporter = new TimedExporter(metrics);
  // TimedExporter's lines name no signal: the parent reads those as the metrics'.
  const spanExporter = new TimedSignalExporter('spans', spans);
  const logExporter = new TimedSignalExporter('logs', logs);
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 500 }),
    ],
  });
  const tracerProvider = new TracerProvider({
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: spanExporter,
        scheduledDelayMillis: PROCESSOR_DELAY_MILLIS,
      }),
    ],
  });
  const loggerProvider = new LoggerProvider({
    processors: [
      new BatchLogRecordProcessor({
        exporter: logExporter,
        scheduledDelayMillis: PROCESSOR_DELAY_MILLIS,
      }),
    ],
  });
  return {
    providers: [
      { name: 'meter', provider: meterProvider },
      { name: 'tracer', provider: tracerProvider },
      { name: 'logger', provider: loggerProvider },
    ],
    meterProvider,
    tracerProvider,
    loggerProvider,
    ours,
    exports: () => metricExporter.exports + spanExporter.exports + logExporter.exports,
  };
}

const setup = env.CONTENDER?.endsWith('-3') ? threeSignals() : metricsOnly();
const meter = setup.meterProvider.getMeter('bench-shutdown');
const tracer = setup.tracerProvider?.getTracer('bench-shutdown');
const logger = setup.loggerProvider?.getLogger('bench-shutdown');
const requests = meter.createCounter('http.server.requests');
const duration = meter.createHistogram('http.server.request.duration', { unit: 's' });
const traffic = setInterval(() => {
  for (let i = 0; i < 50; i++) {
    const attributes = {
      'http.route': `/api/v1/items/{id}/${i % 10}`,
      'http.request.method': i % 3 ? 'GET' : 'POST',
      'http.response.status_code': i % 7 ? 200 : 500,
    };
    requests.add(1, attributes);
    duration.record(Math.random(), attributes);
    // Fewer spans and log records than metric recordings: a request in five.
    if (i % 5 === 0) {
      tracer?.startSpan(`GET /api/v1/items/{id}`, { attributes }).end();
      logger?.emit({ body: `GET /api/v1/items/${i} 200`, attributes });
    }
  }
}, 10);

// Let a few periodic exports happen (and hang in the black hole), then shut down.
await new Promise((resolve) => setTimeout(resolve, Number(env.TRAFFIC_MILLIS ?? 1_600)));
clearInterval(traffic);
// Ours say what they hold: batches pending, requests sent into the black hole, and what the
// shutdown deadline then cost. An exporter that simply dropped everything would show none.
const stats = () =>
  Object.fromEntries(Object.entries(setup.ours).map(([signal, e]) => [signal, e.stats()]));
const atShutdown = stats();
const started = performance.now();
// The control: a bare timer of the deadline, set with the shutdown. How late it fires is what
// the process's event loop and the machine's load add to any deadline here.
const referenceTimer = new Promise<number>((resolve) =>
  setTimeout(() => resolve(performance.now() - started), flushTimeoutMillis || 2_000),
);
// Side by side; a provider whose shutdown rejects (an OTLP export that timed out) has settled too.
const providers = await Promise.all(
  setup.providers.map(async ({ name, provider }) => {
    let error: string | undefined;
    try {
      await provider.shutdown();
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    return { name, millis: performance.now() - started, ...(error === undefined ? {} : { error }) };
  }),
);
const shutdownMillis = performance.now() - started;
const referenceTimerMillis = await referenceTimer;
const after = stats();
const stuck = Object.fromEntries(
  Object.entries(atShutdown).map(([signal, before]) => [
    signal,
    {
      pendingAtShutdown: before.pendingBatches,
      attemptsAtShutdown: before.uploadAttempts,
      uploaded: after[signal]?.batchesUploaded ?? 0,
      droppedAtShutdown: after[signal]?.pointsDroppedByReason.shutdown ?? 0,
    },
  ]),
);
console.log(
  JSON.stringify({
    shutdownMillis,
    exports: setup.exports(),
    providers,
    referenceTimerMillis,
    ...(Object.keys(stuck).length === 0 ? {} : { stuck }),
  }),
);
process.exit(0);
