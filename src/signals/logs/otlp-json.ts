import { jsonAnyValue, jsonAttributesField } from '../../encoding/any-value-json.js';
import { JsonWriter } from '../../encoding/json-writer.js';
import type { ExportTally } from '../../encoding/records.js';
import { type JsonGroupFields, writeJsonGroups } from '../grouped-json.js';
import { countLogRecord, type LogRecordLike } from './log-record.js';

/**
 * OTLP/JSON of one export of log records, written straight as UTF-8 bytes: its ResourceLogs
 * objects, comma-separated, one per resource, as elements of an ExportLogsServiceRequest's
 * `resourceLogs` (jsonRecords() frames them). Same rules as the spans' (traces/otlp-json.ts); a
 * body is written when the record has one (null: the empty AnyValue), and left out when it has
 * none, as the official protobuf serializer does (the official JSON one writes `"body":{}`
 * then, which reads back as a null body). An empty export writes nothing.
 */
export function logRecordsToJsonBytes(
  records: readonly LogRecordLike[],
  counted?: ExportTally,
): Buffer {
  const w = writer;
  w.reset(); // what an export that threw half-way left behind
  tally = counted;
  writeJsonGroups(w, records, FIELDS, logRecord);
  tally = undefined;
  return w.finish();
}

/** The same JSON as a string (for tests and tools). */
export function logRecordsToJson(records: readonly LogRecordLike[]): string {
  return logRecordsToJsonBytes(records).toString('utf8');
}

const writer = new JsonWriter();
/** The tally of the export being written, if the caller wants one. */
let tally: ExportTally | undefined;
const FIELDS: JsonGroupFields = { scopes: ',"scopeLogs":[', items: ',"logRecords":[' };

function logRecord(w: JsonWriter, r: LogRecordLike): void {
  countLogRecord(tally, r);
  w.raw('{"timeUnixNano":');
  w.nanos(r.hrTime);
  w.raw(',"observedTimeUnixNano":');
  w.nanos(r.hrTimeObserved);
  const severity = r.severityNumber;
  if (severity !== undefined && severity !== 0) {
    w.raw(',"severityNumber":');
    w.int(severity);
  }
  if (r.severityText) {
    w.raw(',"severityText":');
    w.string(r.severityText);
  }
  const body = r.body;
  if (body !== undefined) {
    w.raw(',"body":');
    jsonAnyValue(w, body);
  }
  jsonAttributesField(w, ',"attributes":', r.attributes);
  if (r.droppedAttributesCount) {
    w.raw(',"droppedAttributesCount":');
    w.int(r.droppedAttributesCount);
  }
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
  if (r.eventName) {
    w.raw(',"eventName":');
    w.string(r.eventName);
  }
  w.char(0x7d);
}
