import { jsonAnyValue, jsonAttributesOf } from '../../encoding/any-value-json.js';
import { IntField, type JsonWriter, spelling, TimeField } from '../../encoding/json-writer.js';
import { checkInt32, checkTraceFlags } from '../../encoding/otlp-schema.js';
import { groupedJson } from '../grouped-json.js';
import { countLogRecord, type LogRecordLike } from './log-record.js';

const OPEN_TIME_UNIX_NANO = new TimeField('{"timeUnixNano":');
const OBSERVED_TIME_UNIX_NANO = new TimeField(',"observedTimeUnixNano":');
const SEVERITY_NUMBER = new IntField(',"severityNumber":');
const SEVERITY_TEXT = spelling(',"severityText":');
const BODY = spelling(',"body":');
const STRING_BODY = spelling(',"body":{"stringValue":');
const FLAGS = new IntField(',"flags":');
const FLAGS_THEN_TRACE_ID = new IntField(',"flags":', ',"traceId":');
const TRACE_ID = spelling(',"traceId":');
const SPAN_ID = spelling(',"spanId":');
const EVENT_NAME = spelling(',"eventName":');

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
  w.nanos(OPEN_TIME_UNIX_NANO, r.hrTime);
  w.nanos(OBSERVED_TIME_UNIX_NANO, r.hrTimeObserved);
  const severity = r.severityNumber;
  if (severity !== undefined) checkInt32('a severity number', severity);
  if (severity !== undefined && severity !== 0) w.intField(SEVERITY_NUMBER, severity);
  w.stringUnlessEmpty(SEVERITY_TEXT, r.severityText);
  const body = r.body;
  if (typeof body === 'string') {
    // The usual body, its head in one spelling.
    w.spell(STRING_BODY);
    w.string(body);
    w.char(0x7d);
  } else if (body !== undefined) {
    w.spell(BODY);
    jsonAnyValue(w, body);
  }
  jsonAttributesOf(w, r.attributes, r.droppedAttributesCount);
  const context = r.spanContext;
  if (context !== undefined) {
    checkTraceFlags(context.traceFlags);
    const flags = context.traceFlags ? context.traceFlags : undefined;
    if (flags !== undefined && context.traceId) {
      w.intField(FLAGS_THEN_TRACE_ID, flags);
      w.hexId(context.traceId);
    } else {
      if (flags !== undefined) w.intField(FLAGS, flags);
      if (context.traceId) {
        w.spell(TRACE_ID);
        w.hexId(context.traceId);
      }
    }
    if (context.spanId) {
      w.spell(SPAN_ID);
      w.hexId(context.spanId);
    }
  }
  w.stringUnlessEmpty(EVENT_NAME, r.eventName);
  w.char(0x7d);
}
