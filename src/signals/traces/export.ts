import { scopedItemsExport } from '../otlp-rows.js';
import type { SignalExport } from '../signal.js';
import { spansToJsonBytes } from './otlp-json.js';
import { spansToProto } from './otlp-proto.js';
import type { SpanLike } from './span.js';

/** Spans, as an exporter sees them: one export is the SDK's batch of ReadableSpans (read as SpanLike). */
export const tracesExport: SignalExport<readonly SpanLike[]> = scopedItemsExport(
  'traces',
  { json: spansToJsonBytes, proto: spansToProto },
  // Loaded on first use: a service that exports OTLP never loads the Parquet code.
  async () => (await import('./parquet.js')).spanColumnBuilders,
  async () => (await import('./parquet-read.js')).spanRows,
);
