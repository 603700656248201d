import type { OtlpObject } from '../../encoding/otlp-proto-decode.js';
import {
  attributes,
  checkAttributes,
  checkRequestValues,
  enumOf,
  inItem,
  list,
  nanosText,
  nanosToIso,
  obj,
  type PlainValue,
  type RowPlace,
  requestRows,
  str,
} from '../plain-values.js';
import type { ScopedItemRow } from '../scoped-item-row.js';

/** What a span is in its trace, in the words of the API's SpanKind ('unspecified' for OTLP's 0). */
export type SpanKindName =
  | 'unspecified'
  | 'internal'
  | 'server'
  | 'client'
  | 'producer'
  | 'consumer';

/** A span's status code, in the words of the API's SpanStatusCode. */
export type SpanStatusName = 'unset' | 'ok' | 'error';

/** An event of a span. */
export interface SpanEventRow {
  /** ISO 8601 UTC with nanoseconds. */
  time: string;
  name: string;
  attributes: Record<string, PlainValue>;
}

/** A link from a span to another span (of this trace or another). */
export interface SpanLinkRow {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: Record<string, PlainValue>;
}

/**
 * One span, flattened with its resource and scope: the row of spanRows() and of `otel-s3 spans`
 * (each `--format jsonl` line is one, CSV has these columns).
 */
export interface SpanRow extends ScopedItemRow {
  /** The span's start, ISO 8601 UTC with nanoseconds (`2026-12-01T04:52:18.004000000Z`); '' if unset. */
  time: string;
  /** The span's end, as `time`. */
  end: string;
  /** end - start in milliseconds, to the nanosecond (`12.5`, `0.000321`); 0 when either is unset. */
  duration: number;
  /** 32 hex digits, as stored (lower case from this package's exporters). */
  traceId: string;
  /** 16 hex digits. */
  spanId: string;
  /** The parent's span id; '' for a root span. */
  parentSpanId: string;
  name: string;
  /** Another writer's kind outside SpanKind is its value as stored, as text (`'7'`). */
  kind: SpanKindName | (string & {});
  /** Another writer's code outside Status's is its value as stored, as text (`'5'`). */
  status: SpanStatusName | (string & {});
  statusMessage: string;
  events: SpanEventRow[];
  links: SpanLinkRow[];
  /** The W3C tracestate of the span's context ('' when empty). */
  traceState: string;
}

/** OTLP's SpanKind numbers (the API's plus one). */
export const SPAN_KINDS: readonly SpanKindName[] = [
  'unspecified',
  'internal',
  'server',
  'client',
  'producer',
  'consumer',
];
/** OTLP/JSON's names of the SpanKind numbers (`SPAN_KIND_SERVER`: 2). */
export const KIND_NAMES: Readonly<Record<string, number>> = Object.fromEntries(
  SPAN_KINDS.map((kind, i) => [`SPAN_KIND_${kind.toUpperCase()}`, i]),
);

/** OTLP's Status.code numbers. */
export const SPAN_STATUSES: readonly SpanStatusName[] = ['unset', 'ok', 'error'];
/** OTLP/JSON's names of the Status.code numbers (`STATUS_CODE_ERROR`: 2). */
export const STATUS_NAMES: Readonly<Record<string, number>> = Object.fromEntries(
  SPAN_STATUSES.map((status, i) => [`STATUS_CODE_${status.toUpperCase()}`, i]),
);

/**
 * Every span of an ExportTraceServiceRequest (in the OTLP/JSON object shape, whatever the stored
 * format), flattened: the rows `otel-s3 spans` prints, in the request's order.
 */
export function spanRows(request: OtlpObject): SpanRow[] {
  return requestRows(request.resourceSpans, 'scopeSpans', 'spans', (span, place) => {
    try {
      return spanRow(span, place);
    } catch (error) {
      throw inItem(spanName(span), error);
    }
  });
}

/** A span as an error names it. */
const spanName = (span: OtlpObject): string => `span ${JSON.stringify(str(span.name))}`;
/** What an error calls an attribute of an event. */
const eventAttribute = (event: OtlpObject): string =>
  `event ${JSON.stringify(str(event.name))} attribute`;

/**
 * Checks the attribute values of a decoded OTLP/JSON ExportTraceServiceRequest (resources,
 * scopes, spans, events, links) as spanRows() reads them: throws FieldValueError, naming the
 * span, the attribute and the value, for an intValue or doubleValue that holds no number.
 */
export function checkSpanValues(request: OtlpObject): void {
  checkRequestValues(request.resourceSpans, 'scopeSpans', 'spans', (span) => {
    try {
      checkAttributes(span.attributes);
      for (const event of list(span.events)) {
        checkAttributes(obj(event).attributes, eventAttribute(obj(event)));
      }
      for (const link of list(span.links)) checkAttributes(obj(link).attributes, 'link attribute');
    } catch (error) {
      throw inItem(spanName(span), error);
    }
  });
}

/**
 * An enum's word for a value of the enum; any other value stored (another writer's kind 7, a
 * status code 2.5, a name of no value) as its own text (`'7'`), never taken for one of the words.
 */
function named<Name extends string>(words: readonly Name[], value: number | string): Name | string {
  const word = typeof value === 'number' && Number.isInteger(value) ? words[value] : undefined;
  return word ?? String(value);
}

/** A parent span id; '' for none, and for all zeros: an invalid id, which some writers store for a root. */
const parentSpanId = (id: string): string => (/^0+$/.test(id) ? '' : id);

function spanRow(span: OtlpObject, { resource, service, scope }: RowPlace): SpanRow {
  const start = nanosText(span.startTimeUnixNano);
  const end = nanosText(span.endTimeUnixNano);
  const status = obj(span.status);
  return {
    time: nanosToIso(start),
    end: nanosToIso(end),
    duration: durationMillis(start, end),
    traceId: str(span.traceId),
    spanId: str(span.spanId),
    parentSpanId: parentSpanId(str(span.parentSpanId)),
    name: str(span.name),
    kind: named(SPAN_KINDS, enumOf(span.kind, KIND_NAMES)),
    status: named(SPAN_STATUSES, enumOf(status.code, STATUS_NAMES)),
    statusMessage: str(status.message),
    service,
    resource,
    scope,
    attributes: attributes(span.attributes),
    events: list(span.events).map((value) => {
      const event = obj(value);
      return {
        time: nanosToIso(nanosText(event.timeUnixNano)),
        name: str(event.name),
        attributes: attributes(event.attributes, eventAttribute(event)),
      };
    }),
    links: list(span.links).map((value) => {
      const link = obj(value);
      return {
        traceId: str(link.traceId),
        spanId: str(link.spanId),
        traceState: str(link.traceState),
        attributes: attributes(link.attributes, 'link attribute'),
      };
    }),
    traceState: str(span.traceState),
  };
}

/**
 * Milliseconds from `start` to `end` (decimal nanoseconds), to the nanosecond; 0 when either is
 * unset. Negative when the span ended before it started, as recorded.
 */
export function durationMillis(start: string, end: string): number {
  if (!isNanos(start) || !isNanos(end)) return 0;
  // Both exact below 2^53 ns (104 days), and IEEE division rounds once: the nearest double to
  // the exact decimal, which prints as that decimal.
  return Number(BigInt(end) - BigInt(start)) / 1e6;
}

const isNanos = (text: string) => /^\d+$/.test(text) && !/^0+$/.test(text);
