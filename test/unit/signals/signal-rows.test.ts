import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import { decodeOtlpProto } from '../../../src/encoding/otlp-proto-decode.js';
import { type ExportTally, newTally } from '../../../src/encoding/records.js';
import { logsExport } from '../../../src/signals/logs/export.js';
import { logsRead } from '../../../src/signals/logs/read.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import type { DecodeContext, SignalExport } from '../../../src/signals/signal.js';
import { tracesExport } from '../../../src/signals/traces/export.js';
import { tracesRead } from '../../../src/signals/traces/read.js';
import { spanRows } from '../../../src/signals/traces/rows.js';
import { logsReference, traceReference } from '../../support/otlp-reference.js';
import { handBuiltSpan } from '../../support/readable-span.js';
import { TRACE_ID } from '../../support/trace-context.js';

/** The parts splitByResource hands over, in order. */
function partsOf<Item>(row: SignalExport<Item>, item: Item): Item[] {
  const parts: Item[] = [];
  row.splitByResource(item, { part: (part) => parts.push(part) });
  return parts;
}

/** What encoding an export in `format` counts into a tally (with times). */
function tallyOf<Item>(
  row: SignalExport<Item>,
  item: Item,
  format: 'otlp-json' | 'otlp-proto',
): ExportTally {
  const tally = newTally(true);
  row.records[format].encode(item, tally);
  return tally;
}

const checkout = { attributes: { 'service.name': 'checkout' } };
const cart = { attributes: { 'service.name': 'cart', 'service.namespace': 'shop' } };
const scope = { name: 'http', version: '1.0.0' };

function span(
  name: string,
  resource: object,
  end: [number, number],
  start: [number, number] = [0, 0],
): ReadableSpan {
  return handBuiltSpan({
    name,
    kind: SpanKind.SERVER,
    spanContext: () => ({ traceId: TRACE_ID, spanId: '5a1a2d7fa7695d88', traceFlags: 1 }),
    startTime: start,
    endTime: end,
    status: { code: SpanStatusCode.UNSET },
    attributes: { 'http.route': `/${name}` },
    resource,
    instrumentationScope: scope,
  });
}

function logRecord(
  body: string,
  resource: object,
  hrTime: [number, number],
  hrTimeObserved: [number, number] = [1_900_000_000, 0],
): ReadableLogRecord {
  return {
    hrTime,
    hrTimeObserved,
    body,
    attributes: {},
    droppedAttributesCount: 0,
    resource,
    instrumentationScope: scope,
  } as unknown as ReadableLogRecord;
}

describe('splitByResource: an export in parts of one resource each', () => {
  test('spans of three resources, interleaved: parts in order of first appearance, items in order', () => {
    const other = { attributes: { 'service.name': 'checkout' } }; // equal to checkout, not the same object
    const spans = [
      span('a', checkout, [1, 0]),
      span('b', cart, [2, 0]),
      span('c', checkout, [3, 0]),
      span('d', other, [4, 0]),
      span('e', cart, [5, 0]),
    ];
    const parts = partsOf(tracesExport, spans);
    expect(parts.map((part) => part.map((s) => s.name))).toEqual([['a', 'c'], ['b', 'e'], ['d']]);
    expect(parts.map((part) => tracesExport.resourceAttributes(part))).toEqual([
      checkout.attributes,
      cart.attributes,
      other.attributes,
    ]);
    for (const format of ['otlp-json', 'otlp-proto'] as const) {
      expect(parts.map((part) => tallyOf(tracesExport, part, format).items)).toEqual([2, 2, 1]);
    }
  });

  test('log records likewise', () => {
    const records = [
      logRecord('a', cart, [1, 0]),
      logRecord('b', checkout, [2, 0]),
      logRecord('c', cart, [3, 0]),
    ];
    const parts = partsOf(logsExport, records);
    expect(parts.map((part) => part.map((r) => r.body))).toEqual([['a', 'c'], ['b']]);
    expect(parts.map((part) => logsExport.resourceAttributes(part))).toEqual([
      cart.attributes,
      checkout.attributes,
    ]);
  });

  test('an export of one resource is itself; an empty one has no parts; metrics are one part', () => {
    const spans = [span('a', cart, [1, 0]), span('b', cart, [2, 0])];
    const [only, ...rest] = partsOf(tracesExport, spans);
    expect(only).toBe(spans);
    expect(rest).toEqual([]);
    expect(partsOf(tracesExport, [])).toEqual([]);
    expect(partsOf(logsExport, [])).toEqual([]);
    const rm = {
      resource: cart,
      scopeMetrics: [{ scope: { name: 's' }, metrics: [{ dataPoints: [{}] }] }],
    } as unknown as ResourceMetrics;
    expect(partsOf(metricsExport, rm)).toEqual([rm]);
    expect(partsOf(metricsExport, rm)[0]).toBe(rm);
    // Nothing to write: no data points, in no metric or in no scope.
    const none = {
      resource: cart,
      scopeMetrics: [{ scope: { name: 's' }, metrics: [{ dataPoints: [] }] }],
    } as unknown as ResourceMetrics;
    expect(partsOf(metricsExport, none)).toEqual([]);
    expect(partsOf(metricsExport, { resource: cart, scopeMetrics: [] } as never)).toEqual([]);
  });

  test('each part encodes to one ResourceSpans of its resource', () => {
    const spans = [span('a', checkout, [1, 0]), span('b', cart, [2, 0])];
    for (const part of partsOf(tracesExport, spans)) {
      const decoded = traceReference.decodeProtobuf(
        tracesExport.records['otlp-proto'].encode(part),
      );
      expect(decoded).toEqual(traceReference.decodeProtobuf(officialSpans(part as ReadableSpan[])));
      expect((decoded as { resourceSpans: unknown[] }).resourceSpans).toHaveLength(1);
    }
  });
});

describe('the tally of an export: items and the oldest time, counted by the encoding walk', () => {
  test('spans: one item each, at the earliest end time (not the start)', () => {
    const spans = [
      span('a', cart, [1_700_000_005, 999_999_999], [1_600_000_000, 0]),
      span('b', cart, [1_700_000_003, 250_000_000], [1_600_000_000, 0]),
      span('c', cart, [1_700_000_004, 0]),
    ];
    for (const format of ['otlp-json', 'otlp-proto'] as const) {
      expect(tallyOf(tracesExport, spans, format)).toEqual({
        items: 3,
        times: true,
        oldestMillis: 1_700_000_003_250,
      });
      expect(tallyOf(tracesExport, [], format).oldestMillis).toBeUndefined();
    }
  });

  test('log records: the timestamp, or the observed time for a record without one', () => {
    const records = [
      logRecord('a', cart, [1_700_000_009, 0], [1_700_000_010, 0]),
      logRecord('b', cart, [0, 0], [1_700_000_002, 500_000_000]),
      logRecord('c', cart, [1_700_000_001, 0], [1_700_000_000, 0]),
    ];
    for (const format of ['otlp-json', 'otlp-proto'] as const) {
      // c's timestamp (1_700_000_001) is older than b's observed time; c's observed time is not used.
      expect(tallyOf(logsExport, records, format).oldestMillis).toBe(1_700_000_001_000);
      expect(tallyOf(logsExport, records.slice(0, 2), format)).toEqual({
        items: 2,
        times: true,
        oldestMillis: 1_700_000_002_500,
      });
      expect(tallyOf(logsExport, [], format).oldestMillis).toBeUndefined();
    }
  });

  test('without times asked for, only the items are counted', () => {
    const tally = newTally(false);
    tracesExport.records['otlp-json'].encode([span('a', cart, [1, 0])], tally);
    expect(tally).toEqual({ items: 1, times: false, oldestMillis: undefined });
  });
});

function officialSpans(spans: ReadableSpan[]): Uint8Array {
  return ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array();
}

function officialLogs(records: ReadableLogRecord[]): Uint8Array {
  return ProtobufLogsSerializer.serializeRequest(records) ?? new Uint8Array();
}

const noDecompression: DecodeContext = {
  decompress: () => {
    throw new Error('no compression here');
  },
  maxDecompressedBytes: 1 << 20,
};

describe('records join into one request, and the read rows decode it', () => {
  const first = [span('a', checkout, [1, 0]), span('b', cart, [2, 0])];
  const second = [span('c', checkout, [3, 0])];
  const all = [...first, ...second];

  test('spans, OTLP/JSON: records framed as one ExportTraceServiceRequest line', async () => {
    const format = tracesExport.records['otlp-json'];
    const records = [format.encode(first), format.encode(second)];
    const bytes = records.reduce((n, r) => n + r.length, 0);
    const object = format.assemble(records, bytes);
    expect(object.length).toBe(bytes + format.overhead(2));
    expect(object.toString('utf8').endsWith('}\n')).toBe(true);
    // The official serializer's one request of all spans has the same resources in the same
    // order only per export: compare with each export's resources, joined.
    const expected = [
      ...(traceReference.decodeProtobuf(officialSpans(first)) as { resourceSpans: unknown[] })
        .resourceSpans,
      ...(traceReference.decodeProtobuf(officialSpans(second)) as { resourceSpans: unknown[] })
        .resourceSpans,
    ];
    expect(traceReference.decodeJsonExact(object.toString('utf8'))).toEqual({
      resourceSpans: expected,
    });
    const read = await tracesRead.decoders['otlp-json'].decode(object, noDecompression);
    expect(read).toEqual(JSON.parse(object.toString('utf8')));
    expect(tracesExport.records.parquet).toBe(format); // Parquet's fallback, for now
    expect(all).toHaveLength(3);
  });

  test('spans, protobuf: records concatenate into one request; ids read back as hex', async () => {
    const format = tracesExport.records['otlp-proto'];
    const records = [format.encode(first), format.encode(second)];
    const object = format.assemble(records, (records[0]?.length ?? 0) + (records[1]?.length ?? 0));
    expect(traceReference.decodeProtobuf(object)).toEqual(
      traceReference.decodeProtobuf(Buffer.concat([officialSpans(first), officialSpans(second)])),
    );
    // Our reader gives what JSON.parse gives of the same records in OTLP/JSON.
    const json = tracesExport.records['otlp-json'];
    const jsonRecords = [json.encode(first), json.encode(second)];
    const jsonObject = json.assemble(
      jsonRecords,
      (jsonRecords[0]?.length ?? 0) + (jsonRecords[1]?.length ?? 0),
    );
    const read = await tracesRead.decoders['otlp-proto'].decode(object, noDecompression);
    expect(read).toEqual(JSON.parse(jsonObject.toString('utf8')));
    expect(JSON.stringify(read)).toContain(`"traceId":"${TRACE_ID}","spanId":"5a1a2d7fa7695d88"`);
  });

  test('log records, both formats', async () => {
    const a = [logRecord('x', cart, [1, 0])];
    const b = [logRecord('y', checkout, [2, 0])];
    const json = logsExport.records['otlp-json'];
    const jsonRecords = [json.encode(a), json.encode(b)];
    const jsonObject = json.assemble(
      jsonRecords,
      (jsonRecords[0]?.length ?? 0) + (jsonRecords[1]?.length ?? 0),
    );
    expect(logsReference.decodeJsonExact(jsonObject.toString('utf8'))).toEqual(
      logsReference.decodeProtobuf(Buffer.concat([officialLogs(a), officialLogs(b)])),
    );
    expect(await logsRead.decoders['otlp-json'].decode(jsonObject, noDecompression)).toEqual(
      JSON.parse(jsonObject.toString('utf8')),
    );
    const proto = logsExport.records['otlp-proto'];
    const protoRecords = [proto.encode(a), proto.encode(b)];
    const protoObject = proto.assemble(
      protoRecords,
      (protoRecords[0]?.length ?? 0) + (protoRecords[1]?.length ?? 0),
    );
    expect(logsReference.decodeProtobuf(protoObject)).toEqual(
      logsReference.decodeProtobuf(Buffer.concat([officialLogs(a), officialLogs(b)])),
    );
    expect(await logsRead.decoders['otlp-proto'].decode(protoObject, noDecompression)).toEqual(
      JSON.parse(jsonObject.toString('utf8')),
    );
  });

  test('a parent span id of all zeros (an invalid id some writers store for a root) reads as none', () => {
    const request = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { traceId: TRACE_ID, spanId: 'a'.repeat(16), parentSpanId: '0'.repeat(16) },
                { traceId: TRACE_ID, spanId: 'b'.repeat(16), parentSpanId: 'a'.repeat(16) },
              ],
            },
          ],
        },
      ],
    };
    expect(spanRows(request).map((r) => r.parentSpanId)).toEqual(['', 'a'.repeat(16)]);
  });

  test('a JSON object of another signal is no request of this one', async () => {
    await expect(
      Promise.resolve().then(() =>
        tracesRead.decoders['otlp-json'].decode(Buffer.from('[1]\n'), noDecompression),
      ),
    ).rejects.toThrow('the JSON line is not an ExportTraceServiceRequest object');
  });
});

describe('decodeOtlpProto on the official serializers’ bytes', () => {
  test('a string that starts with U+FEFF keeps it (no byte-order mark inside protobuf)', () => {
    const bom = span('\ufeffname', cart, [1, 0]);
    const decoded = decodeOtlpProto(officialSpans([bom]), 'ExportTraceServiceRequest');
    expect(JSON.stringify(decoded)).toContain('"name":"\ufeffname"');
  });
});
