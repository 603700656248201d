// The one walk over a decoded ExportMetricsServiceRequest (the OTLP/JSON object shape that
// decodeJsonRequest, decodeProtoRequest and parquetToRequest return): resource, scope, metric,
// data point, in order. The reader's points (rows.ts) and the Parquet columns
// (parquet/append-otlp.ts) are both made from it, so they read the same fields the same way.

export type Json = Record<string, unknown>;

/** The metric's data field in OTLP/JSON; its index is the metric's type code. */
export const METRIC_FIELDS = [
  'gauge',
  'sum',
  'histogram',
  'exponentialHistogram',
  'summary',
] as const;

export const obj = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * A number field as OTLP/JSON spells it: a number, or a string (int64 and uint64 as decimals,
 * doubles as "NaN", "Infinity", "-Infinity"); undefined when absent. Exact up to 2^53.
 */
export function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v !== '') return Number(v);
  return undefined;
}

export const TEMPORALITY_NAMES: Record<string, number> = {
  AGGREGATION_TEMPORALITY_UNSPECIFIED: 0,
  AGGREGATION_TEMPORALITY_DELTA: 1,
  AGGREGATION_TEMPORALITY_CUMULATIVE: 2,
};

export interface OtlpVisitor {
  /** A ResourceMetrics, before its scopes. */
  resource: (rm: Json) => void;
  /** A ScopeMetrics, before its metrics. */
  scope: (sm: Json) => void;
  /**
   * A metric of a known type (its code: the index in METRIC_FIELDS) with its data (the `sum`,
   * `gauge`, ... object).
   */
  metric: (metric: Json, type: number, data: Json) => void;
  /** One of that metric's data points. */
  point: (point: Json) => void;
}

/**
 * Visits every data point of a request in order. Metrics of no known type are skipped (they
 * have no points this package can read); anything that is not an object or list where one is
 * expected counts as empty.
 */
export function walkRequest(request: unknown, visitor: OtlpVisitor): void {
  for (const rmValue of list(obj(request).resourceMetrics)) {
    const rm = obj(rmValue);
    visitor.resource(rm);
    for (const smValue of list(rm.scopeMetrics)) {
      const sm = obj(smValue);
      visitor.scope(sm);
      for (const metricValue of list(sm.metrics)) {
        const metric = obj(metricValue);
        const type = METRIC_FIELDS.findIndex((field) => field in metric);
        if (type < 0) continue;
        const data = obj(metric[METRIC_FIELDS[type] as string]);
        visitor.metric(metric, type, data);
        for (const point of list(data.dataPoints)) visitor.point(obj(point));
      }
    }
  }
}
