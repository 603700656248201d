import { type AttributeMap, ownKeys } from './attribute-cache.js';
import { checkDropped, FIELD, isInt64 } from './otlp-schema.js';
import type { ProtoWriter } from './proto-writer.js';

/**
 * Attribute values and log bodies (OTLP AnyValue) in protobuf, for every signal: chosen by type
 * in the official serializers' order (see any-value-json.ts for the rules).
 */

const F = FIELD;

/** A KeyValue message in field `field` (its key written even when empty, as the official serializers do). */
export function protoKeyValue(w: ProtoWriter, field: number, key: string, value: unknown): void {
  w.fork(field);
  w.string(F.KeyValue.key, key, true);
  protoAnyValue(w, F.KeyValue.value, value);
  w.join();
}

/** One KeyValue in field `field` for each own enumerable key of `attrs`, as the official serializers take them. */
export function protoAttributes(
  w: ProtoWriter,
  field: number,
  attrs: AttributeMap | undefined,
): void {
  for (const key of ownKeys(attrs)) protoKeyValue(w, field, key, (attrs as AttributeMap)[key]);
}

/** The field numbers of a message's attributes and dropped attributes count (one shape for all). */
export interface AttributeFields {
  readonly attributes: number;
  readonly dropped: number;
}

export function attributeFields(M: {
  readonly attributes: number;
  readonly droppedAttributesCount: number;
}): AttributeFields {
  return { attributes: M.attributes, dropped: M.droppedAttributesCount };
}

/** Attributes and their dropped count, in `fields`; the count left out at 0. */
export function protoAttributesOf(
  w: ProtoWriter,
  fields: AttributeFields,
  attrs: AttributeMap | undefined,
  dropped: number | undefined,
): void {
  if (attrs !== undefined && attrs !== null) {
    const field = fields.attributes;
    for (const key of Object.keys(attrs)) protoKeyValue(w, field, key, attrs[key]);
  }
  checkDropped('a dropped attributes count', dropped);
  if (dropped) w.uint(fields.dropped, dropped);
}

/** An AnyValue message in field `field`; empty for undefined, null and what OTLP cannot hold. */
export function protoAnyValue(w: ProtoWriter, field: number, value: unknown): void {
  // AnyValue is a oneof: its member is written even when it holds the default value.
  const A = F.AnyValue;
  w.fork(field);
  switch (typeof value) {
    case 'string':
      w.string(A.stringValue, value, true);
      break;
    case 'boolean':
      w.bool(A.boolValue, value, true);
      break;
    case 'number':
      if (isInt64(value)) w.int64(A.intValue, value, true);
      else w.double(A.doubleValue, value);
      break;
    case 'object':
      if (value === null) break;
      if (value instanceof Uint8Array) w.bytes(A.bytesValue, value, true);
      else if (Array.isArray(value)) {
        w.fork(A.arrayValue);
        for (const item of value) protoAnyValue(w, F.ArrayValue.values, item);
        w.join();
      } else {
        const map = value as Record<string, unknown>;
        w.fork(A.kvlistValue);
        for (const key of Object.keys(map)) protoKeyValue(w, F.KeyValueList.values, key, map[key]);
        w.join();
      }
  }
  w.join();
}
