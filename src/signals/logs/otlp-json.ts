import { jsonAnyValue, jsonAttributesOf } from '../../encoding/any-value-json.js';
import type { JsonWriter } from '../../encoding/json-writer.js';
import { groupedJson } from '../grouped-json.js';
import { countLogRecord, type LogRecordLike } from './log-record.js';

/**
 * OTLP/JSON of one export of log records (see groupedJson()): its ResourceLogs objects, as
 * elements of an ExportLogsServiceRequest's `resourceLogs` (jsonRecords() frames them). A body is
 * written when the record has one (null: the empty AnyValue), and left out when it has none, as
 * the official protobuf serializer does (the official JSON one writes `"body":{}` then, which
 * reads back as a null body).
 */
export const logRecordsToJsonBytes = groupedJson<LogRecordLike>('logs', {
  count: countLogRecord,
  write: logRecord,
});

/** The same JSON as a string (for tests and tools). */
export function logRecordsToJson(records: readonly LogRecordLike[]): string {
  return logRecordsToJsonBytes(records).toString('utf8');
}

function logRecord(w: JsonWriter, r: LogRecordLike): void {
  w.raw('{"timeUnixNano":');
  w.nanos(r.hrTime);
  w.raw(',"observedTimeUnixNano":');
  w.nanos(r.hrTimeObserved);
  const severity = r.severityNumber;
  if (severity !== undefined && severity !== 0) {
    w.raw(',"severityNumber":');
    w.int(severity);
  }
  w.stringUnlessEmpty(',"severityText":', r.severityText);
  const body = r.body;
  if (body !== undefined) {
    w.raw(',"body":');
    jsonAnyValue(w, body);
  }
  jsonAttributesOf(w, r.attributes, r.droppedAttributesCount);
  const context = r.spanContext;
  if (context !== undefined) {
    if (context.traceFlags) {
      w.raw(',"flags":');
      w.uint(context.traceFlags >>> 0);
    }
    if (context.traceId) {
      w.raw(',"traceId":');
      w.hexId(context.traceId);
    }
    if (context.spanId) {
      w.raw(',"spanId":');
      w.hexId(context.spanId);
    }
  }
  w.stringUnlessEmpty(',"eventName":', r.eventName);
  w.char(0x7d);
}
