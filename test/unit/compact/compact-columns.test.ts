import fc from 'fast-check';
import { parquetReadObjects } from 'hyparquet';
import { describe, expect, test } from 'vitest';
import { appendColumns } from '../../../src/compact/append-columns.js';
import { COMPACTION_TABLE } from '../../../src/compact/metrics-rows.js';
import { TableFileWriter } from '../../../src/parquet/file-writer.js';
import { bytesAsRanges, openParquetParts } from '../../../src/reader/parquet-parts.js';
import { resolveReadLimits } from '../../../src/reader/read-limits.js';
import { appendRequest } from '../../../src/signals/metrics/parquet/append-otlp.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { ColumnStore } from '../../../src/signals/metrics/parquet/column-store.js';
import { encodeParquet } from '../../../src/signals/metrics/parquet/encode.js';
import { resourceMetrics } from '../../support/metrics-arbitraries.js';

/**
 * The compactor reads a Parquet input's row groups straight from their columns
 * (append-columns.ts). What it stores must be what the reader's request path stores (the row
 * group as an OTLP request, rows-to-request.ts, appended by append-otlp.ts): every value of
 * every metric type, attribute value, edge number and odd string, as written by the exporter.
 */

const limits = resolveReadLimits({});

/** The sealed store as a file in the compaction order, read back as rows. */
async function rowsOf(store: ColumnStore): Promise<Record<string, unknown>[]> {
  const writer = new TableFileWriter(COMPACTION_TABLE, { compression: 'none', rowGroupRows: 7 });
  await writer.writeRun(store.seal());
  const bytes = writer.finish([]);
  return parquetReadObjects({ file: new Uint8Array(bytes).buffer });
}

/**
 * Writers' options: small row groups (a resource or metric going on across them), and pages that
 * end every few list or map entries with dictionaries for every list of counts (the flat reading
 * of lists and maps, flat-repeated.ts, across pages and encodings).
 */
const WRITERS = [
  { compression: 'none', rowGroupRows: 5 },
  { compression: 'none', rowGroupRows: 40, pageValues: 3, dictionaryMinUses: 1 },
] as const;

describe('a Parquet input read as columns', () => {
  test.each(WRITERS)('stores what its rows read as an OTLP request store (%o)', async (writer) => {
    await fc.assert(
      fc.asyncProperty(fc.array(resourceMetrics, { minLength: 1, maxLength: 3 }), async (rms) => {
        const builders = new MetricColumnBuilders();
        for (const rm of rms) builders.appendResourceMetrics(rm);
        if (builders.rows === 0) return;
        const file = await encodeParquet(builders.seal(), writer);
        const parts = await openParquetParts(bytesAsRanges(file), limits);
        const viaRequest = new ColumnStore();
        const viaColumns = new ColumnStore();
        for (let i = 0; i < parts.count; i++) {
          const part = await parts.read(i);
          expect(appendRequest(viaRequest, part.request)).toBe(part.rows);
          expect(appendColumns(viaColumns, await parts.readColumns(i))).toBe(part.rows);
        }
        expect(await rowsOf(viaColumns)).toEqual(await rowsOf(viaRequest));
      }),
      { numRuns: 60 },
    );
  });
});
