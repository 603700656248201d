import { lowerHexText } from '../../encoding/hex-id.js';
import { checkOtlpTime } from '../../encoding/hrtime.js';
import { checkDropped, checkInt32, checkTraceFlags } from '../../encoding/otlp-schema.js';
import type { ExportTally } from '../../encoding/records.js';
import { jsValueText } from '../../parquet/attribute-text.js';
import { appendScopedRows } from '../flat-append.js';
import { FlatColumnBuilders, type FlatStore } from '../flat-parquet/store.js';
import { countLogRecord, type LogRecordLike } from './log-record.js';
import { LOG, LOG_RECORDS } from './parquet-schema.js';

/**
 * Log records into the columns of the `otel_logs` table (parquet-schema.js), with the values the
 * Collector's ClickHouse exporter writes: the record's time, or its observed time when it has
 * none; ids in lower-case hex (lowerHexText, as the OTLP formats carry them; '' without a span
 * context); the body and attribute values as text (jsValueText; no body: '').
 */
export function appendLogRecords(
  store: FlatStore,
  records: readonly LogRecordLike[],
  tally: ExportTally,
): void {
  appendScopedRows(
    store,
    records,
    tally,
    countLogRecord,
    ({ resource, scope, resourceSet, service }) => {
      const scopeSet = store.setOf(scope.attributes);
      return (record, r) => {
        const t = record.hrTime;
        const stored = t[0] === 0 && t[1] === 0 ? record.hrTimeObserved : t;
        // The observed time no column keeps is refused as the OTLP formats refuse it, if no time.
        if (stored === t) checkOtlpTime(record.hrTimeObserved);
        checkDropped('a dropped attributes count', record.droppedAttributesCount);
        store.nanos(LOG.TIMESTAMP, r, stored);
        const context = record.spanContext;
        store.text(LOG.TRACE_ID, r, lowerHexText(context?.traceId ?? ''));
        store.text(LOG.SPAN_ID, r, lowerHexText(context?.spanId ?? ''));
        checkTraceFlags(context?.traceFlags);
        store.int32(LOG.TRACE_FLAGS, r, context?.traceFlags ?? 0);
        store.string(LOG.SEVERITY_TEXT, r, record.severityText ?? '');
        const severity = record.severityNumber ?? 0;
        checkInt32('a severity number', severity);
        store.int32(LOG.SEVERITY_NUMBER, r, severity);
        store.string(LOG.SERVICE_NAME, r, service);
        store.text(LOG.BODY, r, jsValueText(record.body) ?? '');
        store.string(LOG.RESOURCE_SCHEMA_URL, r, resource.schemaUrl ?? '');
        store.set(LOG.RESOURCE_ATTRIBUTES, r, resourceSet);
        store.string(LOG.SCOPE_SCHEMA_URL, r, scope.schemaUrl ?? '');
        store.string(LOG.SCOPE_NAME, r, scope.name);
        store.string(LOG.SCOPE_VERSION, r, scope.version ?? '');
        store.set(LOG.SCOPE_ATTRIBUTES, r, scopeSet);
        store.attributes(LOG.LOG_ATTRIBUTES, r, record.attributes);
        store.string(LOG.EVENT_NAME, r, record.eventName ?? '');
      };
    },
  );
}

/** The Parquet column builders of log records. */
export const logColumnBuilders = (): FlatColumnBuilders<readonly LogRecordLike[]> =>
  new FlatColumnBuilders(LOG_RECORDS, appendLogRecords);
