import type { OtlpObject } from '../encoding/otlp-proto-decode.js';

/** The OTLP metric data fields, in the order a metric's type is looked for. */
const DATA_FIELDS = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'] as const;

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const fields = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};

/**
 * The data points of a request (OTLP/JSON object shape): one row each in the Parquet table. Kept
 * apart from the column builders, so that the compactor checks what they wrote against it.
 */
export function countPoints(request: OtlpObject): number {
  let points = 0;
  for (const rm of list(request.resourceMetrics)) {
    for (const sm of list(fields(rm).scopeMetrics)) {
      for (const metric of list(fields(sm).metrics)) {
        const m = fields(metric);
        const field = DATA_FIELDS.find((name) => name in m);
        if (field !== undefined) points += list(fields(m[field]).dataPoints).length;
      }
    }
  }
  return points;
}
