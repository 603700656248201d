import { scopedItemsExport } from '../otlp-rows.js';
import type { SignalExport } from '../signal.js';
import type { LogRecordLike } from './log-record.js';
import { logRecordsToJsonBytes } from './otlp-json.js';
import { logRecordsToProto } from './otlp-proto.js';

/**
 * Log records, as an exporter sees them: one export is the SDK's batch of ReadableLogRecords (read
 * as LogRecordLike).
 */
export const logsExport: SignalExport<readonly LogRecordLike[]> = scopedItemsExport(
  'logs',
  'log records',
  logRecordsToJsonBytes,
  logRecordsToProto,
);
