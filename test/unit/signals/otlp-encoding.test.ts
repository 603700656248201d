import { ValueType } from '@opentelemetry/api';
import { JsonMetricsSerializer, ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  type DataPoint,
  DataPointType,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import {
  decodeOtlpProto,
  type OtlpObject,
  type OtlpValue,
} from '../../../src/encoding/otlp-proto-decode.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import { resourceMetricsToJson } from '../../../src/signals/metrics/otlp-json.js';
import { resourceMetricsToProto } from '../../../src/signals/metrics/otlp-proto.js';
import { withoutDefaults } from '../../support/otlp-defaults.js';
import { collectingProvider, recordEveryInstrument } from '../../support/service.js';

/** Realistic metrics: every instrument kind, many series, mixed attribute types. */
async function sample(): Promise<ResourceMetrics> {
  const { provider, collect } = collectingProvider('encoding-test');
  recordEveryInstrument(provider);
  const meter = provider.getMeter('http-server', '2.0.0');
  const requests = meter.createCounter('http.server.requests');
  const duration = meter.createHistogram('http.server.duration', {
    unit: 's',
    description: 'Duration',
  });
  const bytes = meter.createCounter('net.bytes', { valueType: 1 });
  for (let i = 0; i < 200; i++) {
    const attrs = {
      'http.route': `/api/v1/items/${i % 17}`,
      'http.method': i % 3 === 0 ? 'POST' : 'GET',
      'http.status_code': 200 + (i % 5),
      ok: i % 7 !== 0,
      ratio: i / 7,
      tags: ['a', `b${i % 2}`],
      'unicode ✓': 'żółć 日本 🚀',
    };
    requests.add(i % 4, attrs);
    duration.record(i / 1000, attrs);
    bytes.add(i * 1.5, { dir: i % 2 ? 'in' : 'out' });
  }
  meter.createObservableGauge('process.fds').addCallback((r) => r.observe(-12, { neg: -1 }));
  meter.createObservableGauge('weird.values').addCallback((r) => {
    r.observe(Number.NaN, { kind: 'nan' });
    r.observe(Number.POSITIVE_INFINITY, { kind: 'inf' });
    r.observe(-0.000001, { kind: 'tiny' });
    r.observe(1e21, { kind: 'huge' });
  });
  const rm = await collect();
  await provider.shutdown();
  return rm;
}

/** JSON.stringify spells NaN and Infinity as null; OTLP/JSON spells them as strings. */
function officialJson(rm: ResourceMetrics): OtlpObject {
  return JSON.parse(
    Buffer.from(JsonMetricsSerializer.serializeRequest(rm) ?? []).toString(),
  ) as OtlpObject;
}

function ourJson(rm: ResourceMetrics): OtlpObject {
  return JSON.parse(`{"resourceMetrics":[${resourceMetricsToJson(rm)}]}`) as OtlpObject;
}

describe('OTLP encoders', () => {
  test('JSON decodes to the same data as the official JsonMetricsSerializer', async () => {
    const rm = await sample();
    const official = officialJson(rm);
    const ours = ourJson(rm);
    // The official serializer turns NaN and Infinity into null (not valid OTLP): compare those apart.
    const weird = (o: OtlpObject) => JSON.stringify(o).match(/"weird\.values".*?\]\}\}/)?.[0] ?? '';
    expect(weird(official)).toContain('"asDouble":null');
    expect(weird(ours)).toContain('"asDouble":"NaN"');
    expect(weird(ours)).toContain('"asDouble":"Infinity"');
    const dropWeird = (o: OtlpValue) =>
      JSON.parse(JSON.stringify(o).replace(/,?\{"name":"weird\.values".*?\]\}\}/, '')) as OtlpValue;
    expect(dropWeird(ours)).toEqual(dropWeird(withoutDefaults(official)));
  });

  test('JSON spells integers, negative ones included, and uncommon doubles as the official serializer does', async () => {
    const { provider, collect } = collectingProvider('numbers-test');
    const meter = provider.getMeter('numbers', '1.0.0');
    const ints = meter.createUpDownCounter('ints', { valueType: 1 });
    for (const [i, v] of [-12, 0, 7, 2 ** 53 - 1, -(2 ** 40)].entries()) ints.add(v, { i });
    meter.createObservableGauge('doubles').addCallback((r) => {
      for (const [i, v] of [0, -3, 0.1, 1e21, 2 ** 53, 5e-324, -1.5e-7].entries())
        r.observe(v, { i });
    });
    const negative = meter.createHistogram('negative', {
      advice: { explicitBucketBoundaries: [-5, -0.5, 0, 2.5] },
    });
    for (const v of [-7, -1, -0.25, 3]) negative.record(v);
    const rm = await collect();
    await provider.shutdown();
    expect(ourJson(rm)).toEqual(withoutDefaults(officialJson(rm)));
  });

  test('-0 keeps its sign in JSON, as in protobuf (the official JSON serializer writes 0)', async () => {
    const { provider, collect } = collectingProvider('negative-zero-test');
    const meter = provider.getMeter('numbers', '1.0.0');
    meter.createObservableGauge('zero').addCallback((r) => r.observe(-0));
    meter.createHistogram('h', { advice: { explicitBucketBoundaries: [-0, 1] } }).record(-0);
    const rm = await collect();
    await provider.shutdown();
    for (const decoded of [ourJson(rm), decodeOtlpProto(resourceMetricsToProto(rm))]) {
      const [gauge, histogram] = metricsOf(decoded);
      const point = gauge?.gauge?.dataPoints?.[0];
      const hpoint = histogram?.histogram?.dataPoints?.[0];
      expect(Object.is(point?.asDouble, -0), 'gauge value').toBe(true);
      expect(Object.is(hpoint?.explicitBounds?.[0], -0), 'first bound').toBe(true);
      expect(Object.is(hpoint?.min, -0) && Object.is(hpoint?.max, -0), 'min, max').toBe(true);
    }
  });

  test('an INT point beyond int64 is written as the double it is, in JSON and protobuf alike', () => {
    // A sum can get there (past 2^63, or Infinity once it overflows); the official serializer
    // writes any INT point as asInt, wrapping these around (Infinity and NaN become 0).
    const values = [2 ** 63, -(2 ** 64), 1e30, Number.POSITIVE_INFINITY, Number.NaN];
    const rm: ResourceMetrics = {
      resource: resourceFromAttributes({}),
      scopeMetrics: [
        {
          scope: { name: 'numbers' },
          metrics: [
            {
              descriptor: { name: 'ints', description: '', unit: '', valueType: ValueType.INT },
              aggregationTemporality: AggregationTemporality.CUMULATIVE,
              dataPointType: DataPointType.SUM,
              isMonotonic: false,
              dataPoints: values.map((value, i) => ({
                startTime: [1, 0],
                endTime: [2, 0],
                attributes: { i },
                value,
              })),
            },
          ],
        },
      ],
    };
    const asOtlpJson = (v: number) => (Number.isFinite(v) ? v : String(v));
    const expected = values.map((v, i) => ({ i, asDouble: asOtlpJson(v) }));
    for (const decoded of [ourJson(rm), decodeOtlpProto(resourceMetricsToProto(rm))]) {
      const points = metricsOf(decoded)[0]?.sum?.dataPoints ?? [];
      const got = points.map((p) => ({
        i: p.attributes?.[0]?.value?.intValue,
        asDouble: p.asDouble,
      }));
      expect(got).toEqual(expected);
    }
  });

  test('attributes as the official serializer takes them: undefined values, inherited keys, integers beyond 2^53, maps, byte arrays', async () => {
    const { provider, collect } = collectingProvider('attributes-test');
    const meter = provider.getMeter('attributes', '1.0.0');
    const counter = meter.createCounter('c');
    const inherited = Object.create({ inherited: 'from the prototype' }) as Record<string, unknown>;
    inherited.own = 'yes';
    counter.add(1, inherited as never);
    counter.add(2, { missing: undefined, there: 1 } as never);
    counter.add(3, { big: 2 ** 53, bigger: 2 ** 60, min: -(2 ** 63), huge: 1e30 });
    counter.add(4, {
      map: { nested: { deeper: [1, 'two', null] }, empty: {} },
      bytes: Uint8Array.from([0, 1, 254, 255]),
      none: new Uint8Array(0),
    } as never);
    const rm = await collect();
    await provider.shutdown();
    const officialProto = withoutDefaults(
      decodeOtlpProto(ProtobufMetricsSerializer.serializeRequest(rm) ?? new Uint8Array()),
    );
    expect(decodeOtlpProto(resourceMetricsToProto(rm))).toEqual(officialProto);
    const ours = ourJson(rm);
    expect(normalizeJsonForProto(ours)).toEqual(officialProto);
    const text = JSON.stringify(ours);
    // Beyond 2^53 an int64 is an exact decimal string: JSON.parse keeps its digits.
    expect(text).toContain('{"key":"min","value":{"intValue":"-9223372036854775808"}}');
    expect(text).toContain('{"key":"bigger","value":{"intValue":"1152921504606846976"}}');
    // Beyond int64 a number is a double (the official JSON serializer writes an overflowing intValue).
    expect(text).toContain('{"key":"huge","value":{"doubleValue":1e+30}}');
    expect(text).toContain('{"key":"missing","value":{}}');
    expect(text).toContain('{"key":"none","value":{"bytesValue":""}}');
    expect(text).not.toContain('inherited');
  });

  test('an export that fails half-way leaves nothing behind in the next one', async () => {
    const rm = await sample();
    const json = resourceMetricsToJson(rm);
    const proto = Buffer.from(resourceMetricsToProto(rm));
    const broken = structuredClone(rm);
    const point = broken.scopeMetrics[0]?.metrics[0]?.dataPoints[0] as { startTime: unknown };
    point.startTime = undefined; // the encoders throw on it, after writing part of the export
    expect(() => resourceMetricsToJson(broken)).toThrow();
    expect(() => resourceMetricsToProto(broken)).toThrow();
    expect(resourceMetricsToJson(rm)).toBe(json);
    expect(Buffer.from(resourceMetricsToProto(rm)).equals(proto)).toBe(true);
  });

  test('cached attribute and bucket spellings (JSON and protobuf) follow objects changed after recording', async () => {
    const { provider, collect } = collectingProvider('cache-test');
    const meter = provider.getMeter('cache', '1.0.0');
    const counter = meter.createCounter('c');
    const histogram = meter.createHistogram('h');
    const attrs: Record<string, string | number | string[]> = { route: '/a', tags: ['x', 'y'] };
    counter.add(1, attrs);
    histogram.record(3, attrs);
    const rm = await collect();
    const check = () => {
      const official = withoutDefaults(
        decodeOtlpProto(ProtobufMetricsSerializer.serializeRequest(rm) ?? new Uint8Array()),
      );
      expect(decodeOtlpProto(resourceMetricsToProto(rm))).toEqual(official);
      expect(normalizeJsonForProto(ourJson(rm))).toEqual(official);
    };
    check(); // fills the caches
    const point = rm.scopeMetrics[0]?.metrics[0]?.dataPoints[0];
    const hist = rm.scopeMetrics[0]?.metrics[1]?.dataPoints[0]?.value as
      | { buckets: { boundaries: number[] } }
      | undefined;
    if (point === undefined || hist === undefined) throw new Error('no data points');
    const live = point.attributes as Record<string, unknown>;
    live.route = '/b'; // value changed
    check();
    (live.tags as string[])[1] = 'z'; // array element changed
    check();
    live.added = 1; // key added
    check();
    delete live.route; // key removed
    check();
    hist.buckets.boundaries[0] = -1; // bounds changed in place
    check();
    const nested = { inner: { n: 1 }, bytes: Uint8Array.from([1, 2]) };
    live.nested = nested; // a map and a byte array, changed in place below
    check();
    nested.inner.n = 2;
    check();
    (nested.bytes as Uint8Array)[0] = 9;
    check();
    expect(JSON.stringify(ourJson(rm))).toContain('"added"');
    await provider.shutdown();
  });

  test("a metric's series that change places, go and come between exports keep their own attributes (JSON and protobuf)", async () => {
    const { provider, collect } = collectingProvider('order-test');
    const counter = provider.getMeter('order').createCounter('c');
    for (let i = 0; i < 5; i++) counter.add(i + 1, { series: `s${i}`, n: i });
    const rm = await collect();
    const official = () =>
      withoutDefaults(
        decodeOtlpProto(ProtobufMetricsSerializer.serializeRequest(rm) ?? new Uint8Array()),
      );
    const points = rm.scopeMetrics[0]?.metrics[0]?.dataPoints as DataPoint<number>[] | undefined;
    if (points === undefined || points.length !== 5) throw new Error('expected 5 points');
    const check = () => {
      expect(normalizeJsonForProto(ourJson(rm))).toEqual(official());
      expect(decodeOtlpProto(resourceMetricsToProto(rm))).toEqual(official());
    };
    check(); // each series' spelling (JSON and protobuf), remembered at its place
    points.reverse();
    check();
    points.splice(1, 2); // two series gone
    check();
    counter.add(1, { series: 'new', n: 99 });
    const more = await collect();
    const fresh = more.scopeMetrics[0]?.metrics[0]?.dataPoints as DataPoint<number>[] | undefined;
    if (fresh === undefined) throw new Error('no points');
    points.splice(0, points.length, ...fresh.slice().reverse()); // a new series among the others
    check();
    await provider.shutdown();
  });

  test('protobuf decodes to the same data as our JSON and as the official ProtobufMetricsSerializer', async () => {
    const rm = await sample();
    const ours = decodeOtlpProto(resourceMetricsToProto(rm));
    const official = decodeOtlpProto(
      ProtobufMetricsSerializer.serializeRequest(rm) ?? new Uint8Array(),
    );
    expect(ours).toEqual(withoutDefaults(official));
    expect(ours).toEqual(normalizeJsonForProto(ourJson(rm)));
  });

  test('protobuf records concatenate into one valid request holding all of them', async () => {
    const format = metricsExport.records['otlp-proto'];
    const a = await sample();
    const b = await sample();
    const first = format.encode(a);
    const second = format.encode(b);
    const joined = format.assemble([first, second], first.length + second.length);
    const decoded = decodeOtlpProto(joined);
    expect(decoded.resourceMetrics).toHaveLength(2);
    expect(decoded).toEqual({
      resourceMetrics: [
        ...(decodeOtlpProto(first).resourceMetrics as OtlpValue[]),
        ...(decodeOtlpProto(second).resourceMetrics as OtlpValue[]),
      ],
    });
  });

  test('JSON records assemble into one request on one line, a valid JSON-lines file', async () => {
    const format = metricsExport.records['otlp-json'];
    const records = [format.encode(await sample()), format.encode(await sample())];
    const bytes = records.reduce((n, r) => n + r.length, 0);
    const joined = format.assemble(records, bytes);
    expect(joined.length).toBe(bytes + format.overhead(2));
    const text = joined.toString();
    expect(text.endsWith('\n')).toBe(true);
    expect(text.split('\n')).toHaveLength(2);
    expect((JSON.parse(text) as OtlpObject).resourceMetrics).toHaveLength(2);
  });
});

interface DecodedPoint {
  attributes?: { value?: { intValue?: OtlpValue } }[];
  asDouble?: OtlpValue;
  explicitBounds?: OtlpValue[];
  min?: OtlpValue;
  max?: OtlpValue;
}
interface DecodedMetric {
  gauge?: { dataPoints?: DecodedPoint[] };
  sum?: { dataPoints?: DecodedPoint[] };
  histogram?: { dataPoints?: DecodedPoint[] };
}

interface DecodedRequest {
  resourceMetrics?: { scopeMetrics?: { metrics?: DecodedMetric[] }[] }[];
}

/** The metrics of a decoded request's first scope. */
function metricsOf(request: OtlpObject): DecodedMetric[] {
  const decoded = request as unknown as DecodedRequest;
  return decoded.resourceMetrics?.[0]?.scopeMetrics?.[0]?.metrics ?? [];
}

/**
 * Our JSON and protobuf carry the same fields except where protobuf cannot tell "absent" from
 * "default": empty lists, zero offsets and scales, and a false isMonotonic are not on the wire.
 */
function normalizeJsonForProto(value: OtlpValue): OtlpValue {
  if (Array.isArray(value)) return value.map(normalizeJsonForProto);
  if (typeof value !== 'object' || value === null) return value;
  const out: OtlpObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (Array.isArray(v) && v.length === 0) continue;
    if ((k === 'offset' || k === 'scale') && v === 0) continue;
    if (k === 'isMonotonic' && v === false) continue;
    out[k] = normalizeJsonForProto(v);
  }
  return out;
}
