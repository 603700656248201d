import { otlpRead } from '../otlp-read.js';
import type { SignalRead } from '../signal.js';

/** Spans, as the reader decodes them: each object is one ExportTraceServiceRequest. */
export const tracesRead: SignalRead = otlpRead('traces', {
  // Loaded when a Parquet object is read: the exporter never loads the Parquet reader.
  decode: async (raw, context) =>
    (await import('./parquet-read.js')).spansParquetToRequest(raw, context),
  synchronous: false,
});
