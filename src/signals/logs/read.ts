import { otlpRead } from '../otlp-read.js';
import type { SignalRead } from '../signal.js';
import { checkLogRecordValues } from './rows.js';

/**
 * Log records, as the reader decodes them: each object is one ExportLogsServiceRequest. An
 * OTLP/JSON one whose attribute or body holds an intValue or doubleValue that is no number
 * ("abc", true) is refused, naming it, never read as 0.
 */
export const logsRead: SignalRead = otlpRead(
  'logs',
  {
    // Loaded when a Parquet object is read: the exporter never loads the Parquet reader.
    decode: async (raw, context) =>
      (await import('./parquet-read.js')).logsParquetToRequest(raw, context),
    synchronous: false,
  },
  checkLogRecordValues,
);
