import { REQUEST } from '../../encoding/otlp-schema.js';
import { jsonRecords, protoRecords } from '../../encoding/records.js';
import { splitByResource } from '../otlp-groups.js';
import type { SignalExport } from '../signal.js';
import type { LogRecordLike } from './log-record.js';
import { logRecordsToJsonBytes } from './otlp-json.js';
import { logRecordsToProto } from './otlp-proto.js';

const json = jsonRecords(REQUEST.logs.listField, logRecordsToJsonBytes);

/** Log records, as an exporter sees them: one export is the SDK's batch of ReadableLogRecords (read as
 * LogRecordLike). */
export const logsExport: SignalExport<readonly LogRecordLike[]> = {
  name: 'logs',
  records: {
    'otlp-json': json,
    'otlp-proto': protoRecords(logRecordsToProto),
    // Parquet for log records comes next; until then its fallback's records.
    parquet: json,
  },
  splitByResource,
  resourceAttributes: (records) => records[0]?.resource.attributes ?? {},
  async loadColumns() {
    throw new Error('Parquet for log records is not implemented yet');
  },
  async columnsAsRecords() {
    throw new Error('Parquet for log records is not implemented yet');
  },
};
