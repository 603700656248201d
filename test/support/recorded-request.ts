import { ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { type Canonical, decodeJsonExact, decodeProtobuf } from './otlp-reference.js';

/**
 * What the test recorded, as an ExportMetricsServiceRequest in canonical form (see
 * otlp-reference.ts): the SDK's collection serialized by the official OTLP serializer and
 * decoded by the official-proto reference decoder. Neither is src/.
 */
export function recordedRequest(recorded: ResourceMetrics): Canonical {
  const bytes = ProtobufMetricsSerializer.serializeRequest(recorded);
  if (bytes === undefined) throw new Error('the official serializer wrote nothing');
  return decodeProtobuf(bytes);
}

/** One line of `otel-s3 cat`, read strictly as OTLP/JSON (unknown fields, bad int64s are errors). */
export function catLine(line: string): Canonical {
  return decodeJsonExact(line);
}

type Json = { [key: string]: Canonical };
const obj = (v: Canonical | undefined): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const list = (v: Canonical | undefined): Canonical[] => (Array.isArray(v) ? v : []);

const METRIC_DATA = ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary'];

/**
 * Every data point of a canonical request with everything around it (resource, scope, metric),
 * sorted: two requests that hold the same points however they are grouped give the same list.
 */
export function flatPoints(request: Canonical): Canonical[] {
  const out: Canonical[] = [];
  for (const rmValue of list(obj(request).resourceMetrics)) {
    const rm = obj(rmValue);
    const { scopeMetrics, ...resourceLevel } = rm;
    for (const smValue of list(scopeMetrics)) {
      const { metrics, ...scopeLevel } = obj(smValue);
      for (const metricValue of list(metrics)) {
        const metric = obj(metricValue);
        const kind = METRIC_DATA.find((k) => k in metric);
        if (kind === undefined) throw new Error(`a metric without data: ${JSON.stringify(metric)}`);
        const { dataPoints, ...dataLevel } = obj(metric[kind]);
        const { [kind]: _data, ...metricLevel } = metric;
        for (const point of list(dataPoints)) {
          out.push({
            ...resourceLevel,
            ...scopeLevel,
            metric: { ...metricLevel, kind, ...dataLevel },
            point,
          });
        }
      }
    }
  }
  return out.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/** A decimal-nanosecond time cut to whole microseconds. */
const toMicros = (nanos: string) => {
  const n = BigInt(nanos);
  return (n - (n % 1000n)).toString();
};

/**
 * `flatPoints(request)` with the two losses docs/parquet.md ("What the table does not keep")
 * names: times cut to whole microseconds and attribute values as text. Only string attribute
 * values are handled here (their text is themselves); the text of the other types belongs to the
 * Parquet module's own tests.
 */
export function asParquetKeepsIt(request: Canonical): Canonical[] {
  const attributes = (v: Canonical | undefined): Canonical =>
    list(v).map((kv) => {
      const { key, value } = obj(kv);
      if (!('stringValue' in obj(value))) {
        throw new Error(`attribute ${String(key)} is not a string; this helper handles strings`);
      }
      return { key: key ?? '', value: value ?? null };
    });
  const lossy = (value: Canonical, key = ''): Canonical => {
    if (key === 'attributes') return attributes(value);
    if ((key === 'timeUnixNano' || key === 'startTimeUnixNano') && typeof value === 'string') {
      return toMicros(value);
    }
    if (Array.isArray(value)) return value.map((v) => lossy(v));
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, lossy(v, k)]));
  };
  return flatPoints(request)
    .map((p) => lossy(p))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}
