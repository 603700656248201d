import type { OtlpObject } from '../../encoding/otlp-proto-decode.js';
import { int64Text, parallelElements, type RowItem } from '../flat-parquet/read.js';
import { flatRowsRequest } from '../flat-rows-request.js';
import { mapAttributes, type Row, text } from '../parquet-values.js';
import { SPAN_KIND_TEXT, SPANS, STATUS_CODE_TEXT } from './parquet-schema.js';

/**
 * Rows of the `otel_traces` table (Parquet objects of spans, or sealed columns that could not be
 * made one) as an ExportTraceServiceRequest in the OTLP/JSON object shape. What the table does
 * not keep reads back empty: span flags, dropped counts, scope attributes and schema URLs; every
 * attribute value is text (docs/parquet.md).
 */
export const spanRows = flatRowsRequest(
  SPANS,
  (row, late): RowItem => ({
    resourceKey: JSON.stringify(row.ResourceAttributes ?? null),
    resource: { resource: { attributes: mapAttributes(row.ResourceAttributes) } },
    scopeKey: JSON.stringify([row.ScopeName, row.ScopeVersion]),
    scope: { name: text(row.ScopeName), version: text(row.ScopeVersion) },
    item: span(row, late),
  }),
  { resources: 'resourceSpans', scopes: 'scopeSpans', items: 'spans' },
);

/** The columns of a span's events, and of its links: one element each per event (link). */
const EVENT_COLUMNS = ['Events.Timestamp', 'Events.Name', 'Events.Attributes'] as const;
const LINK_COLUMNS = [
  'Links.TraceId',
  'Links.SpanId',
  'Links.TraceState',
  'Links.Attributes',
] as const;

/**
 * A span's end, Timestamp + Duration. In the sealed columns of a late batch (no Parquet file was
 * made: its OTLP/JSON fallback) a Timestamp past INT64 reads as its uint64 and a Duration past
 * INT64 is its 64 bits: the end is their sum modulo 2^64.
 */
const endOf = (start: bigint, duration: bigint, late: boolean): bigint =>
  late ? BigInt.asUintN(64, start + duration) : start + duration;

/**
 * A SpanKind or StatusCode column's text as OTLP's number; '' (another writer's none) as 0. Any
 * other text (another writer's `'Later'`) stays as stored, for the span's row to show, never
 * taken for 'Unspecified' or 'Unset'.
 */
function enumNumber(texts: readonly string[], value: unknown): number | string {
  const stored = text(value);
  const i = texts.indexOf(stored);
  return i >= 0 ? i : stored === '' ? 0 : stored;
}

function span(row: Row, late: boolean): OtlpObject {
  const start = typeof row.Timestamp === 'bigint' ? row.Timestamp : 0n;
  const duration = typeof row.Duration === 'bigint' ? row.Duration : 0n;
  const span: OtlpObject = {
    traceId: text(row.TraceId),
    spanId: text(row.SpanId),
    name: text(row.SpanName),
    kind: enumNumber(SPAN_KIND_TEXT, row.SpanKind),
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(endOf(start, duration, late)),
    attributes: mapAttributes(row.SpanAttributes),
    status: {
      code: enumNumber(STATUS_CODE_TEXT, row.StatusCode),
      message: text(row.StatusMessage),
    },
  };
  if (text(row.ParentSpanId) !== '') span.parentSpanId = text(row.ParentSpanId);
  if (text(row.TraceState) !== '') span.traceState = text(row.TraceState);
  const [times, names, eventAttributes] = parallelElements(row, EVENT_COLUMNS);
  if (times.length > 0) {
    span.events = times.map((t, i) => ({
      timeUnixNano: int64Text(t),
      name: text(names[i]),
      attributes: mapAttributes(eventAttributes[i]),
    }));
  }
  const [traceIds, spanIds, states, linkAttributes] = parallelElements(row, LINK_COLUMNS);
  if (traceIds.length > 0) {
    span.links = traceIds.map((t, i) => {
      const link: OtlpObject = {
        traceId: text(t),
        spanId: text(spanIds[i]),
        attributes: mapAttributes(linkAttributes[i]),
      };
      if (text(states[i]) !== '') link.traceState = text(states[i]);
      return link;
    });
  }
  return span;
}

/** A stored Parquet object of spans back into its request. */
export const spansParquetToRequest = spanRows.parquetToRequest;
