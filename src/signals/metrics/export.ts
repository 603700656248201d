import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { otlpRecords } from '../otlp-rows.js';
import type { SignalExport, TransferableColumns } from '../signal.js';
import { resourceMetricsToJsonBytes } from './otlp-json.js';
import { resourceMetricsToProto } from './otlp-proto.js';
import type { SealedColumns } from './parquet/sealed.js';

/** Metrics, as an exporter sees them: one export is the SDK's ResourceMetrics. */
export const metricsExport: SignalExport<ResourceMetrics> = {
  name: 'metrics',
  recordsRepeat: true,
  records: otlpRecords('metrics', resourceMetricsToJsonBytes, resourceMetricsToProto),
  // One without data points has nothing to write: no part, so it cannot seal the open batch of
  // another resource (a Parquet append learns its count only once that batch is sealed).
  splitByResource: (rm, sink) => {
    if (hasDataPoints(rm)) sink.part(rm);
  },
  resourceAttributes: (rm) => rm.resource.attributes,
  async loadColumns() {
    const { MetricColumnBuilders } = await import('./parquet/column-builders.js');
    return () => new MetricColumnBuilders();
  },
  async columnsAsRecords(columns: TransferableColumns) {
    const { sealedColumnsToRequest } = await import('./parquet/to-request.js');
    const request = sealedColumnsToRequest(columns as SealedColumns);
    const resources = Array.isArray(request.resourceMetrics) ? request.resourceMetrics : [];
    return resources.map((rm) => Buffer.from(JSON.stringify(rm)));
  },
};

/** Data points in one ResourceMetrics (benchmarks and tests count exports with it). */
export function countDataPoints(rm: ResourceMetrics): number {
  let points = 0;
  for (const sm of rm.scopeMetrics) for (const m of sm.metrics) points += m.dataPoints.length;
  return points;
}

function hasDataPoints(rm: ResourceMetrics): boolean {
  for (const sm of rm.scopeMetrics)
    for (const m of sm.metrics) if (m.dataPoints.length > 0) return true;
  return false;
}
