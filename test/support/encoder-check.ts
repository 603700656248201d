import { expect } from 'vitest';
import { decodeOtlpProto } from '../../src/encoding/otlp-proto-decode.js';
import type { MessageName } from '../../src/encoding/otlp-schema.js';
import { sameMessageAs, sortedKeys } from './message-check.js';
import type { ReferenceDecoders } from './otlp-reference.js';

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
}

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
