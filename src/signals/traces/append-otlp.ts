import { type OtlpRows, otlpNanos, otlpRows, otlpSet } from '../flat-append.js';
import { enumField, FieldValueError, list, obj, str } from '../plain-values.js';
import { EVENTS, LINKS, SPAN, SPAN_KIND_TEXT, STATUS_CODE_TEXT } from './parquet-schema.js';
import { KIND_NAMES, STATUS_NAMES } from './rows.js';

const FIELDS = { scopes: 'scopeSpans', items: 'spans' };

/**
 * An enum field (a span's kind, a status's code) as the column's text for its number; throws
 * FieldValueError for one the column has no text for (a kind of 9), which it cannot keep.
 */
function named(
  texts: readonly string[],
  v: unknown,
  names: Readonly<Record<string, number>>,
  field: string,
): string {
  const text = texts[enumField(v, names, field)];
  if (text === undefined) {
    throw new FieldValueError(field, v, `one of 0 to ${texts.length - 1} (${texts.join(', ')})`);
  }
  return text;
}

/**
 * The spans of decoded ExportTraceServiceRequests (the OTLP/JSON object shape, either stored
 * format) as rows of the `otel_traces` table, with the values appendSpans() writes for the SDK's
 * spans: the same row a span gets whether its service exported Parquet or OTLP. The compaction
 * reads OTLP objects of spans so.
 */
export const SPAN_REQUESTS: OtlpRows = otlpRows(
  'resourceSpans',
  FIELDS,
  (store, { scope, resourceSet, service }) => {
    const scopeName = str(scope.name);
    const scopeVersion = str(scope.version);
    return (span, r) => {
      const start = otlpNanos(span.startTimeUnixNano, 'startTimeUnixNano');
      const end = otlpNanos(span.endTimeUnixNano, 'endTimeUnixNano');
      const status = obj(span.status);
      store.int64Big(SPAN.TIMESTAMP, r, start);
      store.text(SPAN.TRACE_ID, r, str(span.traceId));
      store.text(SPAN.SPAN_ID, r, str(span.spanId));
      store.text(SPAN.PARENT_SPAN_ID, r, str(span.parentSpanId));
      store.string(SPAN.TRACE_STATE, r, str(span.traceState));
      store.string(SPAN.SPAN_NAME, r, str(span.name));
      store.string(SPAN.SPAN_KIND, r, named(SPAN_KIND_TEXT, span.kind, KIND_NAMES, 'kind'));
      store.string(SPAN.SERVICE_NAME, r, service);
      store.set(SPAN.RESOURCE_ATTRIBUTES, r, resourceSet);
      store.string(SPAN.SCOPE_NAME, r, scopeName);
      store.string(SPAN.SCOPE_VERSION, r, scopeVersion);
      store.set(SPAN.SPAN_ATTRIBUTES, r, otlpSet(store, span.attributes));
      store.int64Big(SPAN.DURATION, r, end - start); // signed, as recorded (parquet.ts)
      store.string(
        SPAN.STATUS_CODE,
        r,
        named(STATUS_CODE_TEXT, status.code, STATUS_NAMES, "a status's code"),
      );
      store.string(SPAN.STATUS_MESSAGE, r, str(status.message));
      for (const e of list(span.events)) {
        const event = obj(e);
        const i = store.addItem(EVENTS, r);
        store.int64Big(
          SPAN.EVENT_TIMESTAMP,
          i,
          otlpNanos(event.timeUnixNano, "an event's timeUnixNano"),
        );
        store.string(SPAN.EVENT_NAME, i, str(event.name));
        store.set(SPAN.EVENT_ATTRIBUTES, i, otlpSet(store, event.attributes));
      }
      for (const l of list(span.links)) {
        const link = obj(l);
        const i = store.addItem(LINKS, r);
        store.text(SPAN.LINK_TRACE_ID, i, str(link.traceId));
        store.text(SPAN.LINK_SPAN_ID, i, str(link.spanId));
        store.string(SPAN.LINK_TRACE_STATE, i, str(link.traceState));
        store.set(SPAN.LINK_ATTRIBUTES, i, otlpSet(store, link.attributes));
      }
    };
  },
);
