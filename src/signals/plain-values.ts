import { MAX_NESTING_DEPTH } from '../encoding/check-request.js';
import type { OtlpObject, OtlpValue } from '../encoding/otlp-proto-decode.js';
import { isBase64, jsValueText, otlpValueText, standardBase64 } from '../parquet/attribute-text.js';

/**
 * What every signal's reader rows share (src/signals/<signal>/rows.ts): OTLP values as plain
 * JSON values, times as ISO 8601 text, and the readers of a decoded request's fields.
 */

export type PlainValue =
  | string
  | number
  | boolean
  | null
  | PlainValue[]
  | { [key: string]: PlainValue };

/** The field as an object; {} for anything else (a request from outside may hold anything). */
export const obj = (v: OtlpValue | undefined): OtlpObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {};
/** The field as a list; [] for anything else. */
export const list = (v: OtlpValue | undefined): OtlpValue[] => (Array.isArray(v) ? v : []);
/** The field as text; '' for anything else. */
export const str = (v: OtlpValue | undefined): string => (typeof v === 'string' ? v : '');

/**
 * A number field as OTLP/JSON spells it: a number, or a string (int64 and uint64 as decimals,
 * doubles as "NaN", "Infinity", "-Infinity"); undefined when absent. Exact up to 2^53.
 */
export function num(v: OtlpValue | undefined): number | undefined {
  if (typeof v === 'number') return v;
  // Only what OTLP/JSON writes: Number() would also take "0x10", "0b11" or spaces as numbers.
  if (typeof v === 'string' && NUMBER_TEXT.test(v)) return Number(v);
  return undefined;
}

/** A decimal number (integer or double, with an exponent), or a double's NaN or ±Infinity. */
const NUMBER_TEXT = /^(-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?|NaN|-?Infinity)$/;

/**
 * An enum field of a reader's row, as stored: a number as it is (an unknown 7, another writer's
 * 2.5 or -3 included), decimal text as its number, or a name as some OTLP/JSON writers spell it
 * (`SPAN_KIND_SERVER`) looked up in `names`; 0 (unspecified) when absent. Any other value (a
 * name not in `names`, `true`) is its own text: a row shows what was stored, never a made-up 0.
 */
export function enumOf(
  v: OtlpValue | undefined,
  names: Readonly<Record<string, number>>,
): number | string {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (/^-?\d{1,15}$/.test(v)) return Number(v);
    // Own names only: "constructor" or "__proto__" is no enum's name.
    return Object.hasOwn(names, v) ? (names[v] as number) : v;
  }
  return JSON.stringify(v);
}

/** A value as a message shows it: as JSON, but NaN and the infinities by name (JSON: null). */
const spelled = (value: unknown): string =>
  typeof value === 'number' && !Number.isFinite(value) ? String(value) : JSON.stringify(value);

/**
 * Thrown for a field of a decoded request whose value the field does not hold (a severity number
 * of 2.5 or 2^40, a count of -1 or 2^64): no row holds it as it is, so the request's input is
 * kept as it is, never compacted to something else (src/compact/).
 */
export class FieldValueError extends Error {
  constructor(field: string, value: unknown, allowed: string) {
    super(`${field} ${spelled(value)} is not ${allowed}`);
    this.name = 'FieldValueError';
  }
}

const INT32 = 'an int32: a whole number from -2^31 to 2^31 - 1';
/** What a uint64 field (a count) may hold. */
export const UINT64 = 'a uint64: a whole number from 0 to 2^64 - 1';

/** The integers a field holds, its bounds also as doubles (for the usual small value). */
interface Range {
  min: bigint;
  max: bigint;
  minNumber: number;
  maxNumber: number;
}

const range = (min: bigint, max: bigint): Range => ({
  min,
  max,
  minNumber: Number(min),
  maxNumber: Number(max),
});

const INT32_RANGE = range(-(2n ** 31n), 2n ** 31n - 1n);
const INT64_RANGE = range(-(2n ** 63n), 2n ** 63n - 1n);
const UINT32_RANGE = range(0n, 2n ** 32n - 1n);
const UINT64_RANGE = range(0n, 2n ** 64n - 1n);

/** A whole number (or its decimal text) a double holds exactly, else undefined. */
function smallWhole(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  return typeof v === 'string' && /^-?\d{1,15}$/.test(v) ? Number(v) : undefined;
}

/**
 * An integer as OTLP/JSON spells it (a number, or decimal text) in `r`: a number while a double
 * holds it exactly (no BigInt for the usual count or severity), else a bigint; undefined for
 * anything else or one outside `r`. Unset (absent or null) is the caller's.
 */
function whole(v: unknown, r: Range): number | bigint | undefined {
  const small = smallWhole(v);
  // Safe integers against the bounds as doubles: exact at this size.
  if (small !== undefined) return small >= r.minNumber && small <= r.maxNumber ? small : undefined;
  let n: bigint | undefined;
  if (typeof v === 'number' && Number.isInteger(v)) n = BigInt(v);
  else if (typeof v === 'string' && /^-?\d{1,30}$/.test(v)) n = BigInt(v);
  return n === undefined || n < r.min || n > r.max ? undefined : n;
}

/**
 * An integer field (see whole()), 0 when unset (absent or null); throws FieldValueError, naming
 * `field` and `allowed`, for anything else or one outside `r`.
 */
function wholeOf(v: unknown, field: string, r: Range, allowed: string): number | bigint {
  if (v === undefined || v === null) return 0;
  const n = whole(v, r);
  if (n === undefined) throw new FieldValueError(field, v, allowed);
  return n;
}

/** An int32 field (a scale, a bucket offset); 0 when unset. Throws FieldValueError. */
export const int32Field = (v: unknown, field: string): number =>
  Number(wholeOf(v, field, INT32_RANGE, INT32));

/** Whether int32Field() reads `v` without throwing. */
export const int32Ok = (v: unknown): boolean =>
  v === undefined || v === null || whole(v, INT32_RANGE) !== undefined;

/** A uint32 field (flags) of at most `max`; 0 when unset. Throws FieldValueError. */
export const uint32Field = (
  v: unknown,
  field: string,
  max = 2 ** 32 - 1,
  allowed = 'a uint32: a whole number from 0 to 2^32 - 1',
): number =>
  Number(wholeOf(v, field, max === 2 ** 32 - 1 ? UINT32_RANGE : range(0n, BigInt(max)), allowed));

/** An int64 or uint64 field: a number while exact, else a bigint. */
const exact = (n: number | bigint): number | bigint =>
  typeof n === 'number' ||
  (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER))
    ? Number(n)
    : n;

/** An int64 field (a value's asInt); 0 when unset. Throws FieldValueError. */
export const int64Field = (v: unknown, field: string): number | bigint =>
  exact(wholeOf(v, field, INT64_RANGE, 'an int64: a whole number from -2^63 to 2^63 - 1'));

/** A uint64 field (a count); 0 when unset. Throws FieldValueError. */
export const uint64Field = (v: unknown, field: string): number | bigint =>
  exact(wholeOf(v, field, UINT64_RANGE, UINT64));

/** Whether uint64Field() reads `v` without throwing. */
export const uint64Ok = (v: unknown): boolean =>
  v === undefined || v === null || whole(v, UINT64_RANGE) !== undefined;

/**
 * A double field as OTLP/JSON spells it (a number, decimal text, "NaN", "Infinity",
 * "-Infinity"); undefined when unset (absent or null) unless `required`. Throws FieldValueError
 * for anything else ("abc", "0x10", true), which no double is.
 */
export function doubleField(v: unknown, field: string, required = false): number | undefined {
  if ((v === undefined || v === null) && !required) return undefined;
  const n = typeof v === 'number' || typeof v === 'string' ? num(v) : undefined;
  if (n === undefined) {
    throw new FieldValueError(
      field,
      v,
      'a double: a number, or its decimal text, NaN or ±Infinity',
    );
  }
  return n;
}

/**
 * An enum field (an int32): its number, or its name (`SPAN_KIND_SERVER`) looked up in `names`;
 * 0 when unset. Throws FieldValueError for a number no int32 holds or a name not in `names`.
 */
export function enumField(
  v: unknown,
  names: Readonly<Record<string, number>>,
  field: string,
): number {
  if (typeof v === 'string' && !/^-?\d+$/.test(v)) {
    if (Object.hasOwn(names, v)) return names[v] as number;
    throw new FieldValueError(field, v, `${INT32}, or the name of one`);
  }
  return int32Field(v, field);
}

/** What an AnyValue's intValue (and a point's asInt) may hold: an int64 as OTLP/JSON spells it. */
export const INT64 = 'an int64: a whole number from -2^63 to 2^63 - 1, or its decimal text';
/** What an AnyValue's doubleValue may hold (as plain-values' doubleField and the points' say). */
const DOUBLE = 'a double: a number, or its decimal text, NaN or ±Infinity';
/** What an AnyValue's boolValue may hold: proto3's JSON mapping has no "true" text for a bool. */
const BOOL = 'a bool: true or false';
const STRING = 'a string';
/** What an AnyValue's bytesValue may hold: the encodings proto3's JSON mapping accepts. */
const BYTES = 'bytes: base64 text, standard or URL-safe, padded or not';

type ScalarField = 'intValue' | 'doubleValue' | 'boolValue' | 'stringValue' | 'bytesValue';

const ALLOWED: Record<ScalarField, string> = {
  intValue: INT64,
  doubleValue: DOUBLE,
  boolValue: BOOL,
  stringValue: STRING,
  bytesValue: BYTES,
};

/**
 * An AnyValue field that holds no value of its kind (an intValue of "abc", a boolValue of
 * "true"), on its way out of the value it is in: each level puts its key (`"k"`) or index
 * (`[2]`) in front, and the caller makes it a FieldValueError.
 */
class BadValue {
  readonly path: string[] = [];
  constructor(
    readonly field: ScalarField,
    readonly value: unknown,
  ) {}

  /** This, inside `part` (a key, an index) of the value it is in. */
  in(part: string): BadValue {
    this.path.unshift(part);
    return this;
  }

  /**
   * The FieldValueError, naming `what` and the path to the value: `attribute "k"."inner"[1]` for
   * a KeyValue list's (`ofList`), `body."k"[1]` for a value's.
   */
  error(what: string, ofList: boolean): FieldValueError {
    const path = this.path
      .map((p, i) => (p.startsWith('[') || (i === 0 && (ofList || what === '')) ? p : `.${p}`))
      .join('');
    const name = ofList && what !== '' ? `${what} ${path}` : `${what}${path}`;
    return new FieldValueError(
      name === '' ? this.field : `${name} ${this.field}`,
      this.value,
      ALLOWED[this.field],
    );
  }
}

/**
 * What each AnyValue field holds: its value (null, the field's default, is 0, false or ''), or
 * undefined for a value of another kind. The readers below throw BadValue for undefined;
 * badIn() finds the first such value of a whole value, building nothing for good ones.
 */
function intOf(v: OtlpValue | undefined): number | undefined {
  if (v === undefined || v === null) return 0;
  return int64Number(v);
}

/**
 * An int64 as proto3's JSON mapping spells it, as a number (exact up to 2^53), else undefined: a
 * whole number from -2^63 to 2^63 - 1 as decimal digits (`"-42"`, `"9007199254740993"`), or a
 * whole JSON number (`1e0` is 1). Not 1.5 or Infinity (1e999), nor text with a point or an
 * exponent (`"1.0"`, `"1e3"`), nor NaN: no int64 is one. A whole JSON number past the range
 * (1e+21) is read as it is: opentelemetry-js writes a JavaScript integer so, and refusing it
 * would refuse the whole object it is in.
 */
export function int64Number(v: OtlpValue | undefined): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  if (/^-?\d{1,15}$/.test(v)) return Number(v);
  if (!/^-?\d+$/.test(v)) return undefined;
  const n = BigInt(v);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? Number(v) : undefined;
}

const doubleOf = (v: OtlpValue | undefined): number | undefined =>
  v === undefined || v === null ? 0 : num(v);

const boolOk = (v: OtlpValue | undefined): boolean =>
  v === undefined || v === null || typeof v === 'boolean';

const stringOk = (v: OtlpValue | undefined): boolean =>
  v === undefined || v === null || typeof v === 'string';

/** Base64 text as standardBase64 takes it: standard or URL-safe, padded or not. */
const bytesOk = (v: OtlpValue | undefined): boolean =>
  v === undefined || v === null || (typeof v === 'string' && isBase64(v));

/** An intValue as a number; null (the field's default) is 0. Throws BadValue for no int64. */
function intNumber(v: OtlpValue | undefined): number {
  const n = intOf(v);
  if (n === undefined) throw new BadValue('intValue', v);
  return n;
}

/** A doubleValue as a number; null (the field's default) is 0. Throws BadValue for no double. */
function doubleNumber(v: OtlpValue | undefined): number {
  const n = doubleOf(v);
  if (n === undefined) throw new BadValue('doubleValue', v);
  return n;
}

/** A boolValue; null (the field's default) is false. Throws BadValue for anything but a bool. */
function boolOf(v: OtlpValue | undefined): boolean {
  if (!boolOk(v)) throw new BadValue('boolValue', v);
  return v === true;
}

/** A stringValue; null (the field's default) is ''. Throws BadValue for anything but text. */
function stringOf(v: OtlpValue | undefined): string {
  if (!stringOk(v)) throw new BadValue('stringValue', v);
  return typeof v === 'string' ? v : '';
}

/**
 * A bytesValue as standard padded base64 (standardBase64: "aG-_" and "aGk" read as "aG+/" and
 * "aGk=", as from protobuf); null (the field's default) is '' (no bytes). Throws BadValue for
 * anything but base64 text.
 */
function bytesText(v: OtlpValue | undefined): string {
  if (v === undefined || v === null) return '';
  const text = typeof v === 'string' ? standardBase64(v) : undefined;
  if (text === undefined) throw new BadValue('bytesValue', v);
  return text;
}

/**
 * An OTLP AnyValue as a plain JSON value (bytes as base64 text, an int64 past 2^53 as its decimal
 * text, an empty AnyValue as null). `what` names the value in an error (`body`).
 * Throws a RangeError for arrays or key-value lists nested deeper than MAX_NESTING_DEPTH (the
 * reader never yields such a request), rather than overflowing the stack; throws FieldValueError,
 * naming `what`, the path in it and the value, for a value of another kind (an intValue or
 * doubleValue of "abc", true or {}, an intValue of "NaN", a boolValue of "true", a stringValue
 * of 5, a bytesValue that is no base64 text), which the reader refuses as it decodes.
 */
export function anyValue(v: OtlpValue | undefined, what = ''): PlainValue {
  try {
    return plainValue(v, 0);
  } catch (error) {
    throw error instanceof BadValue ? (badIn(v, 0) ?? error).error(what, false) : error;
  }
}

/**
 * A KeyValue list as a plain object. Throws FieldValueError, naming `what` (`attribute`), the
 * key and the value, for a value of another kind (see anyValue).
 */
export function attributes(
  v: OtlpValue | undefined,
  what = 'attribute',
): Record<string, PlainValue> {
  try {
    return plainKeyValues(v, 0);
  } catch (error) {
    throw error instanceof BadValue ? (badInKeyValues(v, 0) ?? error).error(what, true) : error;
  }
}

/**
 * Checks the values of a KeyValue list as attributes() reads them, building nothing: throws
 * FieldValueError, naming `what`, the key and the value, for a value of another kind (see
 * anyValue). Values nested deeper than MAX_NESTING_DEPTH are left to requestProblem.
 */
export function checkAttributes(v: OtlpValue | undefined, what = 'attribute'): void {
  const bad = badInKeyValues(v, 0);
  if (bad !== undefined) throw bad.error(what, true);
}

/** Checks one AnyValue (a log record's body) as checkAttributes does a list. */
export function checkAnyValue(v: OtlpValue | undefined, what: string): void {
  const bad = badIn(v, 0);
  if (bad !== undefined) throw bad.error(what, false);
}

/**
 * The first value of another kind in an AnyValue (one plainValue would throw BadValue for), with
 * the path to it, or undefined: nothing is built for good values. Values nested deeper than
 * MAX_NESTING_DEPTH are left to requestProblem.
 */
function badIn(v: OtlpValue | undefined, depth: number): BadValue | undefined {
  if (depth > MAX_NESTING_DEPTH) return undefined;
  const o = obj(v);
  if ('stringValue' in o)
    return stringOk(o.stringValue) ? undefined : new BadValue('stringValue', o.stringValue);
  if ('boolValue' in o)
    return boolOk(o.boolValue) ? undefined : new BadValue('boolValue', o.boolValue);
  if ('intValue' in o)
    return intOf(o.intValue) !== undefined ? undefined : new BadValue('intValue', o.intValue);
  if ('doubleValue' in o) {
    const n = doubleOf(o.doubleValue);
    return n !== undefined ? undefined : new BadValue('doubleValue', o.doubleValue);
  }
  if ('arrayValue' in o) {
    const values = list(obj(o.arrayValue).values);
    for (let i = 0; i < values.length; i++) {
      const bad = badIn(values[i], depth + 1);
      if (bad !== undefined) return bad.in(`[${i}]`);
    }
    return undefined;
  }
  if ('kvlistValue' in o) return badInKeyValues(obj(o.kvlistValue).values, depth + 1);
  if ('bytesValue' in o)
    return bytesOk(o.bytesValue) ? undefined : new BadValue('bytesValue', o.bytesValue);
  return undefined;
}

/** The first value of another kind in a KeyValue list, with its key in front (see badIn). */
function badInKeyValues(v: OtlpValue | undefined, depth: number): BadValue | undefined {
  const kvs = list(v);
  for (let i = 0; i < kvs.length; i++) {
    const o = obj(kvs[i]);
    const bad = badIn(o.value, depth);
    if (bad !== undefined) return bad.in(JSON.stringify(str(o.key)));
  }
  return undefined;
}

/** Whether attributes() reads a KeyValue list without a FieldValueError (see checkAttributes). */
export const attributesOk = (v: OtlpValue | undefined): boolean =>
  badInKeyValues(v, 0) === undefined;

/** The value as a row holds it; throws BadValue, without its path, for a value of another kind. */
function plainValue(v: OtlpValue | undefined, depth: number): PlainValue {
  if (depth > MAX_NESTING_DEPTH) {
    throw new RangeError(`attribute value nested deeper than ${MAX_NESTING_DEPTH} levels`);
  }
  const o = obj(v);
  if ('stringValue' in o) return stringOf(o.stringValue);
  if ('boolValue' in o) return boolOf(o.boolValue);
  if ('intValue' in o) return int64(o.intValue);
  if ('doubleValue' in o) return doubleNumber(o.doubleValue);
  if ('arrayValue' in o) {
    return madeFrom(
      o,
      list(obj(o.arrayValue).values).map((x) => plainValue(x, depth + 1)),
    );
  }
  if ('kvlistValue' in o) return madeFrom(o, plainKeyValues(obj(o.kvlistValue).values, depth + 1));
  if ('bytesValue' in o) return bytesText(o.bytesValue);
  return null;
}

/**
 * An int64: a number when one holds it exactly, else its decimal text (`"9007199254740993"`, which
 * a number would make ...992). One written as a JSON number past 2^53 has lost its digits already.
 */
function int64(v: OtlpValue | undefined): PlainValue {
  // An int64 has no -0 (an intValue "-0" is 0): a -0 in a row is a double's, and spelled so.
  const n = intNumber(v) || 0;
  return typeof v === 'string' && /^-?\d+$/.test(v) && !Number.isSafeInteger(n)
    ? BigInt(v).toString()
    : n;
}

function plainKeyValues(v: OtlpValue | undefined, depth: number): Record<string, PlainValue> {
  const out: Record<string, PlainValue> = {};
  for (const kv of list(v)) {
    const o = obj(kv);
    // Defined, not assigned: a key "__proto__" is a key like any other, not the prototype.
    Object.defineProperty(out, str(o.key), {
      value: plainValue(o.value, depth),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * The OTLP AnyValue each list and map of a row was made from. A row cannot tell an integer past
 * 2^53 in a list from a string of its digits (both are the text), nor keep the int/double
 * distinction; valueText spells a list or map from its AnyValue, exactly as the Parquet tables
 * store it. Weak: it lives as long as the row's value does.
 */
const SOURCES = new WeakMap<object, OtlpObject>();

function madeFrom<T extends object>(source: OtlpObject, value: T): T {
  SOURCES.set(value, source);
  return value;
}

/**
 * A value as one line of text, as the Parquet tables store attribute values and bodies
 * (docs/parquet.md), the Collector's ClickHouse exporter's spelling (`AsString`): text as it is,
 * numbers in their shortest digits (`1e+21`, a double's `-0`, `NaN`, `Infinity`), lists and maps
 * as Go writes JSON (map keys sorted by their UTF-8 bytes, an integer past 2^53 a bare number,
 * NaN and infinities the JSON strings `"NaN"`...); '' for none. So a filter or a table finds and
 * shows a value alike in OTLP objects and in Parquet files, whose rows hold that text. A list or
 * map of a reader's row is spelled from the AnyValue it was made from; one made elsewhere as an
 * SDK attribute value would be (a string of digits in it stays a string).
 */
export function valueText(v: PlainValue | undefined): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const source = SOURCES.get(v);
  return (source === undefined ? jsValueText(v) : otlpValueText(source)) ?? '';
}

/** A resource's `service.name` as text ('' when it has none), as the rows' `service` gives it. */
export function serviceOf(resource: Record<string, PlainValue>): string {
  return valueText(resource['service.name']);
}

/** The last second a Date can hold: 8.64e15 ms after 1970. */
const MAX_DATE_SECONDS = 8_640_000_000_000n;

/**
 * An OTLP timestamp (decimal nanoseconds) as an ISO 8601 UTC time with nanoseconds; '' if unset.
 * Every uint64 (up to the year 2554) has one; past the last Date (year 275760) it throws a
 * RangeError naming the value.
 */
export function nanosToIso(nanos: string): string {
  if (!/^\d+$/.test(nanos) || /^0+$/.test(nanos)) return '';
  const ns = BigInt(nanos);
  const seconds = ns / 1_000_000_000n;
  if (seconds > MAX_DATE_SECONDS) {
    throw new RangeError(`timestamp ${nanos} ns is past the last date JavaScript can show`);
  }
  const iso = new Date(Number(seconds) * 1000).toISOString();
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${iso.slice(0, -5)}.${fraction}Z`;
}

/**
 * A time field (decimal text, or a number as OTLP/JSON also allows) as decimal nanoseconds;
 * '' when unset. A number past 2^53 has lost its last digits already: it gives what it holds.
 */
export function nanosText(v: OtlpValue | undefined): string {
  if (typeof v === 'number') return Number.isInteger(v) && v > 0 ? BigInt(v).toString() : '';
  return str(v);
}

/** Where an item of a request stands: its resource (attributes and service name) and scope name. */
export interface RowPlace {
  resource: Record<string, PlainValue>;
  service: string;
  scope: string;
}

/**
 * The one walk of a request's rows: every item under `resource<Kind>[].scope<Kind>[].<items>`
 * (`resourceSpans`, `scopeSpans`, `spans`; `resourceLogs`, `scopeLogs`, `logRecords`), made a
 * row with its place, in the request's order.
 */
export function requestRows<T>(
  resources: OtlpValue | undefined,
  scopesField: string,
  itemsField: string,
  row: (item: OtlpObject, place: RowPlace) => T,
): T[] {
  const rows: T[] = [];
  for (const resourceValue of list(resources)) {
    const group = obj(resourceValue);
    const resource = attributes(obj(group.resource).attributes, 'resource attribute');
    const service = serviceOf(resource);
    for (const scopeValue of list(group[scopesField])) {
      const scopeGroup = obj(scopeValue);
      const place = { resource, service, scope: str(obj(scopeGroup.scope).name) };
      for (const item of list(scopeGroup[itemsField])) rows.push(row(obj(item), place));
    }
  }
  return rows;
}

/**
 * A FieldValueError of an item (a data point's, a span's), its message put after `where`
 * (`metric "m"`, `span "op"`); any other error as it is.
 */
export function inItem(where: string, error: unknown): unknown {
  if (error instanceof FieldValueError) error.message = `${where}: ${error.message}`;
  return error;
}

/**
 * Checks the attribute values of every resource and scope of a decoded OTLP/JSON request, and
 * hands each item (`resource<Kind>[].scope<Kind>[].<items>`, as requestRows) to `item` to check
 * its own: throws FieldValueError for an AnyValue field of another kind (see anyValue), which a
 * row would otherwise show as 0, false or '' (the protobuf decoder and Parquet give values of
 * their kinds only).
 */
export function checkRequestValues(
  resources: OtlpValue | undefined,
  scopesField: string,
  itemsField: string,
  item: (item: OtlpObject) => void,
): void {
  for (const resourceValue of list(resources)) {
    const group = obj(resourceValue);
    checkAttributes(obj(group.resource).attributes, 'resource attribute');
    for (const scopeValue of list(group[scopesField])) {
      const scopeGroup = obj(scopeValue);
      checkAttributes(obj(scopeGroup.scope).attributes, 'scope attribute');
      for (const value of list(scopeGroup[itemsField])) item(obj(value));
    }
  }
}
