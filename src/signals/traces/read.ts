import { noParquetDecoder, otlpRead } from '../otlp-rows.js';
import type { SignalRead } from '../signal.js';

/** Spans, as the reader decodes them: each object is one ExportTraceServiceRequest. */
export const tracesRead: SignalRead = otlpRead('traces', noParquetDecoder('spans'));
