import {
  attributeFields,
  protoAnyValue,
  protoAttributesOf,
} from '../../encoding/any-value-proto.js';
import { checkInt32, checkTraceFlags, FIELD } from '../../encoding/otlp-schema.js';
import type { ProtoWriter } from '../../encoding/proto-writer.js';
import { groupedProto } from '../grouped-proto.js';
import { countLogRecord, type LogRecordLike } from './log-record.js';

/**
 * Protobuf of one export of log records (see groupedProto()): its ResourceLogs, each in field 1
 * of an ExportLogsServiceRequest. The same message as the official ProtobufLogsSerializer's (a
 * record without a body has no body field).
 */
export const logRecordsToProto = groupedProto<LogRecordLike>({
  count: countLogRecord,
  write: logRecord,
});

const R = FIELD.LogRecord;
const RECORD_ATTRIBUTES = attributeFields(R);

function logRecord(w: ProtoWriter, r: LogRecordLike): void {
  w.nanos(R.timeUnixNano, r.hrTime);
  const severity = r.severityNumber;
  if (severity !== undefined) checkInt32('a severity number', severity);
  if (severity !== undefined) w.int64(R.severityNumber, severity);
  if (r.severityText) w.string(R.severityText, r.severityText);
  if (r.body !== undefined) protoAnyValue(w, R.body, r.body);
  protoAttributesOf(w, RECORD_ATTRIBUTES, r.attributes, r.droppedAttributesCount);
  const context = r.spanContext;
  if (context !== undefined) {
    checkTraceFlags(context.traceFlags);
    if (context.traceFlags) w.fixed32(R.flags, context.traceFlags);
    if (context.traceId) w.hexBytes(R.traceId, context.traceId, true);
    if (context.spanId) w.hexBytes(R.spanId, context.spanId, true);
  }
  w.nanos(R.observedTimeUnixNano, r.hrTimeObserved);
  if (r.eventName) w.string(R.eventName, r.eventName);
}
