import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeOtlpProto } from '../../src/encoding/otlp-proto-decode.js';
import type { MessageName } from '../../src/encoding/otlp-schema.js';
import { logRecordsToJson } from '../../src/signals/logs/otlp-json.js';
import { logRecordsToProto } from '../../src/signals/logs/otlp-proto.js';
import { spansToJson } from '../../src/signals/traces/otlp-json.js';
import { spansToProto } from '../../src/signals/traces/otlp-proto.js';
import { checkProperty, fuzzRuns, sameMessageAs, sortedKeys } from './message-check.js';
import { logsReference, type ReferenceDecoders, traceReference } from './otlp-reference.js';
import { logRecords, spans } from './signal-arbitraries.js';

/** One signal's encoders under test, and the official serializer and decoders to check them by. */
export interface SignalEncoders<Item> {
  /** The official serializer (@opentelemetry/otlp-transformer): the request of `items`. */
  official(items: Item[]): Uint8Array | undefined;
  /** Our protobuf of one export. */
  toProto(items: Item[]): Uint8Array;
  /** Our JSON of one export: a record, which a request holds a list of. */
  toJson(items: Item[]): string;
  /** The request's list of records in OTLP/JSON, e.g. resourceSpans. */
  list: string;
  /** The request's message, for our own decoder. */
  message: MessageName;
  /** Google's protobuf runtime against the official .proto files. */
  reference: ReferenceDecoders;
  /** What the random test says it checks, e.g. "span encoders on random spans". */
  subject: string;
  /** The official serializer's name, for the random test's title. */
  serializer: string;
  /** Random exports, as the SDK could hand them over. */
  arbitrary: fc.Arbitrary<Item[]>;
}

/** The span encoders, checked against ProtobufTraceSerializer. */
export const SPAN_ENCODERS: SignalEncoders<ReadableSpan> = {
  official: (spans) => ProtobufTraceSerializer.serializeRequest(spans),
  toProto: spansToProto,
  toJson: spansToJson,
  list: 'resourceSpans',
  message: 'ExportTraceServiceRequest',
  reference: traceReference,
  subject: 'span encoders on random spans',
  serializer: 'ProtobufTraceSerializer',
  arbitrary: spans,
};

/** The log record encoders, checked against ProtobufLogsSerializer. */
export const LOG_RECORD_ENCODERS: SignalEncoders<ReadableLogRecord> = {
  official: (records) => ProtobufLogsSerializer.serializeRequest(records),
  toProto: logRecordsToProto,
  toJson: logRecordsToJson,
  list: 'resourceLogs',
  message: 'ExportLogsServiceRequest',
  reference: logsReference,
  subject: 'log record encoders on random records',
  serializer: 'ProtobufLogsSerializer',
  arbitrary: logRecords,
};

/**
 * A check that our protobuf and our JSON of `items` decode (by Google's protobuf runtime, against
 * the official .proto files) to the message of the official serializer; that our own decoder
 * reads our protobuf as JSON.parse reads our JSON; that encoding again (caches warm) gives the
 * same bytes; and that nothing is written of no items.
 */
export function encodesAsTheOfficialOne<Item>(
  encoders: SignalEncoders<Item>,
): (items: Item[]) => void {
  const { reference } = encoders;
  const ourJsonRequest = (items: Item[]) => `{"${encoders.list}":[${encoders.toJson(items)}]}`;
  return (items) => {
    const official = encoders.official(items);
    if (official === undefined) throw new Error('the official serializer wrote nothing');
    const expectSame = sameMessageAs(reference.decodeProtobuf(official));
    const proto = encoders.toProto(items);
    expectSame('our protobuf', reference.decodeProtobuf(proto));
    const json = ourJsonRequest(items);
    expectSame('our JSON, read at its written digits', reference.decodeJsonExact(json));
    expectSame('our JSON, read after JSON.parse', reference.decodeJsonParsed(json));
    if (items.length === 0) {
      // Nothing to write: no record (the exporter makes none of an empty export).
      expect(proto.length).toBe(0);
      expect(encoders.toJson(items)).toBe('');
      return;
    }
    sameMessageAs(sortedKeys(JSON.parse(json)), 'JSON.parse of our JSON')(
      'decodeOtlpProto of our protobuf',
      sortedKeys(decodeOtlpProto(proto, encoders.message)),
    );
    expect(Buffer.from(encoders.toProto(items)).equals(proto), 'protobuf encoded again').toBe(true);
    expect(ourJsonRequest(items), 'JSON encoded again').toBe(json);
  };
}

/**
 * A test of encodesAsTheOfficialOne(encoders) on FUZZ_RUNS (by default 400) random exports from
 * `encoders.arbitrary`; a failure names its replay (`testFile` is the calling file). 400 cases
 * reach the blocks of src/ that 1000 reach (V8 block coverage; see encoder-fuzz.test.ts for the
 * one exception), and a fresh seed each run keeps exploring.
 */
export function describeFuzzedEncoders<Item>(
  encoders: SignalEncoders<Item>,
  testFile: string,
): void {
  describe(`${encoders.subject}, decoded by an independent protobuf runtime`, () => {
    const runs = fuzzRuns(400);
    test(
      `our protobuf and JSON decode to the official ${encoders.serializer}'s message (${runs} cases)`,
      () => checkProperty(encoders.arbitrary, encodesAsTheOfficialOne(encoders), 400, testFile),
      Math.max(120_000, runs * 40),
    );
  });
}
