import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import {
  S3LogRecordExporter,
  S3MetricExporter,
  type S3MetricExporterOptions,
  S3SpanExporter,
} from '../../../src/index.js';

/** How a child makes one unit of its signal's telemetry, given the SDK's tracer, logger or meter. */
export interface SignalTraffic {
  traces(tracer: ReturnType<TracerProvider['getTracer']>): () => void;
  logs(logger: ReturnType<LoggerProvider['getLogger']>): () => void;
  metrics(meter: ReturnType<MeterProvider['getMeter']>): () => void;
}

/** A child's service: the exporter inside its SDK provider, and one unit of telemetry. */
export interface SignalService {
  exporter: S3MetricExporter | S3SpanExporter | S3LogRecordExporter;
  provider: { shutdown(): Promise<void> };
  traffic: () => void;
}

/**
 * The exporter of `signal` ('traces', 'logs', anything else metrics) inside its SDK provider, as
 * a service has it: a TracerProvider with a BatchSpanProcessor, a LoggerProvider with a
 * BatchLogRecordProcessor (both with `sdk`'s delay and queue), or a MeterProvider with a
 * PeriodicExportingMetricReader every `sdk.exportIntervalMillis`; the scope is `sdk.name`.
 */
export function signalService(
  signal: string,
  options: S3MetricExporterOptions,
  sdk: {
    name: string;
    scheduledDelayMillis: number;
    maxQueueSize?: number;
    exportIntervalMillis: number;
  },
  traffic: SignalTraffic,
): SignalService {
  const { name, exportIntervalMillis, ...batch } = sdk;
  if (signal === 'traces') {
    const exporter = new S3SpanExporter(options);
    const provider = new TracerProvider({
      spanProcessors: [new BatchSpanProcessor({ exporter, ...batch })],
    });
    return { exporter, provider, traffic: traffic.traces(provider.getTracer(name)) };
  }
  if (signal === 'logs') {
    const exporter = new S3LogRecordExporter(options);
    const provider = new LoggerProvider({
      processors: [new BatchLogRecordProcessor({ exporter, ...batch })],
    });
    return { exporter, provider, traffic: traffic.logs(provider.getLogger(name)) };
  }
  const exporter = new S3MetricExporter(options);
  const provider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis })],
  });
  return { exporter, provider, traffic: traffic.metrics(provider.getMeter(name)) };
}
