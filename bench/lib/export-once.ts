import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ExporterStats, S3MetricExporter } from '../../src/index.js';

/** One export() as a promise: resolves on SUCCESS, rejects with the exporter's error. */
export function exportOnce(exporter: PushMetricExporter, rm: ResourceMetrics): Promise<void> {
  return new Promise((resolve, reject) =>
    exporter.export(rm, (result) =>
      result.code === 0 ? resolve() : reject(result.error ?? new Error('export failed')),
    ),
  );
}

/**
 * Exports each collection in turn, then forceFlush(): the seconds that took. export() answers in
 * microtasks, so a turn of the event loop comes between exports (a reader exports on a timer):
 * without it the worker's replies and the uploads could not progress.
 */
export async function exportAllTimed(
  exporter: PushMetricExporter,
  collections: readonly ResourceMetrics[],
): Promise<number> {
  const started = performance.now();
  for (const rm of collections) {
    await exportOnce(exporter, rm);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await exporter.forceFlush();
  return (performance.now() - started) / 1000;
}

/** shutdown(), then the run's stats; throws if it dropped a point or left a batch unsent. */
export async function shutdownLossless(
  exporter: S3MetricExporter,
  label: string,
): Promise<ExporterStats> {
  const stats = exporter.stats();
  await exporter.shutdown();
  if (stats.pointsDropped > 0 || stats.batchesUploaded !== stats.batchesSealed) {
    throw new Error(`${label}: lost data: ${JSON.stringify(stats)}`);
  }
  return stats;
}
