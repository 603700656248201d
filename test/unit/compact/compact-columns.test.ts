import fc from 'fast-check';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
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
import { parquetHeader } from '../../support/hyparquet-internals.js';
import { resourceMetrics } from '../../support/metrics-arbitraries.js';
import { sampleMetrics } from '../../support/reader-fixtures.js';

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

  test('a page whose run claims millions of levels is refused, the process kept', async () => {
    // hyparquet writes every value of an RLE run into a JavaScript array: a run of 2^28 made V8
    // end the process ("invalid size error") before any catch saw it.
    const builders = new MetricColumnBuilders();
    for (const rm of fc.sample(resourceMetrics, { seed: 7, numRuns: 5 }))
      builders.appendResourceMetrics(rm);
    const file = new Uint8Array(
      await encodeParquet(builders.seal(), WRITERS[0] as (typeof WRITERS)[number]),
    );
    const meta = parquetMetadata(file.buffer);
    const chunk = meta.row_groups[0]?.columns.find(
      (c) => c.meta_data?.path_in_schema.join('.') === 'Attributes.key_value.key',
    )?.meta_data;
    const reader = { view: new DataView(file.buffer), offset: Number(chunk?.data_page_offset) };
    parquetHeader(reader);
    // The page's first levels (its repetition levels): a 4-byte length, then the runs. The first
    // run becomes an RLE run of 2^28 (its header 2^29, a varint of 5 bytes).
    file.set([0x80, 0x80, 0x80, 0x80, 0x02, 0], reader.offset + 4);
    const parts = await openParquetParts(bytesAsRanges(file), limits);
    await expect(parts.readColumns(0)).rejects.toThrow(/longer than its page/);
  });

  test('a row group whose bytes were altered is refused or read whole, never past its rows', async () => {
    // The compactor reads inputs from a bucket anyone may have written: a flipped byte inside a
    // column chunk (the footer intact) must give an error or columns of exactly the group's rows
    // whose lists and maps stay within their elements.
    await fc.assert(
      fc.asyncProperty(
        fc.array(resourceMetrics, { minLength: 1, maxLength: 2 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        async (rms, flips) => {
          const builders = new MetricColumnBuilders();
          for (const rm of rms) builders.appendResourceMetrics(rm);
          if (builders.rows === 0) return;
          const file = new Uint8Array(
            await encodeParquet(builders.seal(), WRITERS[1] as (typeof WRITERS)[number]),
          );
          const parts = await openParquetParts(bytesAsRanges(file), limits);
          const footerStart =
            file.length - 8 - new DataView(file.buffer).getUint32(file.length - 8, true);
          for (const [at, xor] of flips) {
            const i = 4 + (at % (footerStart - 4));
            file[i] = (file[i] as number) ^ xor;
          }
          for (let g = 0; g < parts.count; g++) {
            const read = await parts.readColumns(g).catch((error: unknown) => error);
            if (read instanceof Error) continue;
            expect(read).toHaveProperty('rows');
            const { rows, columns, flat } = read as Awaited<ReturnType<typeof parts.readColumns>>;
            for (const [name, values] of columns)
              expect([name, values.length]).toEqual([name, rows]);
            for (const c of flat.values()) {
              expect(c.offsets.length).toBe(rows + 1);
              expect(c.offsets[rows]).toBe(c.values.length);
              for (let r = 0; r < rows; r++) {
                expect(c.offsets[r] as number).toBeLessThanOrEqual(c.offsets[r + 1] as number);
              }
              if (c.keys !== undefined) expect(c.keys.length).toBe(c.values.length);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

test('attribute keys "__proto__" and "constructor" are compacted as keys like any other', async () => {
  const rm = await sampleMetrics('svc');
  const point = rm.scopeMetrics[0]?.metrics[0]?.dataPoints[0] as { attributes: object };
  point.attributes = JSON.parse('{"__proto__":"x","constructor":"y","a":"1"}');
  const builders = new MetricColumnBuilders();
  builders.appendResourceMetrics(rm);
  const parts = await openParquetParts(
    bytesAsRanges(await encodeParquet(builders.seal(), WRITERS[0])),
    limits,
  );
  const viaColumns = new ColumnStore();
  for (let i = 0; i < parts.count; i++) appendColumns(viaColumns, await parts.readColumns(i));
  const writer = new TableFileWriter(COMPACTION_TABLE, { compression: 'none' });
  await writer.writeRun(viaColumns.seal());
  const compacted = await openParquetParts(bytesAsRanges(writer.finish([])), limits);
  const text = JSON.stringify((await compacted.read(0)).request, (_, v) =>
    typeof v === 'bigint' ? String(v) : v,
  );
  expect(text).toContain(
    '"attributes":[{"key":"__proto__","value":{"stringValue":"x"}},{"key":"constructor","value":{"stringValue":"y"}},{"key":"a","value":{"stringValue":"1"}}]',
  );
});
