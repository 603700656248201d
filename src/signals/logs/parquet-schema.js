// @ts-check
// The Parquet table of log records: the columns of the OpenTelemetry Collector ClickHouse
// exporter's `otel_logs` table, in its order and with its names, but for TimestampTime (a
// ClickHouse DEFAULT column: toDateTime(Timestamp)). Types and row order: docs/parquet.md.
// Changing a column means a new version.

/** @type {import('../flat-parquet/table.js').FlatSpec} */
export const LOG_RECORDS = {
  signal: 'log records',
  version: 'logs-1',
  lists: [],
  columns: [
    { name: 'Timestamp', kind: 'timestamp' },
    { name: 'TraceId', kind: 'text' },
    { name: 'SpanId', kind: 'text' },
    { name: 'TraceFlags', kind: 'int32' },
    { name: 'SeverityText', kind: 'string' },
    { name: 'SeverityNumber', kind: 'int32' },
    { name: 'ServiceName', kind: 'string' },
    { name: 'Body', kind: 'text' },
    { name: 'ResourceSchemaUrl', kind: 'string' },
    { name: 'ResourceAttributes', kind: 'map' },
    { name: 'ScopeSchemaUrl', kind: 'string' },
    { name: 'ScopeName', kind: 'string' },
    { name: 'ScopeVersion', kind: 'string' },
    { name: 'ScopeAttributes', kind: 'map' },
    { name: 'LogAttributes', kind: 'map' },
    { name: 'EventName', kind: 'string' },
  ],
  sort: ['ServiceName', 'TraceId', 'Timestamp'],
};

/** Column indices, by name (the appender's). */
export const LOG = /** @type {const} */ ({
  TIMESTAMP: 0,
  TRACE_ID: 1,
  SPAN_ID: 2,
  TRACE_FLAGS: 3,
  SEVERITY_TEXT: 4,
  SEVERITY_NUMBER: 5,
  SERVICE_NAME: 6,
  BODY: 7,
  RESOURCE_SCHEMA_URL: 8,
  RESOURCE_ATTRIBUTES: 9,
  SCOPE_SCHEMA_URL: 10,
  SCOPE_NAME: 11,
  SCOPE_VERSION: 12,
  SCOPE_ATTRIBUTES: 13,
  LOG_ATTRIBUTES: 14,
  EVENT_NAME: 15,
});
