import { protoAnyValue, protoAttributes } from '../../encoding/any-value-proto.js';
import { hrTimeToNanosParts } from '../../encoding/hrtime.js';
import { FIELD } from '../../encoding/otlp-schema.js';
import { ProtoWriter } from '../../encoding/proto-writer.js';
import type { ExportTally } from '../../encoding/records.js';
import { type ProtoGroupFields, writeProtoGroups } from '../grouped-proto.js';
import { countLogRecord, type HrTimeLike, type LogRecordLike } from './log-record.js';

/**
 * Protobuf of one export of log records: its ResourceLogs, each in field 1 of an
 * ExportLogsServiceRequest, so records concatenate into one valid request. The same message as
 * the official ProtobufLogsSerializer's (a record without a body has no body field). An empty
 * export writes nothing.
 */
export function logRecordsToProto(
  records: readonly LogRecordLike[],
  counted?: ExportTally,
): Buffer {
  const w = writer;
  w.reset(); // what an export that threw half-way left behind
  tally = counted;
  writeProtoGroups(w, records, FIELDS, logRecord);
  tally = undefined;
  return w.finish();
}

/** The tally of the export being written, if the caller wants one. */
let tally: ExportTally | undefined;

const F = FIELD;
const R = F.LogRecord;
const writer = new ProtoWriter();
const FIELDS: ProtoGroupFields = {
  request: F.ExportLogsServiceRequest.resourceLogs,
  resource: F.ResourceLogs.resource,
  scopes: F.ResourceLogs.scopeLogs,
  resourceSchemaUrl: F.ResourceLogs.schemaUrl,
  scope: F.ScopeLogs.scope,
  items: F.ScopeLogs.logRecords,
  scopeSchemaUrl: F.ScopeLogs.schemaUrl,
};

function time(w: ProtoWriter, field: number, t: HrTimeLike): void {
  const { lo, hi } = hrTimeToNanosParts(t);
  w.fixed64Parts(field, lo, hi);
}

function logRecord(w: ProtoWriter, r: LogRecordLike): void {
  countLogRecord(tally, r);
  time(w, R.timeUnixNano, r.hrTime);
  const severity = r.severityNumber;
  if (severity !== undefined) w.int64(R.severityNumber, severity);
  if (r.severityText) w.string(R.severityText, r.severityText);
  if (r.body !== undefined) protoAnyValue(w, R.body, r.body);
  protoAttributes(w, R.attributes, r.attributes);
  if (r.droppedAttributesCount) w.uint(R.droppedAttributesCount, r.droppedAttributesCount);
  const context = r.spanContext;
  if (context !== undefined) {
    if (context.traceFlags) w.fixed32(R.flags, context.traceFlags);
    if (context.traceId) w.hexBytes(R.traceId, context.traceId, true);
    if (context.spanId) w.hexBytes(R.spanId, context.spanId, true);
  }
  time(w, R.observedTimeUnixNano, r.hrTimeObserved);
  if (r.eventName) w.string(R.eventName, r.eventName);
}
