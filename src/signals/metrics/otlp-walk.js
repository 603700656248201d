// @ts-check
// The one walk over a decoded ExportMetricsServiceRequest (the OTLP/JSON object shape that
// decodeJsonRequest, decodeProtoRequest and parquetToRequest return): resource, scope, metric,
// data point, in order. The reader's points (src/reader/points.ts) and the Parquet columns
// (src/parquet/append-otlp.js) are both made from it, so they read the same fields the same way.
// Plain JavaScript with JSDoc types: it also runs in the Parquet worker.

/** @typedef {Record<string, unknown>} Json */

/** The metric's data field in OTLP/JSON; its index is the metric's type code. */
export const METRIC_FIELDS = /** @type {const} */ ([
  'gauge',
  'sum',
  'histogram',
  'exponentialHistogram',
  'summary',
]);

/** @param {unknown} v @returns {Json} */
export const obj = (v) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? /** @type {Json} */ (v) : {};
/** @param {unknown} v @returns {unknown[]} */
export const list = (v) => (Array.isArray(v) ? v : []);
/** @param {unknown} v */
export const str = (v) => (typeof v === 'string' ? v : '');

/**
 * A number field as OTLP/JSON spells it: a number, or a string (int64 and uint64 as decimals,
 * doubles as "NaN", "Infinity", "-Infinity"); undefined when absent. Exact up to 2^53.
 * @param {unknown} v
 */
export function numberOf(v) {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v !== '') return Number(v);
  return undefined;
}

const TEMPORALITY_NAMES = /** @type {Record<string, number>} */ ({
  AGGREGATION_TEMPORALITY_UNSPECIFIED: 0,
  AGGREGATION_TEMPORALITY_DELTA: 1,
  AGGREGATION_TEMPORALITY_CUMULATIVE: 2,
});

/** A metric's AggregationTemporality: the enum's number (JSON may name it); 0 if unset. @param {Json} data */
export function temporalityOf(data) {
  const t = data.aggregationTemporality;
  if (typeof t === 'number') return t;
  return TEMPORALITY_NAMES[str(t)] ?? 0;
}

/**
 * @typedef {object} OtlpVisitor
 * @property {(rm: Json) => void} resource a ResourceMetrics, before its scopes
 * @property {(sm: Json) => void} scope a ScopeMetrics, before its metrics
 * @property {(metric: Json, type: number, data: Json) => void} metric a metric of a known type
 *   (its code: the index in METRIC_FIELDS) with its data (the `sum`, `gauge`, ... object)
 * @property {(point: Json) => void} point one of that metric's data points
 */

/**
 * Visits every data point of a request in order. Metrics of no known type are skipped (they
 * have no points this package can read); anything that is not an object or list where one is
 * expected counts as empty.
 * @param {unknown} request
 * @param {OtlpVisitor} visitor
 */
export function walkRequest(request, visitor) {
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
        const data = obj(metric[/** @type {string} */ (METRIC_FIELDS[type])]);
        visitor.metric(metric, type, data);
        for (const point of list(data.dataPoints)) visitor.point(obj(point));
      }
    }
  }
}
