import { ValueType } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  AggregationType,
  DataPointType,
  MeterProvider,
  MetricReader,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
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

/**
 * `exporter` seen through a tee: `exported` holds every ResourceMetrics the SDK handed over,
 * the record a test compares what was stored against.
 */
export function recordingExporter(exporter: PushMetricExporter): {
  exporter: PushMetricExporter;
  exported: ResourceMetrics[];
} {
  const exported: ResourceMetrics[] = [];
  const tee: PushMetricExporter = {
    export: (metrics, resultCallback) => {
      exported.push(metrics);
      exporter.export(metrics, resultCallback);
    },
    forceFlush: () => exporter.forceFlush(),
    shutdown: () => exporter.shutdown(),
    ...(exporter.selectAggregationTemporality === undefined
      ? {}
      : { selectAggregationTemporality: exporter.selectAggregationTemporality.bind(exporter) }),
    ...(exporter.selectAggregation === undefined
      ? {}
      : { selectAggregation: exporter.selectAggregation.bind(exporter) }),
  };
  return { exporter: tee, exported };
}

/** A manualProvider() whose exports are recorded (see recordingExporter). */
export function recordingProvider(
  exporter: PushMetricExporter,
  serviceName = 'test-service',
): { provider: MeterProvider; exported: ResourceMetrics[] } {
  const recording = recordingExporter(exporter);
  return {
    provider: manualProvider(recording.exporter, serviceName),
    exported: recording.exported,
  };
}

/** Records one known value set on every instrument type; the expected read-back is in reader-fixtures.ts. */
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

/** A reader that only collects when asked: `collect()` gives the ResourceMetrics to export by hand. */
export class CollectingReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** A provider with a CollectingReader, for tests that call exporter.export() themselves. */
export function collectingProvider(serviceName = 'test-service'): {
  provider: MeterProvider;
  collect(): Promise<ResourceMetrics>;
} {
  const reader = new CollectingReader();
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    readers: [reader],
    views: [
      {
        instrumentName: 'payload.size',
        aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM },
      },
    ],
  });
  return {
    provider,
    collect: async () => (await reader.collect()).resourceMetrics,
  };
}

/** A ResourceMetrics with one counter of `points` data points, each tagged with `tag`. */
export function syntheticMetrics(points: number, tag: number): ResourceMetrics {
  const now: [number, number] = [1_796_000_000, 123_456_789];
  return {
    resource: resourceFromAttributes({ 'service.name': 'synthetic' }),
    scopeMetrics: [
      {
        scope: { name: 'synthetic' },
        metrics: [
          {
            descriptor: {
              name: 'synthetic.count',
              description: '',
              unit: '',
              valueType: ValueType.INT,
            },
            aggregationTemporality: AggregationTemporality.CUMULATIVE,
            dataPointType: DataPointType.SUM,
            isMonotonic: true,
            dataPoints: Array.from({ length: points }, (_, i) => ({
              startTime: now,
              endTime: now,
              attributes: { tag, series: i },
              value: i,
            })),
          },
        ],
      },
    ],
  };
}

/**
 * The gauge `collection.seq` (meter `sequence`) of `provider`: each collection observes its own
 * number, 1, 2, 3...; the function returned says how many collections there were.
 */
export function sequenceGauge(provider: MeterProvider, start = 0): () => number {
  let count = start;
  provider
    .getMeter('sequence')
    .createObservableGauge('collection.seq')
    .addCallback((result) => {
      count++;
      result.observe(count);
    });
  return () => count;
}

/**
 * A service whose every collection reports its own sequence number (gauge `collection.seq`),
 * exported by hand: reading the objects back shows any collection missing or stored twice.
 */
export function sequencedService(
  exporter: PushMetricExporter,
  start = 0,
): {
  /** Collects and exports `n` more collections; resolves when each export was answered. */
  exportCollections(n: number): Promise<void>;
  /** The sequence number of the last collection: `start` plus the collections so far. */
  readonly count: number;
  shutdown(): Promise<void>;
} {
  const { provider, collect } = collectingProvider('sequenced');
  const count = sequenceGauge(provider, start);
  const work = provider.getMeter('sequence').createCounter('work.done');
  return {
    async exportCollections(n) {
      for (let i = 0; i < n; i++) {
        for (let route = 0; route < 10; route++) work.add(1, { route: `/r${route}` });
        const rm = await collect();
        const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
          exporter.export(rm, resolve),
        );
        if (result.code !== 0) throw result.error ?? new Error('export failed');
      }
    },
    get count() {
      return count();
    },
    shutdown: () => provider.shutdown(),
  };
}

/** Exports syntheticMetrics(points, tag) and resolves with the export's result. */
export function exportSynthetic(
  exporter: PushMetricExporter,
  points: number,
  tag: number,
): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(syntheticMetrics(points, tag), resolve));
}
