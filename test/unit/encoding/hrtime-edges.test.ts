import type { HrTime } from '@opentelemetry/api';
import { JsonMetricsSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { parquetReadObjects } from 'hyparquet';
import { expect, test } from 'vitest';
import { hrTimeToNanosParts } from '../../../src/encoding/hrtime.js';
import { newTally } from '../../../src/encoding/records.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import { resourceMetricsToJson } from '../../../src/signals/metrics/otlp-json.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { collectingProvider } from '../../support/service.js';

/**
 * HrTimes that are not [whole seconds, 0 ≤ nanoseconds < 1e9]. The SDK's own arithmetic can hand
 * one over (millisToHrTime rounds a fraction of a millisecond up to 1e9 nanoseconds; a caller may
 * pass an HrTime of its own as a span's or a point's time), and the official serializers define
 * what it means: each part cut to an integer, then seconds × 1e9 + nanoseconds.
 */
const S = 1_764_480_000; // 2025-11-30T05:20:00Z
const EDGES: HrTime[] = [
  [S, 1e9],
  [S, 1_999_999_999],
  [S, 2.7],
  [S + 0.5, 40],
  [S, 0],
  // Negative nanoseconds, on a second whose nanoseconds' low 32 bits are all 0 (a multiple of
  // 2^23 seconds): the protobuf parts borrow from the high word.
  [1_677_721_600, -5],
];

interface OfficialSpans {
  resourceSpans: {
    scopeSpans: { spans: { name: string; startTimeUnixNano: string; endTimeUnixNano: string }[] }[];
  }[];
}

/** The official meaning of an HrTime, as a decimal string (what the official JSON writes). */
const officialNanos = (t: HrTime): string =>
  (BigInt(Math.trunc(t[0])) * 1_000_000_000n + BigInt(Math.trunc(t[1]))).toString();

test('the official meaning of each edge HrTime, as the official serializer writes it', async () => {
  const spans = await spansAt(EDGES);
  const official = JSON.parse(
    Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? []).toString(),
  ) as OfficialSpans;
  const starts = official.resourceSpans[0]?.scopeSpans[0]?.spans.map((s) => s.startTimeUnixNano);
  expect(starts).toEqual(EDGES.map(officialNanos));
});

/** Points of a counter recorded through the SDK, their times set to the edges afterwards. */
async function pointsAt(times: HrTime[] = EDGES): Promise<ResourceMetrics> {
  const { provider, collect } = collectingProvider('hrtime-edges');
  const counter = provider.getMeter('m').createCounter('c');
  for (let i = 0; i < times.length; i++) counter.add(1, { i });
  const rm = await collect();
  await provider.shutdown();
  const points = rm.scopeMetrics[0]?.metrics[0]?.dataPoints ?? [];
  expect(points).toHaveLength(times.length);
  points.forEach((p, i) => {
    const point = p as { startTime: HrTime; endTime: HrTime };
    point.startTime = times[i] as HrTime;
    point.endTime = times[(i + 1) % times.length] as HrTime;
  });
  return rm;
}

/** The start and time of each point as the official JSON serializer writes them. */
function officialPointTimes(rm: ResourceMetrics): string[] {
  const json = Buffer.from(JsonMetricsSerializer.serializeRequest(rm) ?? []).toString();
  return times(json);
}
const times = (json: string) =>
  [...json.matchAll(/"(startTimeUnixNano|timeUnixNano)":"(-?\d+)"/g)].map((m) => m[2] as string);

test('metrics as OTLP/JSON spell edge HrTimes as the official serializer does', async () => {
  const rm = await pointsAt();
  const official = officialPointTimes(rm);
  expect(official).toHaveLength(2 * EDGES.length);
  expect(times(`{"resourceMetrics":[${resourceMetricsToJson(rm)}]}`)).toEqual(official);
});

/** Times whose microseconds are past 2^53 (2255) and 2^63 ns (2262): a double rounds them. */
const LATE_POINTS: HrTime[] = [
  [9_100_000_001, 1_000],
  [9_300_000_000, 123_456_789],
  [18_446_744_073, 709_551_000],
];

test.each([
  ['edge', EDGES],
  ['late', LATE_POINTS],
])('metrics as Parquet keep the official microseconds of %s HrTimes', async (_, times) => {
  const rm = await pointsAt(times);
  const builders = (await metricsExport.loadColumns())();
  builders.append(rm, newTally(false));
  const file = await encodeParquet(builders.seal() as never, { compression: 'none' });
  const rows = (await parquetReadObjects({
    file: new Uint8Array(file).buffer,
    columns: ['StartTimeUnix', 'TimeUnix'],
    parsers: { timestampFromMicroseconds: (micros: bigint) => micros },
  })) as { StartTimeUnix: bigint; TimeUnix: bigint }[];
  const read = rows.flatMap((r) => [r.StartTimeUnix.toString(), r.TimeUnix.toString()]).sort();
  // The Parquet tables keep microseconds (docs/parquet.md): the official nanoseconds cut.
  const expected = officialPointTimes(rm).map((ns) => (BigInt(ns) / 1000n).toString());
  expect(read).toEqual(expected.sort());
});

test('protobuf parts of edge HrTimes are the official nanoseconds', () => {
  for (const t of EDGES) {
    const { lo, hi } = hrTimeToNanosParts(t);
    // 32-bit halves, as the fixed64 writer stores them (lo >>> 0, hi >>> 0).
    expect([lo >>> 0, hi >>> 0], `${t}`).toEqual([lo, hi]);
    expect(((BigInt(hi) << 32n) + BigInt(lo)).toString()).toBe(officialNanos(t));
  }
});

test('Parquet spans keep the official start and end of edge HrTimes', async () => {
  // Each edge as a start, and as the end of the span before it.
  const spans = await spansAt(EDGES, (i) => EDGES[(i + 1) % EDGES.length] as HrTime);
  const builders = spanColumnBuilders();
  builders.append(spans, newTally(false));
  const file = await flatEncoder(SPANS)(builders.seal(), { compression: 'none' });
  const rows = (await parquetReadObjects({
    file: new Uint8Array(file).buffer,
    columns: ['SpanName', 'Timestamp', 'Duration'],
    utf8: true,
    // The stored int64 itself, not a Date (which keeps milliseconds).
    parsers: { timestampFromNanoseconds: (nanos: bigint) => nanos },
  })) as { SpanName: string; Timestamp: bigint; Duration: bigint }[];
  const read = Object.fromEntries(
    rows.map((r) => [
      r.SpanName,
      [r.Timestamp.toString(), (r.Timestamp + BigInt(r.Duration)).toString()],
    ]),
  );
  // What the official serializer writes for the same spans (the SDK keeps an end before the
  // start as the start).
  const official = JSON.parse(
    Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? []).toString(),
  ) as OfficialSpans;
  const expected = Object.fromEntries(
    (official.resourceSpans[0]?.scopeSpans[0]?.spans ?? []).map((s) => [
      s.name,
      [s.startTimeUnixNano, s.endTimeUnixNano],
    ]),
  );
  expect(Object.keys(expected)).toHaveLength(EDGES.length);
  expect(read).toEqual(expected);
});

/** Spans recorded through the SDK, the i-th started at `starts[i]` and ended at `end(i)`. */
async function spansAt(starts: HrTime[], end = (i: number) => starts[i] as HrTime) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('t');
  starts.forEach((startTime, i) => {
    tracer.startSpan(`edge-${i}`, { startTime }).end(end(i));
  });
  const spans: ReadableSpan[] = exporter.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

/** Times past 2116: seconds × 1e9 is past 2^53, and past 2^63 ns (2262) for the last two. */
const LATE: HrTime[] = [
  [4_700_000_001, 7],
  [9_000_000_001, 999_999_999],
  [9_300_000_000, 0],
  [9_300_000_001, 123],
];

test('protobuf parts of times past 2116 are what the official JSON serializer writes', async () => {
  const spans = await spansAt(LATE);
  const official = JSON.parse(
    Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? []).toString(),
  ) as OfficialSpans;
  const expected = official.resourceSpans[0]?.scopeSpans[0]?.spans.map((s) => s.startTimeUnixNano);
  expect(expected).toHaveLength(LATE.length);
  const parts = LATE.map((t) => {
    const { lo, hi } = hrTimeToNanosParts(t);
    return ((BigInt(hi >>> 0) << 32n) + BigInt(lo >>> 0)).toString();
  });
  expect(parts).toEqual(expected);
});
