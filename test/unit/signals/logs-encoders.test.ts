import { TraceFlags } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  type ReadableLogRecord,
  SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';
import { describe, expect, test } from 'vitest';
import { decodeOtlpProto } from '../../../src/encoding/otlp-proto-decode.js';
import { logRecordsToJson } from '../../../src/signals/logs/otlp-json.js';
import { logRecordsToProto } from '../../../src/signals/logs/otlp-proto.js';
import {
  encodesAsTheOfficialOne as encodesAsTheOfficial,
  LOG_RECORD_ENCODERS,
} from '../../support/encoder-check.js';
import { inSpanContext, PARENT_ID, TRACE_ID } from '../../support/trace-context.js';

const encodesAsTheOfficialOne = encodesAsTheOfficial(LOG_RECORD_ENCODERS);

/** OTLP's (and both API lines') severity numbers; the enum lives in @opentelemetry/api only from 1.10. */
const INFO = 9;
const WARN = 13;
const ERROR = 17;

describe('log records from a real LoggerProvider', () => {
  test('two providers, scopes with attributes, every body type, trace context: the official message', async () => {
    const exporter = new InMemoryLogRecordExporter();
    const provider = (service: string) =>
      new LoggerProvider({
        resource: resourceFromAttributes({ 'service.name': service, 'host.name': 'node-1' }),
        processors: [new SimpleLogRecordProcessor({ exporter })],
      });
    const api = provider('api');
    const worker = provider('worker');
    const loggers = [
      api.getLogger('app', '1.0.0', {
        schemaUrl: 'https://opentelemetry.io/schemas/1.28.0',
        attributes: { 'scope.tier': 'gold', 'scope.shard': 3 },
      }),
      worker.getLogger('jobs'),
      api.getLogger('audit', undefined, { attributes: { nested: { a: [1, 2] } } }),
    ];
    const inSpan = inSpanContext();
    const bodies: unknown[] = [
      'a plain message',
      'quotes " and \\ and \n and 😀 and \u2028',
      42,
      2 ** 60,
      -1.5,
      Number.NaN,
      true,
      new Uint8Array([0, 1, 2, 255]),
      ['a', 1, { b: null }],
      { message: 'structured', code: 7, tags: ['x'], raw: new Uint8Array([9]) },
      null,
      undefined,
    ];
    bodies.forEach((body, i) => {
      const logger = loggers[i % loggers.length] as (typeof loggers)[number];
      logger.emit({
        ...(body === undefined ? {} : { body: body as string }),
        severityNumber: [INFO, ERROR, undefined][i % 3],
        ...(i % 2 === 0 ? { severityText: i % 4 === 0 ? 'INFO' : 'ERROR' } : {}),
        ...(i % 3 === 0 ? { eventName: `event.${i}` } : {}),
        attributes: { 'log.index': i, 'http.route': '/orders/{id}', ok: i % 2 === 0 },
        ...(i % 2 === 0 ? { context: inSpan } : {}),
        ...(i % 4 === 1
          ? { timestamp: 1_700_000_000_123, observedTimestamp: [1_700_000_001, 5] }
          : {}),
      });
    });
    const records = exporter.getFinishedLogRecords();
    expect(records).toHaveLength(bodies.length);
    expect(new Set(records.map((r) => r.resource)).size).toBe(2);
    encodesAsTheOfficialOne(records);
    await Promise.all([api.shutdown(), worker.shutdown()]);
  });
});

describe('the OTLP/JSON spelling of log records', () => {
  function record(extra: Partial<Record<keyof ReadableLogRecord, unknown>>): ReadableLogRecord {
    return {
      hrTime: [1_700_000_002, 5],
      hrTimeObserved: [1_700_000_003, 0],
      attributes: {},
      droppedAttributesCount: 0,
      resource: { attributes: { 'service.name': 'x' } },
      instrumentationScope: { name: 's' },
      ...extra,
    } as unknown as ReadableLogRecord;
  }

  test('times as decimal strings, severity as an integer, ids in hex, flags from the context', () => {
    const json = logRecordsToJson([
      record({
        severityNumber: WARN,
        severityText: 'WARN',
        eventName: 'my.event',
        spanContext: { traceId: TRACE_ID, spanId: PARENT_ID, traceFlags: TraceFlags.SAMPLED },
      }),
    ]);
    expect(json).toContain(
      '"timeUnixNano":"1700000002000000005","observedTimeUnixNano":"1700000003000000000"',
    );
    expect(json).toContain('"severityNumber":13,"severityText":"WARN"');
    expect(json).toContain(`"flags":1,"traceId":"${TRACE_ID}","spanId":"${PARENT_ID}"`);
    expect(json).toContain('"eventName":"my.event"');
  });

  test('a body of every kind; none when the record has none, the empty value for null', () => {
    const body = (value: unknown) => logRecordsToJson([record({ body: value })]);
    expect(body('text')).toContain('"body":{"stringValue":"text"}');
    expect(body(new Uint8Array([1, 2, 255]))).toContain('"body":{"bytesValue":"AQL/"}');
    expect(body(2 ** 60)).toContain('"body":{"intValue":"1152921504606846976"}');
    expect(body(Number.POSITIVE_INFINITY)).toContain('"body":{"doubleValue":"Infinity"}');
    expect(body({ a: [true] })).toContain(
      '"body":{"kvlistValue":{"values":[{"key":"a","value":{"arrayValue":{"values":[{"boolValue":true}]}}}]}}',
    );
    expect(body(null)).toContain('"body":{}');
    expect(body(undefined)).not.toContain('"body"');
    const decoded = decodeOtlpProto(
      logRecordsToProto([record({ body: undefined })]),
      'ExportLogsServiceRequest',
    );
    expect(JSON.stringify(decoded)).not.toContain('"body"');
  });
});
