import type { SealedFlat } from '../flat-parquet/table.js';
import { scopedItemsExport } from '../otlp-rows.js';
import type { SignalExport, TransferableColumns } from '../signal.js';
import type { LogRecordLike } from './log-record.js';
import { logRecordsToJsonBytes } from './otlp-json.js';
import { logRecordsToProto } from './otlp-proto.js';

/**
 * Log records, as an exporter sees them: one export is the SDK's batch of ReadableLogRecords (read
 * as LogRecordLike).
 */
export const logsExport: SignalExport<readonly LogRecordLike[]> = scopedItemsExport(
  'logs',
  logRecordsToJsonBytes,
  logRecordsToProto,
  {
    // Loaded on first use: a service that exports OTLP never loads the Parquet code.
    async loadColumns() {
      return (await import('./parquet.js')).logColumnBuilders;
    },
    async columnsAsRecords(columns: TransferableColumns) {
      const [{ sealedRows }, { logRowsToRequest }, { LOG_RECORDS }] = await Promise.all([
        import('../flat-parquet/sealed-rows.js'),
        import('./parquet-read.js'),
        import('./parquet-schema.js'),
      ]);
      const request = logRowsToRequest(sealedRows(LOG_RECORDS, columns as SealedFlat));
      return (request.resourceLogs as object[]).map((r) => Buffer.from(JSON.stringify(r)));
    },
  },
);
