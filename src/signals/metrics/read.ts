import { otlpRead } from '../otlp-read.js';
import type { SignalRead } from '../signal.js';

/** Metrics, as the reader decodes them: each object is one ExportMetricsServiceRequest. */
export const metricsRead: SignalRead = otlpRead('metrics', {
  // Loaded when a Parquet object is read: the exporter never loads the Parquet reader.
  decode: async (raw, context) => {
    const { parquetToRequest } = await import('./parquet/read.js');
    return (await parquetToRequest(raw, context)).request;
  },
  synchronous: false,
});
