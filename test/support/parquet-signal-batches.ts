import fc from 'fast-check';
import type { LogRecordLike } from '../../src/signals/logs/log-record.js';
import type { SpanLike } from '../../src/signals/traces/span.js';
import { text } from './metrics-arbitraries.js';
import { sdkAttributes } from './parquet-batch-inputs.js';
import {
  anyDouble,
  attributeSet,
  type Kv,
  key,
  resourceAttributes,
  sdkInt,
  str,
} from './parquet-batches.js';
import { attributeEntries, dbl, type Entry, utf8Text } from './parquet-expected.js';
import { handBuiltSpan } from './readable-span.js';

/**
 * Batches of spans and of log records for the Parquet writer's property test, generated as a
 * model first (the SDK's objects are made from it), and the rows of the `otel_traces` and
 * `otel_logs` tables worked out from the same model by the rules docs/parquet.md states ("Spans
 * and log records"), never by the code under test. Rows are spelled canonically: timestamps
 * (nanoseconds) and other 64-bit integers as decimal strings, maps as [key, value] pairs.
 */

export type FlatRow = Record<string, unknown>;

// ---- the model -----------------------------------------------------------------------------

/** A log record's body: every AnyValue type, arrays and maps nested a few levels. */
export type Body =
  | { k: 'str'; v: string }
  | { k: 'int'; v: bigint }
  | { k: 'dbl'; v: number }
  | { k: 'bool'; v: boolean }
  | { k: 'bytes'; v: Uint8Array }
  | { k: 'array'; v: Body[] }
  | { k: 'map'; v: [string, Body][] }
  | { k: 'empty' };

interface SpanModel {
  traceId: string;
  spanId: string;
  parent: string | null;
  traceState: string;
  name: string;
  kind: number;
  code: number;
  message: string | null;
  start: bigint;
  duration: bigint;
  attributes: Kv[];
  events: { time: bigint; name: string; attributes: Kv[] }[];
  links: { traceId: string; spanId: string; traceState: string; attributes: Kv[] }[];
}
export interface SpanExport {
  resource: Kv[];
  scope: { name: string; version: string };
  spans: SpanModel[];
}

interface LogModel {
  time: bigint;
  observed: bigint;
  context: { traceId: string; spanId: string; flags: number } | null;
  severityText: string | null;
  severityNumber: number | null;
  body: Body | null | undefined;
  eventName: string | null;
  attributes: Kv[];
}
export interface LogExport {
  resource: Kv[];
  resourceSchemaUrl: string;
  scope: { name: string; version: string; schemaUrl: string; attributes: Kv[] };
  records: LogModel[];
}

const hex = (digits: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${digits}}$`));
/** A few shared trace ids (rows of one trace sort together), else random ones. */
const traceId = fc.oneof(
  fc.constantFrom(
    '0af7651916cd43dd8448eb211c80319c',
    '00000000000000000000000000000001',
    'ffffffffffffffffffffffffffffffff',
  ),
  hex(32),
);
const spanId = hex(16);
const traceState = fc.constantFrom('', 'rojo=00f067aa0ba902b7', 'a=1,b=2');
/** Nanoseconds within an HrTime's 2^32 seconds. */
const nanos = fc.bigInt({ min: 0n, max: 2n ** 32n * 1_000_000_000n - 1n });
/** 0..N items: mostly a few, now and then dozens. */
const items = <T>(item: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.array(item, { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.array(item, { minLength: 20, maxLength: 40 }) },
  );

const span: fc.Arbitrary<SpanModel> = fc.record({
  traceId,
  spanId,
  parent: fc.option(spanId),
  traceState,
  name: str,
  kind: fc.integer({ min: 0, max: 4 }),
  code: fc.integer({ min: 0, max: 2 }),
  message: fc.option(str),
  start: nanos,
  // Up to 2^53 ns (104 days): HrTime arithmetic in doubles is exact below that.
  duration: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 53n - 1n })),
  attributes: attributeSet(true),
  events: items(fc.record({ time: nanos, name: str, attributes: attributeSet(true) })),
  links: items(fc.record({ traceId, spanId, traceState, attributes: attributeSet(true) })),
});

/** A batch of spans: 1-3 exports, each of one resource and one scope. */
export const spanBatch: fc.Arbitrary<SpanExport[]> = fc.array(
  fc.record({
    resource: resourceAttributes(true),
    scope: fc.record({ name: str, version: text }),
    spans: fc.array(span, { minLength: 1, maxLength: 8 }),
  }),
  { minLength: 1, maxLength: 3 },
);

const scalarBody: fc.Arbitrary<Body> = fc.oneof(
  str.map((v) => ({ k: 'str' as const, v })),
  sdkInt.map((v) => ({ k: 'int' as const, v })),
  anyDouble.map((v) => ({ k: 'dbl' as const, v })),
  fc.boolean().map((v) => ({ k: 'bool' as const, v })),
  fc.uint8Array({ maxLength: 24 }).map((v) => ({ k: 'bytes' as const, v })),
  fc.constant({ k: 'empty' as const }),
);
const { body } = fc.letrec<{ body: Body }>((tie) => ({
  body: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'body' },
    { weight: 3, arbitrary: scalarBody },
    fc.array(tie('body'), { maxLength: 4 }).map((v) => ({ k: 'array' as const, v })),
    fc
      .array(fc.tuple(key, tie('body')), { maxLength: 4 })
      .map((v) => ({ k: 'map' as const, v: [...new Map(v)] })),
  ),
}));

const logRecord: fc.Arbitrary<LogModel> = fc.record({
  time: fc.oneof(nanos, fc.constant(0n)),
  observed: nanos,
  context: fc.option(fc.record({ traceId, spanId, flags: fc.nat(255) })),
  severityText: fc.option(str),
  severityNumber: fc.option(fc.integer({ min: 0, max: 24 })),
  body: fc.oneof(body, fc.constant(null), fc.constant(undefined)),
  eventName: fc.option(str),
  attributes: attributeSet(true),
});

/** A batch of log records: 1-3 exports, each of one resource and one scope. */
export const logBatch: fc.Arbitrary<LogExport[]> = fc.array(
  fc.record({
    resource: resourceAttributes(true),
    resourceSchemaUrl: text,
    scope: fc.record({
      name: str,
      version: text,
      schemaUrl: text,
      attributes: attributeSet(true),
    }),
    records: fc.array(logRecord, { minLength: 1, maxLength: 8 }),
  }),
  { minLength: 1, maxLength: 3 },
);

// ---- the SDK's objects -------------------------------------------------------------------------

const hrTime = (ns: bigint): [number, number] => [
  Number(ns / 1_000_000_000n),
  Number(ns % 1_000_000_000n),
];
const state = (s: string) => (s === '' ? undefined : { serialize: () => s });

/** The export's spans, as the SDK hands them over (one resource and scope object each). */
export function toSpans(e: SpanExport): SpanLike[] {
  const resource = { attributes: sdkAttributes(e.resource) };
  const scope = { ...e.scope };
  return e.spans.map((s) =>
    handBuiltSpan({
      name: s.name,
      kind: s.kind,
      spanContext: () => ({
        traceId: s.traceId,
        spanId: s.spanId,
        traceFlags: 1,
        traceState: state(s.traceState) as never,
      }),
      ...(s.parent === null
        ? {}
        : { parentSpanContext: { traceId: s.traceId, spanId: s.parent, traceFlags: 1 } }),
      startTime: hrTime(s.start),
      endTime: hrTime(s.start + s.duration),
      resource,
      instrumentationScope: scope,
      attributes: sdkAttributes(s.attributes),
      status: { code: s.code, ...(s.message === null ? {} : { message: s.message }) },
      events: s.events.map((v) => ({
        time: hrTime(v.time),
        name: v.name,
        attributes: sdkAttributes(v.attributes),
      })),
      links: s.links.map((l) => ({
        context: {
          traceId: l.traceId,
          spanId: l.spanId,
          traceFlags: 0,
          traceState: state(l.traceState),
        },
        attributes: sdkAttributes(l.attributes),
      })),
    }),
  ) as unknown as SpanLike[];
}

/** A body as the SDK's value: an integer a number, bytes a Uint8Array, a map an object. */
function sdkBody(b: Body): unknown {
  switch (b.k) {
    case 'int':
      return Number(b.v);
    case 'array':
      return b.v.map(sdkBody);
    case 'map':
      return Object.fromEntries(b.v.map(([k, v]) => [k, sdkBody(v)]));
    case 'empty':
      return undefined;
    default:
      return b.v;
  }
}

/** The export's log records, as the SDK hands them over (one resource and scope object each). */
export function toLogRecords(e: LogExport): LogRecordLike[] {
  const resource = { attributes: sdkAttributes(e.resource), schemaUrl: e.resourceSchemaUrl };
  const scope = { ...e.scope, attributes: sdkAttributes(e.scope.attributes) };
  return e.records.map((r) => ({
    resource,
    instrumentationScope: scope,
    hrTime: hrTime(r.time),
    hrTimeObserved: hrTime(r.observed),
    ...(r.context === null
      ? {}
      : {
          spanContext: {
            traceId: r.context.traceId,
            spanId: r.context.spanId,
            traceFlags: r.context.flags,
          },
        }),
    ...(r.severityText === null ? {} : { severityText: r.severityText }),
    ...(r.severityNumber === null ? {} : { severityNumber: r.severityNumber }),
    ...(r.body === undefined ? {} : { body: r.body === null ? null : sdkBody(r.body) }),
    ...(r.eventName === null ? {} : { eventName: r.eventName }),
    attributes: sdkAttributes(r.attributes),
    droppedAttributesCount: 0,
  }));
}

// ---- the rows the tables must hold -----------------------------------------------------------

/** Go's encoding/json string, HTML escaping off: U+2028 and U+2029 escaped, lone surrogates U+FFFD. */
function jsonString(s: string): string {
  let out = '"';
  for (const ch of utf8Text(s)) {
    const c = ch.codePointAt(0) as number;
    const named: Record<string, string> = {
      '"': '\\"',
      '\\': '\\\\',
      '\n': '\\n',
      '\r': '\\r',
      '\t': '\\t',
      '\b': '\\b',
      '\f': '\\f',
    };
    out +=
      named[ch] ??
      (c < 0x20 || c === 0x2028 || c === 0x2029 ? `\\u${c.toString(16).padStart(4, '0')}` : ch);
  }
  return `${out}"`;
}

/** Whether the SDK's number is written as an intValue: an integer an int64 holds. */
const isInt = (v: number) => Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63;
const base64 = (v: Uint8Array) => Buffer.from(v).toString('base64');

/** A body inside JSON (Go's AsRaw then encoding/json; a NaN or infinity as a string). */
function bodyJson(b: Body): string {
  switch (b.k) {
    case 'str':
      return jsonString(b.v);
    case 'int':
      return b.v.toString();
    case 'dbl':
      if (isInt(b.v)) return BigInt(b.v).toString();
      return Number.isFinite(b.v) ? dbl(b.v) : `"${b.v}"`;
    case 'bool':
      return String(b.v);
    case 'bytes':
      return `"${base64(b.v)}"`;
    case 'array':
      return `[${b.v.map(bodyJson).join(',')}]`;
    case 'map': {
      const keys = b.v.toSorted(([x], [y]) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      return `{${keys.map(([k, v]) => `${jsonString(k)}:${bodyJson(v)}`).join(',')}}`;
    }
    case 'empty':
      return 'null';
  }
}

/** A body's text (Go's AsString); '' for no body or an empty one. */
function bodyText(b: Body | null | undefined): string {
  if (b === null || b === undefined) return '';
  switch (b.k) {
    case 'str':
      return utf8Text(b.v);
    case 'dbl':
      return isInt(b.v) ? BigInt(b.v).toString() : dbl(b.v);
    case 'bytes':
      return base64(b.v);
    case 'empty':
      return '';
    case 'array':
    case 'map':
      return bodyJson(b);
    default:
      return String(b.v);
  }
}

const KINDS = ['Internal', 'Server', 'Client', 'Producer', 'Consumer'];
const CODES = ['Unset', 'Ok', 'Error'];
const service = (resource: Entry[]) => resource.findLast(([k]) => k === 'service.name')?.[1] ?? '';
const pairs = (kvs: Kv[]) => attributeEntries(kvs, true);

/** The otel_traces rows of a batch, in no particular order. */
export function expectedSpanRows(exports: SpanExport[]): FlatRow[] {
  return exports.flatMap((e) => {
    const resource = pairs(e.resource);
    return e.spans.map((s) => ({
      Timestamp: s.start.toString(),
      TraceId: s.traceId,
      SpanId: s.spanId,
      ParentSpanId: s.parent ?? '',
      TraceState: s.traceState,
      SpanName: utf8Text(s.name),
      SpanKind: KINDS[s.kind],
      ServiceName: service(resource),
      ResourceAttributes: resource,
      ScopeName: utf8Text(e.scope.name),
      ScopeVersion: utf8Text(e.scope.version),
      SpanAttributes: pairs(s.attributes),
      Duration: s.duration.toString(),
      StatusCode: CODES[s.code],
      StatusMessage: utf8Text(s.message ?? ''),
      'Events.Timestamp': s.events.map((v) => v.time.toString()),
      'Events.Name': s.events.map((v) => utf8Text(v.name)),
      'Events.Attributes': s.events.map((v) => pairs(v.attributes)),
      'Links.TraceId': s.links.map((l) => l.traceId),
      'Links.SpanId': s.links.map((l) => l.spanId),
      'Links.TraceState': s.links.map((l) => l.traceState),
      'Links.Attributes': s.links.map((l) => pairs(l.attributes)),
    }));
  });
}

/** The otel_logs rows of a batch, in no particular order. */
export function expectedLogRows(exports: LogExport[]): FlatRow[] {
  return exports.flatMap((e) => {
    const resource = pairs(e.resource);
    return e.records.map((r) => ({
      Timestamp: (r.time === 0n ? r.observed : r.time).toString(),
      TraceId: r.context?.traceId ?? '',
      SpanId: r.context?.spanId ?? '',
      TraceFlags: r.context?.flags ?? 0,
      SeverityText: utf8Text(r.severityText ?? ''),
      SeverityNumber: r.severityNumber ?? 0,
      ServiceName: service(resource),
      Body: bodyText(r.body),
      ResourceSchemaUrl: utf8Text(e.resourceSchemaUrl),
      ResourceAttributes: resource,
      ScopeSchemaUrl: utf8Text(e.scope.schemaUrl),
      ScopeName: utf8Text(e.scope.name),
      ScopeVersion: utf8Text(e.scope.version),
      ScopeAttributes: pairs(e.scope.attributes),
      LogAttributes: pairs(r.attributes),
      EventName: utf8Text(r.eventName ?? ''),
    }));
  });
}
