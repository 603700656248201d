import { noParquetDecoder, otlpRead } from '../otlp-rows.js';
import type { SignalRead } from '../signal.js';

/** Log records, as the reader decodes them: each object is one ExportLogsServiceRequest. */
export const logsRead: SignalRead = otlpRead('logs', noParquetDecoder('log records'));
