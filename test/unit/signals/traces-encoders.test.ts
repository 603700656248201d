import {
  type Attributes,
  context,
  type Link,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import { decodeOtlpProto } from '../../../src/encoding/otlp-proto-decode.js';
import { spansToJson } from '../../../src/signals/traces/otlp-json.js';
import { spansToProto } from '../../../src/signals/traces/otlp-proto.js';
import {
  encodesAsTheOfficialOne as encodesAsTheOfficial,
  SPAN_ENCODERS,
} from '../../support/encoder-check.js';
import {
  PARENT_ID,
  remoteParentContext,
  SPAN_KINDS,
  TRACE_ID,
} from '../../support/trace-context.js';

const encodesAsTheOfficialOne = encodesAsTheOfficial(SPAN_ENCODERS);

describe('spans from a real TracerProvider', () => {
  test('two providers, three tracers, every kind, remote and local parents: the official message', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = (service: string) =>
      new TracerProvider({
        resource: resourceFromAttributes({
          'service.name': service,
          'service.version': '4.2.0',
          'host.name': 'node-1',
          'process.pid': 4242,
        }),
        spanProcessors: [new SimpleSpanProcessor({ exporter })],
      });
    const checkout = provider('checkout');
    const cart = provider('cart');
    const http = checkout.getTracer('http', '1.2.3', {
      schemaUrl: 'https://opentelemetry.io/schemas/1.28.0',
    });
    const db = checkout.getTracer('db');
    const cartHttp = cart.getTracer('http', '1.2.3');
    const remoteParent = remoteParentContext();
    const link: Link = {
      context: {
        traceId: 'ffffffffffffffffffffffffffffff00',
        spanId: '00000000000000ff',
        traceFlags: TraceFlags.NONE,
        isRemote: true,
      },
      attributes: { 'link.reason': 'retry', attempt: 2 },
    };
    const kinds = SPAN_KINDS;
    kinds.forEach((kind, i) => {
      // Alternate the providers, so one export mixes resources and scopes.
      const tracer = [http, cartHttp, db][i % 3] as typeof http;
      const server = tracer.startSpan(
        `op ${i}`,
        {
          kind,
          // API 1.9 types no maps or bytes: the object is what 1.10 allows.
          attributes: {
            'http.request.method': 'GET',
            'http.response.status_code': 200 + i,
            'url.full': 'https://example.com/a?b="c"',
            ratio: 0.25,
            big: 2 ** 60,
            nan: Number.NaN,
            flag: true,
            list: ['a', 'b'],
            // Kept by API 1.10's SDKs, dropped by 2.x's: either way as the official one writes.
            map: { nested: [1, 'x', { deep: null }] },
            bytes: new Uint8Array([1, 2, 255]),
          } as unknown as Attributes,
          links: i % 2 === 0 ? [link] : [],
        },
        i % 2 === 0 ? remoteParent : undefined,
      );
      server.addEvent('exception', { 'exception.message': 'boom\n"quoted"', count: i });
      server.setStatus(
        i % 3 === 0
          ? { code: SpanStatusCode.ERROR, message: 'failed: 💥' }
          : i % 3 === 1
            ? { code: SpanStatusCode.OK }
            : { code: SpanStatusCode.UNSET },
      );
      const child = tracer.startSpan('child', {}, trace.setSpan(context.active(), server));
      child.end();
      server.end();
    });
    const spans = exporter.getFinishedSpans(); // before shutdown, which forgets them
    expect(spans).toHaveLength(10);
    expect(new Set(spans.map((s) => s.resource)).size).toBe(2);
    encodesAsTheOfficialOne(spans);
    await Promise.all([checkout.shutdown(), cart.shutdown()]);
  });
});

describe('the OTLP/JSON spelling of spans', () => {
  /** One SERVER span under a remote sampled parent: values written out by hand from the spec. */
  function serverSpan(): ReadableSpan {
    const span = {
      name: 'GET /x',
      kind: SpanKind.SERVER,
      spanContext: () => ({
        traceId: TRACE_ID,
        spanId: '5a1a2d7fa7695d88',
        traceFlags: TraceFlags.SAMPLED,
      }),
      parentSpanContext: {
        traceId: TRACE_ID,
        spanId: PARENT_ID,
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
      },
      startTime: [1_700_000_000, 123_456_789],
      endTime: [1_700_000_001, 5],
      duration: [0, 0],
      ended: true,
      status: { code: SpanStatusCode.ERROR, message: 'boom' },
      attributes: {
        big: 2 ** 60,
        nan: Number.NaN,
        inf: Number.NEGATIVE_INFINITY,
        bytes: new Uint8Array([1, 2, 255]),
      },
      links: [],
      events: [],
      resource: { attributes: { 'service.name': 'x' } },
      instrumentationScope: { name: 's' },
      droppedAttributesCount: 0,
      droppedEventsCount: 3,
      droppedLinksCount: 0,
    };
    return span as unknown as ReadableSpan;
  }

  test('ids in lower-case hex, times as decimal strings, enums and flags as integers', () => {
    const json = spansToJson([serverSpan()]);
    expect(json).toContain(`"traceId":"${TRACE_ID}","spanId":"5a1a2d7fa7695d88"`);
    expect(json).toContain(`"parentSpanId":"${PARENT_ID}"`);
    // SERVER is 1 in the API, 2 in OTLP; flags: sampled | HAS_IS_REMOTE | IS_REMOTE.
    expect(json).toContain('"kind":2');
    expect(json).toContain('"flags":769');
    expect(json).toContain('"startTimeUnixNano":"1700000000123456789"');
    expect(json).toContain('"endTimeUnixNano":"1700000001000000005"');
    expect(json).toContain('"status":{"code":2,"message":"boom"}');
    expect(json).toContain('"droppedEventsCount":3');
  });

  test('int64 beyond 2^53 exact, NaN and infinities as strings, bytes in base64', () => {
    const json = spansToJson([serverSpan()]);
    expect(json).toContain('{"key":"big","value":{"intValue":"1152921504606846976"}}');
    expect(json).toContain('{"key":"nan","value":{"doubleValue":"NaN"}}');
    expect(json).toContain('{"key":"inf","value":{"doubleValue":"-Infinity"}}');
    expect(json).toContain('{"key":"bytes","value":{"bytesValue":"AQL/"}}');
  });

  test('an id in upper case is written in lower case, as its bytes', () => {
    const span = serverSpan();
    const upper = {
      ...span,
      spanContext: () => ({ ...span.spanContext(), traceId: TRACE_ID.toUpperCase() }),
    };
    expect(spansToJson([upper as ReadableSpan])).toContain(`"traceId":"${TRACE_ID}"`);
    expect(
      decodeOtlpProto(spansToProto([upper as ReadableSpan]), 'ExportTraceServiceRequest'),
    ).toEqual(decodeOtlpProto(spansToProto([span]), 'ExportTraceServiceRequest'));
  });
});
