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
  { json: logRecordsToJsonBytes, proto: logRecordsToProto },
  // Loaded on first use: a service that exports OTLP never loads the Parquet code.
  async () => (await import('./parquet.js')).logColumnBuilders,
  async () => (await import('./parquet-read.js')).logRows,
);
