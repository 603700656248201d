import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { jsonRecords, protoRecords } from '../../encoding/records.js';
import type { SignalExport, TransferableColumns } from '../signal.js';
import { resourceMetricsToJsonBytes } from './otlp-json.js';
import { resourceMetricsToProto } from './otlp-proto.js';
import type { SealedColumns } from './parquet/sealed.js';

const json = jsonRecords('resourceMetrics', resourceMetricsToJsonBytes);

/** Metrics, as an exporter sees them: one export is the SDK's ResourceMetrics. */
export const metricsExport: SignalExport<ResourceMetrics> = {
  name: 'metrics',
  records: {
    'otlp-json': json,
    'otlp-proto': protoRecords(resourceMetricsToProto),
    parquet: json,
  },
  count: countDataPoints,
  resourceAttributes: (rm) => rm.resource.attributes,
  oldestTimeMillis: oldestEndTimeMillis,
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

/** Data points in one ResourceMetrics, for accounting of what was uploaded or dropped. */
export function countDataPoints(rm: ResourceMetrics): number {
  let points = 0;
  for (const sm of rm.scopeMetrics) for (const m of sm.metrics) points += m.dataPoints.length;
  return points;
}

/** The oldest data point end time of an export in ms, or undefined if it has no points. */
export function oldestEndTimeMillis(rm: ResourceMetrics): number | undefined {
  let oldest: number | undefined;
  for (const sm of rm.scopeMetrics) {
    for (const m of sm.metrics) {
      for (const p of m.dataPoints) {
        const t = p.endTime[0] * 1000 + Math.floor(p.endTime[1] / 1e6);
        if (oldest === undefined || t < oldest) oldest = t;
      }
    }
  }
  return oldest;
}
