import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';

/** One export() as a promise: resolves on SUCCESS, rejects with the exporter's error. */
export function exportOnce(exporter: PushMetricExporter, rm: ResourceMetrics): Promise<void> {
  return new Promise((resolve, reject) =>
    exporter.export(rm, (result) =>
      result.code === 0 ? resolve() : reject(result.error ?? new Error('export failed')),
    ),
  );
}
