import { otlpRead } from '../otlp-read.js';
import type { SignalRead } from '../signal.js';
import { checkSpanValues } from './rows.js';

/**
 * Spans, as the reader decodes them: each object is one ExportTraceServiceRequest. An OTLP/JSON
 * one whose attribute holds an intValue or doubleValue that is no number ("abc", true) is
 * refused, naming it, never read as 0.
 */
export const tracesRead: SignalRead = otlpRead(
  'traces',
  {
    // Loaded when a Parquet object is read: the exporter never loads the Parquet reader.
    decode: async (raw, context) =>
      (await import('./parquet-read.js')).spansParquetToRequest(raw, context),
    synchronous: false,
  },
  checkSpanValues,
);
