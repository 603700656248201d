import type { AttributeMap } from './attribute-cache.js';
import { JsonWriter, SMALL_WRITER_CAPACITY, Spelling, spelling } from './json-writer.js';
import { checkDropped, isInt64 } from './otlp-schema.js';

const OPEN_KEY = spelling('{"key":');
const VALUE = spelling(',"value":');
const DROPPED_ATTRIBUTES_COUNT = spelling(',"droppedAttributesCount":');
const OPEN_STRING_VALUE = spelling('{"stringValue":');
const OPEN_INT_VALUE = spelling('{"intValue":');
const OPEN_DOUBLE_VALUE = spelling('{"doubleValue":');
const OPEN_BYTES_VALUE = spelling('{"bytesValue":"');
const CLOSE_BYTES = spelling('"}');
const OPEN_ARRAY_VALUE = spelling('{"arrayValue":{}}');
const OPEN_ARRAY_VALUE_VALUES = spelling('{"arrayValue":{"values":[');
const CLOSE_LIST = spelling(']}}');
const OPEN_KVLIST_VALUE = spelling('{"kvlistValue":{}}');
const OPEN_KVLIST_VALUE_VALUES = spelling('{"kvlistValue":{"values":[');
const EMPTY_VALUE = spelling('{}');
const TRUE_VALUE = spelling('{"boolValue":true}');
const FALSE_VALUE = spelling('{"boolValue":false}');
const ATTRIBUTES = spelling(',"attributes":[');

/**
 * Attribute values and log bodies (OTLP AnyValue) in OTLP/JSON, for every signal: chosen by type
 * in the official serializers' order; maps and arrays recursively as kvlistValue and arrayValue,
 * bytes in base64, integers an int64 holds as intValue (exact beyond 2^53, in quotes), other
 * numbers as doubleValue ("NaN" and the infinities as strings, as the protobuf JSON mapping
 * spells them; the official JSON serializer writes null and so loses them).
 */

const COMMA = 0x2c;

/** A key's spellings: `{"key":"<key>","value":`, and the same with `{"stringValue":` after it. */
class KeyHeads {
  constructor(
    readonly any: Spelling,
    readonly string: Spelling,
  ) {}
}

/**
 * The heads of each attribute key: the keys of a service's attributes are few and repeat in
 * every span and record. At most KEY_SPELLINGS keys are kept (the first ones seen), so keys
 * made of data cannot grow it without bound.
 */
const keySpellings = new Map<string, KeyHeads>();
const KEY_SPELLINGS = 4096;
const KEY_SPELLING_MAX_LENGTH = 256;
const keyWriter = new JsonWriter(SMALL_WRITER_CAPACITY);
const CLOSE_STRING_ATTRIBUTE = spelling('}}');

/** The heads of `key`, made and kept on its first use; undefined if it is not to be kept. */
function keyHeads(key: string): KeyHeads | undefined {
  const cached = keySpellings.get(key);
  if (cached !== undefined) return cached;
  if (keySpellings.size >= KEY_SPELLINGS || key.length > KEY_SPELLING_MAX_LENGTH) return undefined;
  const kw = keyWriter;
  kw.reset();
  kw.spell(OPEN_KEY);
  kw.string(key);
  kw.spell(VALUE);
  const any = kw.snapshot();
  const heads = new KeyHeads(
    new Spelling(any),
    new Spelling(Buffer.concat([any, Buffer.from('{"stringValue":', 'latin1')])),
  );
  keySpellings.set(key, heads);
  return heads;
}

/** `{"key":…,"value":…}` for each of `keys` of `map`, comma-separated. */
export function jsonKeyValues(w: JsonWriter, map: AttributeMap, keys: readonly string[]): void {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (i > 0) w.char(COMMA);
    keyValue(w, key, keyHeads(key), map[key]);
  }
}

/** One `{"key":…,"value":…}`, with the key's heads if it has them. */
function keyValue(w: JsonWriter, key: string, heads: KeyHeads | undefined, value: unknown): void {
  if (heads === undefined) {
    w.spell(OPEN_KEY);
    w.string(key);
    w.spell(VALUE);
  } else if (typeof value === 'string') {
    // The most common value, its head and tail written with the key's.
    w.spell(heads.string);
    w.string(value);
    w.spell(CLOSE_STRING_ATTRIBUTE);
    return;
  } else w.spell(heads.any);
  jsonAnyValue(w, value);
  w.char(0x7d);
}

/**
 * The keys of attribute objects, and their heads, as last seen per first key: the objects of one
 * kind (an HTTP server span's, its event's, a request's log record's) list the same keys in the
 * same order, so their heads come without a lookup each. At most KEY_SEQUENCES first keys, of
 * objects of up to KEY_SEQUENCE_MAX_KEYS keys.
 */
class KeySequence {
  constructor(
    readonly keys: string[],
    readonly heads: (KeyHeads | undefined)[],
  ) {}
}
const keySequences = new Map<string, KeySequence>();
const KEY_SEQUENCES = 1024;
const KEY_SEQUENCE_MAX_KEYS = 64;
/** The keys and heads of the object being written (one at a time: values hold no attributes field). */
const seenKeys: string[] = [];
const seenHeads: (KeyHeads | undefined)[] = [];
const hasOwn = Object.prototype.hasOwnProperty;

/**
 * `field` (`,"attributes":[`), the key-values of the own enumerable keys of `attrs` and `]`, as the
 * official serializers take them (Object.keys' keys in its order: for-in's, less what is
 * inherited); nothing when there are none (the list's default, which protobuf does not write
 * either).
 */
export function jsonAttributesField(
  w: JsonWriter,
  field: Spelling,
  attrs: AttributeMap | undefined,
): void {
  if (attrs === undefined || attrs === null) return;
  let sequence: KeySequence | undefined;
  let same = true;
  let n = 0;
  for (const key in attrs) {
    if (!hasOwn.call(attrs, key)) continue;
    if (n === 0) {
      w.spell(field);
      sequence = keySequences.get(key);
    } else w.char(COMMA);
    let heads: KeyHeads | undefined;
    if (same && sequence !== undefined && sequence.keys[n] === key) heads = sequence.heads[n];
    else {
      same = false;
      heads = keyHeads(key);
    }
    seenKeys[n] = key;
    seenHeads[n] = heads;
    keyValue(w, key, heads, attrs[key]);
    n++;
  }
  if (n === 0) return;
  w.char(0x5d);
  if (same && sequence !== undefined && sequence.keys.length === n) return;
  if (n > KEY_SEQUENCE_MAX_KEYS || (sequence === undefined && keySequences.size >= KEY_SEQUENCES)) {
    return;
  }
  keySequences.set(
    seenKeys[0] as string,
    new KeySequence(seenKeys.slice(0, n), seenHeads.slice(0, n)),
  );
}

/** `,"attributes":[…]` and `,"droppedAttributesCount":n`, each left out at its default. */
export function jsonAttributesOf(
  w: JsonWriter,
  attrs: AttributeMap | undefined,
  dropped: number | undefined,
): void {
  jsonAttributesField(w, ATTRIBUTES, attrs);
  checkDropped('a dropped attributes count', dropped);
  w.intUnlessZero(DROPPED_ATTRIBUTES_COUNT, dropped);
}

/** An AnyValue; an undefined or null value is the empty AnyValue `{}`, as the official serializers write it. */
export function jsonAnyValue(w: JsonWriter, value: unknown): void {
  switch (typeof value) {
    case 'string':
      w.spell(OPEN_STRING_VALUE);
      w.string(value);
      w.char(0x7d);
      return;
    case 'boolean':
      w.spell(value ? TRUE_VALUE : FALSE_VALUE);
      return;
    case 'number':
      if (isInt64(value)) {
        w.spell(OPEN_INT_VALUE);
        w.int(value);
      } else {
        w.spell(OPEN_DOUBLE_VALUE);
        w.double(value);
      }
      w.char(0x7d);
      return;
    case 'object':
      if (value === null) break;
      if (value instanceof Uint8Array) {
        w.spell(OPEN_BYTES_VALUE);
        w.raw(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'));
        w.spell(CLOSE_BYTES);
      } else if (Array.isArray(value)) {
        // An empty list is left out, as protobuf leaves it out: `{"arrayValue":{}}`.
        if (value.length === 0) {
          w.spell(OPEN_ARRAY_VALUE);
          return;
        }
        w.spell(OPEN_ARRAY_VALUE_VALUES);
        for (let i = 0; i < value.length; i++) {
          if (i > 0) w.char(COMMA);
          jsonAnyValue(w, value[i]);
        }
        w.spell(CLOSE_LIST);
      } else {
        const map = value as Record<string, unknown>;
        const keys = Object.keys(map);
        if (keys.length === 0) {
          w.spell(OPEN_KVLIST_VALUE);
          return;
        }
        w.spell(OPEN_KVLIST_VALUE_VALUES);
        jsonKeyValues(w, map, keys);
        w.spell(CLOSE_LIST);
      }
      return;
  }
  w.spell(EMPTY_VALUE); // null, undefined and what OTLP cannot hold (functions, symbols, bigints)
}
