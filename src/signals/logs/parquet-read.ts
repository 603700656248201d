import type { OtlpObject } from '../../encoding/otlp-proto-decode.js';
import { int64Text, type RowItem } from '../flat-parquet/read.js';
import { flatRowsRequest } from '../flat-rows-request.js';
import { mapAttributes, type Row, text } from '../parquet-values.js';
import { LOG_RECORDS } from './parquet-schema.js';

/**
 * Rows of the `otel_logs` table (Parquet objects of log records, or sealed columns that could not
 * be made one) as an ExportLogsServiceRequest in the OTLP/JSON object shape. What the table does
 * not keep reads back empty: the observed time, dropped counts; the body and every attribute
 * value are text (docs/parquet.md).
 */
export const logRows = flatRowsRequest(
  LOG_RECORDS,
  (row): RowItem => ({
    resourceKey: JSON.stringify([row.ResourceSchemaUrl, row.ResourceAttributes ?? null]),
    resource: {
      resource: { attributes: mapAttributes(row.ResourceAttributes) },
      ...(text(row.ResourceSchemaUrl) === '' ? {} : { schemaUrl: text(row.ResourceSchemaUrl) }),
    },
    scopeKey: JSON.stringify([
      row.ScopeName,
      row.ScopeVersion,
      row.ScopeSchemaUrl,
      row.ScopeAttributes ?? null,
    ]),
    scope: {
      name: text(row.ScopeName),
      version: text(row.ScopeVersion),
      attributes: mapAttributes(row.ScopeAttributes),
      ...(text(row.ScopeSchemaUrl) === '' ? {} : { schemaUrl: text(row.ScopeSchemaUrl) }),
    },
    item: logRecord(row),
  }),
  { resources: 'resourceLogs', scopes: 'scopeLogs', items: 'logRecords' },
);

function logRecord(row: Row): OtlpObject {
  const record: OtlpObject = {
    timeUnixNano: int64Text(row.Timestamp),
    severityNumber: Number(row.SeverityNumber ?? 0),
    severityText: text(row.SeverityText),
    attributes: mapAttributes(row.LogAttributes),
    flags: Number(row.TraceFlags ?? 0),
  };
  if (text(row.Body) !== '') record.body = { stringValue: text(row.Body) };
  if (text(row.TraceId) !== '') record.traceId = text(row.TraceId);
  if (text(row.SpanId) !== '') record.spanId = text(row.SpanId);
  if (text(row.EventName) !== '') record.eventName = text(row.EventName);
  return record;
}

/** A stored Parquet object of log records back into its request. */
export const logsParquetToRequest = logRows.parquetToRequest;
