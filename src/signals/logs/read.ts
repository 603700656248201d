import { otlpRead } from '../otlp-read.js';
import type { SignalRead } from '../signal.js';

/** Log records, as the reader decodes them: each object is one ExportLogsServiceRequest. */
export const logsRead: SignalRead = otlpRead('logs', {
  // Loaded when a Parquet object is read: the exporter never loads the Parquet reader.
  decode: async (raw, context) =>
    (await import('./parquet-read.js')).logsParquetToRequest(raw, context),
  synchronous: false,
});
