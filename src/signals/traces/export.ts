import type { SealedFlat } from '../flat-parquet/table.js';
import { scopedItemsExport } from '../otlp-rows.js';
import type { SignalExport, TransferableColumns } from '../signal.js';
import { spansToJsonBytes } from './otlp-json.js';
import { spansToProto } from './otlp-proto.js';
import type { SpanLike } from './span.js';

/** Spans, as an exporter sees them: one export is the SDK's batch of ReadableSpans (read as SpanLike). */
export const tracesExport: SignalExport<readonly SpanLike[]> = scopedItemsExport(
  'traces',
  spansToJsonBytes,
  spansToProto,
  {
    // Loaded on first use: a service that exports OTLP never loads the Parquet code.
    async loadColumns() {
      return (await import('./parquet.js')).spanColumnBuilders;
    },
    async columnsAsRecords(columns: TransferableColumns) {
      const [{ sealedRows }, { spanRowsToRequest }, { SPANS }] = await Promise.all([
        import('../flat-parquet/sealed-rows.js'),
        import('./parquet-read.js'),
        import('./parquet-schema.js'),
      ]);
      const request = spanRowsToRequest(sealedRows(SPANS, columns as SealedFlat));
      return (request.resourceSpans as object[]).map((r) => Buffer.from(JSON.stringify(r)));
    },
  },
);
