import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';

/** A MeterProvider whose reader exports only when flushed (or at shutdown), for exact tests. */
export function manualProvider(
  exporter: PushMetricExporter,
  serviceName = 'test-service',
): MeterProvider {
  return new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })],
    views: [
      {
        instrumentName: 'payload.size',
        aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM },
      },
    ],
  });
}

/** Records one known value set on every instrument type; the expected read-back is below. */
export function recordEveryInstrument(provider: MeterProvider): void {
  const meter = provider.getMeter('test-meter', '1.2.3');
  const requests = meter.createCounter('http.requests', { unit: '{request}' });
  requests.add(5, { route: '/a' });
  requests.add(7, { route: '/a' });
  requests.add(1, { route: '/b' });
  const active = meter.createUpDownCounter('http.active');
  active.add(10);
  active.add(-3);
  meter.createGauge('cpu.temperature', { unit: 'Cel' }).record(42.5, { host: 'h1' });
  const latency = meter.createHistogram('http.latency', { unit: 'ms' });
  for (const v of [3, 30, 300]) latency.record(v);
  const payload = meter.createHistogram('payload.size', { unit: 'By' });
  for (const v of [1, 2, 1000]) payload.record(v);
}
