import { otlpValueText } from '../../parquet/attribute-text.js';
import { type OtlpRows, otlpNanos, otlpRows, otlpSet } from '../flat-append.js';
import { enumField, str, uint32Field } from '../plain-values.js';
import { LOG } from './parquet-schema.js';
import { SEVERITY_NUMBERS } from './rows.js';

const FIELDS = { scopes: 'scopeLogs', items: 'logRecords' };

/** What a log record's flags may be: its trace flags, bits 8-31 reserved (zero). */
export const TRACE_FLAGS = 'trace flags: a whole number from 0 to 255 (bits 8-31 are reserved)';

/**
 * The log records of decoded ExportLogsServiceRequests (the OTLP/JSON object shape, either
 * stored format) as rows of the `otel_logs` table, with the values appendLogRecords() writes for
 * the SDK's records: the record's time, or its observed time when it has none; the body and
 * attribute values as text. The compaction reads OTLP objects of log records so. A field holding
 * what it cannot (a severity number of 2.5, flags with reserved bits set) throws FieldValueError.
 */
export const LOG_REQUESTS: OtlpRows = otlpRows(
  'resourceLogs',
  FIELDS,
  (store, { resource, scoped, scope, resourceSet, service }) => {
    const resourceSchemaUrl = str(resource.schemaUrl);
    const scopeSchemaUrl = str(scoped.schemaUrl);
    const scopeName = str(scope.name);
    const scopeVersion = str(scope.version);
    const scopeSet = otlpSet(store, scope.attributes);
    return (record, r) => {
      const time = otlpNanos(record.timeUnixNano, 'timeUnixNano');
      store.int64Big(
        LOG.TIMESTAMP,
        r,
        time === 0n ? otlpNanos(record.observedTimeUnixNano, 'observedTimeUnixNano') : time,
      );
      store.text(LOG.TRACE_ID, r, str(record.traceId));
      store.text(LOG.SPAN_ID, r, str(record.spanId));
      store.int32(LOG.TRACE_FLAGS, r, uint32Field(record.flags, 'flags', 255, TRACE_FLAGS));
      store.string(LOG.SEVERITY_TEXT, r, str(record.severityText));
      store.int32(
        LOG.SEVERITY_NUMBER,
        r,
        enumField(record.severityNumber, SEVERITY_NUMBERS, 'severityNumber'),
      );
      store.string(LOG.SERVICE_NAME, r, service);
      store.text(LOG.BODY, r, otlpValueText(record.body) ?? '');
      store.string(LOG.RESOURCE_SCHEMA_URL, r, resourceSchemaUrl);
      store.set(LOG.RESOURCE_ATTRIBUTES, r, resourceSet);
      store.string(LOG.SCOPE_SCHEMA_URL, r, scopeSchemaUrl);
      store.string(LOG.SCOPE_NAME, r, scopeName);
      store.string(LOG.SCOPE_VERSION, r, scopeVersion);
      store.set(LOG.SCOPE_ATTRIBUTES, r, scopeSet);
      store.set(LOG.LOG_ATTRIBUTES, r, otlpSet(store, record.attributes));
      store.string(LOG.EVENT_NAME, r, str(record.eventName));
    };
  },
);
