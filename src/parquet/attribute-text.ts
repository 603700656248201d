// Attribute values as text, as the OpenTelemetry Collector's ClickHouse exporter stores them: its
// pdata `pcommon.Value.AsString()` (collector pdata/pcommon/value.go). Strings as they are;
// booleans `true`/`false`; integers in decimal; doubles as Go's float64AsString spells them (the
// shortest round-trip digits, as JavaScript's String() does, but -0 as "-0", and NaN, Infinity,
// -Infinity); bytes in standard base64; arrays and maps as Go's encoding/json writes AsRaw() with
// HTML escaping off (map keys sorted by their UTF-8 bytes, a repeated key's last value kept).
// Two deliberate differences, documented in docs/parquet.md: an empty value is null (Go: ''),
// and a NaN or infinity inside an array or map is the JSON string "NaN" / "Infinity" /
// "-Infinity" (Go's JSON encoder fails there and AsString gives '' for the whole value).
// One function per input shape: the SDK's JavaScript values and OTLP/JSON AnyValue objects.

type Json = Record<string, unknown>;

/**
 * Deeper than this an attribute value is hostile (a cycle, or data made to exhaust the stack);
 * the reader refuses requests nested deeper too (MAX_NESTING_DEPTH in
 * src/encoding/check-request.ts).
 */
const MAX_DEPTH = 200;

const TWO_53 = 2 ** 53;
const TWO_63 = 2 ** 63;

/** Go's strconv.FormatFloat(f, 'f' or 'e', -1, 64) as float64AsString uses it. */
function goFloat(v: number): string {
  return Object.is(v, -0) ? '-0' : String(v); // NaN, Infinity, -Infinity as Go spells them
}

/** A double inside JSON: Go's encoder has no NaN or infinities; a string keeps them. */
function jsonFloat(v: number): string {
  return Number.isFinite(v) ? goFloat(v) : `"${v}"`;
}

/** An integer the JS SDK writes as an intValue (any integer an int64 holds), exactly. */
function jsInt(v: number): string {
  return Math.abs(v) < TWO_53 ? String(v) : BigInt(v).toString(); // String(-0) is '0'
}

/** Whether the JSON writer spells a number as an intValue (src/encoding/otlp-schema.ts isInt64). */
const isInt64 = (v: number): boolean => Number.isInteger(v) && v >= -TWO_63 && v < TWO_63;

const SEPARATORS = /[\u2028\u2029]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text without lone surrogates (what its UTF-8 encoding holds: U+FFFD). */
export const wellFormed = (s: string): string =>
  // isWellFormed (ES2024, every supported Node.js) answers without the regular expression's scan.
  (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    ? s
    : s.replace(LONE_SURROGATE, '\ufffd');

/** A JSON string as Go's encoding/json writes it without HTML escaping. */
function goString(s: string): string {
  // JSON.stringify escapes as Go does (\" \\ \b \f \n \r \t, other controls \u00xx) but for
  // U+2028 and U+2029, which Go escapes.
  return JSON.stringify(wellFormed(s)).replace(SEPARATORS, (c) =>
    c === '\u2028' ? '\\u2028' : '\\u2029',
  );
}

const utf8 = new TextEncoder();
/** Go sorts map keys as byte strings: UTF-8 order, not JavaScript's UTF-16 order. */
const byUtf8 = (a: string, b: string): number => Buffer.compare(utf8.encode(a), utf8.encode(b));

/** A JSON object of keys and already spelled values, as Go writes a map. */
function goObject(map: Map<string, string>): string {
  const keys = [...map.keys()].sort(byUtf8);
  return `{${keys.map((k) => `${goString(k)}:${map.get(k)}`).join(',')}}`;
}

function checkDepth(depth: number): void {
  if (depth > MAX_DEPTH) throw new RangeError(`attribute value nested deeper than ${MAX_DEPTH}`);
}

// ---- the SDK's values (what src/signals/metrics/otlp-json.ts writes for them) ----------------

/**
 * The text of an SDK attribute value; null for what OTLP holds as an empty value (null,
 * undefined, bigints, functions, symbols).
 */
export function jsValueText(value: unknown): string | null {
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return isInt64(value) ? jsInt(value) : goFloat(value);
    case 'object':
      if (value === null) return null;
      if (value instanceof Uint8Array) return base64(value);
      return jsJson(value, 0);
    default:
      return null;
  }
}

const base64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

function jsJson(value: unknown, depth: number): string {
  checkDepth(depth);
  switch (typeof value) {
    case 'string':
      return goString(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return isInt64(value) ? jsInt(value) : jsonFloat(value);
    case 'object': {
      if (value === null) return 'null';
      if (value instanceof Uint8Array) return `"${base64(value)}"`;
      if (Array.isArray(value))
        return `[${Array.from(value, (v) => jsJson(v, depth + 1)).join(',')}]`;
      const map = new Map<string, string>();
      const record = value as Json;
      for (const key of Object.keys(record)) map.set(key, jsJson(record[key], depth + 1));
      return goObject(map);
    }
    default:
      return 'null';
  }
}

// ---- OTLP/JSON AnyValue objects (decoded requests) --------------------------------------------

const obj = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** An int64 as OTLP/JSON spells it (a decimal string, or a number) in Go's decimal. */
function otlpInt(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? jsInt(v) : String(v);
  const s = str(v);
  try {
    return BigInt(s).toString();
  } catch {
    return s;
  }
}

/** A double as OTLP/JSON spells it: a number, or "NaN" / "Infinity" / "-Infinity". */
const otlpDouble = (v: unknown): number => (typeof v === 'number' ? v : Number(str(v)));

/** Base64 text in the alphabet `chars`: whole groups of 4, then 2 or 3 more with or without `=`. */
const base64In = (chars: string): string => `(?:${chars}{4})*(?:${chars}{2}(?:==)?|${chars}{3}=?)?`;
/** Base64 text, standard (`+/`) or URL-safe (`-_`, not both), with or without its padding. */
const BASE64_TEXT = new RegExp(`^(?:${base64In('[A-Za-z0-9+/]')}|${base64In('[A-Za-z0-9_-]')})$`);

/**
 * A bytesValue's text as standard padded base64, the one spelling of bytes in rows and tables (as
 * the protobuf decoder and the SDK's values give them): proto3's JSON mapping also accepts
 * URL-safe and unpadded text ("aG-_", "aGk" are "aG+/", "aGk="). Undefined for no base64 text.
 */
export function standardBase64(text: string): string | undefined {
  return isBase64(text) ? Buffer.from(text, 'base64').toString('base64') : undefined;
}

/** Whether `text` is base64 text standardBase64 takes. */
export const isBase64 = (text: string): boolean => BASE64_TEXT.test(text);

/** A bytesValue's text (standardBase64); text that is none as it is (the reader refuses it). */
const otlpBytes = (v: unknown): string => {
  const s = str(v);
  return standardBase64(s) ?? s;
};

/** The text of an OTLP/JSON AnyValue; null for an empty one. */
export function otlpValueText(value: unknown): string | null {
  const v = obj(value);
  if ('stringValue' in v) return str(v.stringValue);
  if ('boolValue' in v) return v.boolValue === true ? 'true' : 'false';
  if ('intValue' in v) return otlpInt(v.intValue);
  if ('doubleValue' in v) return goFloat(otlpDouble(v.doubleValue));
  if ('arrayValue' in v || 'kvlistValue' in v) return otlpJson(v, 0);
  if ('bytesValue' in v) return otlpBytes(v.bytesValue);
  return null;
}

/**
 * A KeyValue list of OTLP/JSON as its keys and their values' texts (otlpValueText; null: an
 * empty value), in the list's order.
 */
export function otlpKeyTexts(attributes: unknown): { keys: string[]; texts: (string | null)[] } {
  const items = list(attributes);
  const keys: string[] = new Array(items.length);
  const texts: (string | null)[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const kv = obj(items[i]);
    keys[i] = str(kv.key);
    texts[i] = otlpValueText(kv.value);
  }
  return { keys, texts };
}

function otlpJson(v: Json, depth: number): string {
  checkDepth(depth);
  if ('stringValue' in v) return goString(str(v.stringValue));
  if ('boolValue' in v) return v.boolValue === true ? 'true' : 'false';
  if ('intValue' in v) return otlpInt(v.intValue);
  if ('doubleValue' in v) return jsonFloat(otlpDouble(v.doubleValue));
  if ('arrayValue' in v) {
    const items = list(obj(v.arrayValue).values);
    return `[${items.map((item) => otlpJson(obj(item), depth + 1)).join(',')}]`;
  }
  if ('kvlistValue' in v) {
    const map = new Map<string, string>();
    for (const kv of list(obj(v.kvlistValue).values)) {
      map.set(str(obj(kv).key), otlpJson(obj(obj(kv).value), depth + 1));
    }
    return goObject(map);
  }
  if ('bytesValue' in v) return goString(otlpBytes(v.bytesValue));
  return 'null';
}
