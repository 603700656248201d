import { type AttributeMap, ownKeys } from './attribute-cache.js';
import { JsonWriter, SMALL_WRITER_CAPACITY } from './json-writer.js';
import { isInt64 } from './otlp-schema.js';

/**
 * Attribute values and log bodies (OTLP AnyValue) in OTLP/JSON, for every signal: chosen by type
 * in the official serializers' order; maps and arrays recursively as kvlistValue and arrayValue,
 * bytes in base64, integers an int64 holds as intValue (exact beyond 2^53, in quotes), other
 * numbers as doubleValue ("NaN" and the infinities as strings, as the protobuf JSON mapping
 * spells them; the official JSON serializer writes null and so loses them).
 */

const COMMA = 0x2c;

/**
 * `{"key":"<key>","value":` per attribute key: the keys of a service's attributes are few and
 * repeat in every span and record. At most KEY_SPELLINGS keys are kept (the first ones seen),
 * so keys made of data cannot grow it without bound.
 */
const keySpellings = new Map<string, Buffer>();
const KEY_SPELLINGS = 4096;
const KEY_SPELLING_MAX_LENGTH = 256;
const keyWriter = new JsonWriter(SMALL_WRITER_CAPACITY);

function keyHead(w: JsonWriter, key: string): void {
  const cached = keySpellings.get(key);
  if (cached !== undefined) {
    w.bytes(cached);
    return;
  }
  if (keySpellings.size >= KEY_SPELLINGS || key.length > KEY_SPELLING_MAX_LENGTH) {
    w.raw('{"key":');
    w.string(key);
    w.raw(',"value":');
    return;
  }
  const kw = keyWriter;
  kw.reset();
  kw.raw('{"key":');
  kw.string(key);
  kw.raw(',"value":');
  const spelling = kw.snapshot();
  keySpellings.set(key, spelling);
  w.bytes(spelling);
}

/** `{"key":…,"value":…}` for each of `keys` of `map`, comma-separated. */
export function jsonKeyValues(w: JsonWriter, map: AttributeMap, keys: readonly string[]): void {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (i > 0) w.char(COMMA);
    keyHead(w, key);
    jsonAnyValue(w, map[key]);
    w.char(0x7d);
  }
}

/**
 * `,"<field>":[…]` with the own enumerable keys of `attrs`, as the official serializers take
 * them; nothing when there are none (the list's default, which protobuf does not write either).
 */
export function jsonAttributesField(
  w: JsonWriter,
  field: string,
  attrs: AttributeMap | undefined,
): void {
  const keys = ownKeys(attrs);
  if (keys.length === 0) return;
  w.raw(field);
  w.char(0x5b);
  jsonKeyValues(w, attrs as AttributeMap, keys); // keys only an object has
  w.char(0x5d);
}

/** `,"attributes":[…]` and `,"droppedAttributesCount":n`, each left out at its default. */
export function jsonAttributesOf(
  w: JsonWriter,
  attrs: AttributeMap | undefined,
  dropped: number | undefined,
): void {
  jsonAttributesField(w, ',"attributes":', attrs);
  w.intUnlessZero(',"droppedAttributesCount":', dropped);
}

/** An AnyValue; an undefined or null value is the empty AnyValue `{}`, as the official serializers write it. */
export function jsonAnyValue(w: JsonWriter, value: unknown): void {
  switch (typeof value) {
    case 'string':
      w.raw('{"stringValue":');
      w.string(value);
      w.char(0x7d);
      return;
    case 'boolean':
      w.raw(value ? '{"boolValue":true}' : '{"boolValue":false}');
      return;
    case 'number':
      if (isInt64(value)) {
        w.raw('{"intValue":');
        w.int(value);
      } else {
        w.raw('{"doubleValue":');
        w.double(value);
      }
      w.char(0x7d);
      return;
    case 'object':
      if (value === null) break;
      if (value instanceof Uint8Array) {
        w.raw('{"bytesValue":"');
        w.raw(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'));
        w.raw('"}');
      } else if (Array.isArray(value)) {
        // An empty list is left out, as protobuf leaves it out: `{"arrayValue":{}}`.
        if (value.length === 0) {
          w.raw('{"arrayValue":{}}');
          return;
        }
        w.raw('{"arrayValue":{"values":[');
        for (let i = 0; i < value.length; i++) {
          if (i > 0) w.char(COMMA);
          jsonAnyValue(w, value[i]);
        }
        w.raw(']}}');
      } else {
        const map = value as Record<string, unknown>;
        const keys = Object.keys(map);
        if (keys.length === 0) {
          w.raw('{"kvlistValue":{}}');
          return;
        }
        w.raw('{"kvlistValue":{"values":[');
        jsonKeyValues(w, map, keys);
        w.raw(']}}');
      }
      return;
  }
  w.raw('{}'); // null, undefined and what OTLP cannot hold (functions, symbols, bigints)
}
