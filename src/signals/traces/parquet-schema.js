// @ts-check
// The Parquet table of spans: the columns of the OpenTelemetry Collector ClickHouse exporter's
// `otel_traces` table, in its order and with its names; the Nested `Events` and `Links` as the
// parallel list columns ClickHouse exposes them as. Types and row order: docs/parquet.md.
// Changing a column means a new version.

/** @type {import('../flat-parquet/table.js').FlatSpec} */
export const SPANS = {
  signal: 'spans',
  version: 'traces-1',
  lists: ['Events', 'Links'],
  columns: [
    { name: 'Timestamp', kind: 'timestamp' },
    { name: 'TraceId', kind: 'text' },
    { name: 'SpanId', kind: 'text' },
    { name: 'ParentSpanId', kind: 'text' },
    { name: 'TraceState', kind: 'string' },
    { name: 'SpanName', kind: 'string' },
    { name: 'SpanKind', kind: 'string' },
    { name: 'ServiceName', kind: 'string' },
    { name: 'ResourceAttributes', kind: 'map' },
    { name: 'ScopeName', kind: 'string' },
    { name: 'ScopeVersion', kind: 'string' },
    { name: 'SpanAttributes', kind: 'map' },
    { name: 'Duration', kind: 'int64' },
    { name: 'StatusCode', kind: 'string' },
    { name: 'StatusMessage', kind: 'string' },
    { name: 'Events.Timestamp', kind: 'timestamp', list: 0 },
    { name: 'Events.Name', kind: 'string', list: 0 },
    { name: 'Events.Attributes', kind: 'map', list: 0 },
    { name: 'Links.TraceId', kind: 'text', list: 1 },
    { name: 'Links.SpanId', kind: 'text', list: 1 },
    { name: 'Links.TraceState', kind: 'string', list: 1 },
    { name: 'Links.Attributes', kind: 'map', list: 1 },
  ],
  // A service's error spans together (first: 'Error' sorts before 'Ok' and 'Unset'), so that
  // the errors of one service are read from one stretch of an hour's file (docs/parquet.md).
  sort: ['ServiceName', 'StatusCode', 'TraceId', 'Timestamp'],
};

/** Column indices, by name (the appender's). */
export const SPAN = /** @type {const} */ ({
  TIMESTAMP: 0,
  TRACE_ID: 1,
  SPAN_ID: 2,
  PARENT_SPAN_ID: 3,
  TRACE_STATE: 4,
  SPAN_NAME: 5,
  SPAN_KIND: 6,
  SERVICE_NAME: 7,
  RESOURCE_ATTRIBUTES: 8,
  SCOPE_NAME: 9,
  SCOPE_VERSION: 10,
  SPAN_ATTRIBUTES: 11,
  DURATION: 12,
  STATUS_CODE: 13,
  STATUS_MESSAGE: 14,
  EVENT_TIMESTAMP: 15,
  EVENT_NAME: 16,
  EVENT_ATTRIBUTES: 17,
  LINK_TRACE_ID: 18,
  LINK_SPAN_ID: 19,
  LINK_TRACE_STATE: 20,
  LINK_ATTRIBUTES: 21,
});

/** List groups. */
export const EVENTS = 0;
export const LINKS = 1;

/** SpanKind as the ClickHouse exporter spells it, by OTLP's number (the API's plus one). */
export const SPAN_KIND_TEXT = /** @type {const} */ ([
  'Unspecified',
  'Internal',
  'Server',
  'Client',
  'Producer',
  'Consumer',
]);

/** StatusCode as the ClickHouse exporter spells it, by its number. */
export const STATUS_CODE_TEXT = /** @type {const} */ (['Unset', 'Ok', 'Error']);
