/**
 * A trace lookup makes its rows from the row group's columns read flat (rowsAt), not from
 * hyparquet's rows of the whole group: each row must be the row hyparquet makes (readRows), for
 * every shape the spans' and log records' tables hold (maps, lists, lists of maps, nulls, odd
 * strings, bodies of every type), across row groups and pages. Its ids and its columns are
 * decompressed within one budget.
 */
import fc from 'fast-check';
import { parquetMetadata } from 'hyparquet';
import { describe, expect, test } from 'vitest';
import { createPageCompressor } from '../../../src/compression/compressors.js';
import { newTally } from '../../../src/encoding/records.js';
import { groupBytes, ownBuffer, readColumns, readRows, rowsAt } from '../../../src/parquet/read.js';
import { decompress } from '../../../src/reader/decompress.js';
import { ObjectTooLargeError } from '../../../src/reader/read-limits.js';
import { readFlatRows } from '../../../src/signals/flat-parquet/read.js';
import { type FlatSpec, flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { logRecords, spans } from '../../support/signal-arbitraries.js';

const decompression = { decompress, maxDecompressedBytes: 1 << 28 };
/** Gzip pages: a read counts the bytes it decompresses. */
const gzip = createPageCompressor({ compression: 'gzip', level: 1 }).compressPage;

/** Each row group's rows both ways: hyparquet's, and rowsAt over every row. */
async function bothWays(file: Uint8Array) {
  const buffer = ownBuffer(file);
  const metadata = parquetMetadata(buffer);
  let rowStart = 0;
  const pairs: { hyparquet: unknown[]; flat: unknown[] }[] = [];
  for (const [group, rowGroup] of metadata.row_groups.entries()) {
    const rows = Number(rowGroup.num_rows);
    const rowEnd = rowStart + rows;
    const read = { file: buffer, metadata, rowStart, rowEnd };
    const { rows: hyparquet } = await readRows(read, decompression);
    const { start, end } = groupBytes(rowGroup, file.length);
    const columns = readColumns(
      { metadata, group, rows, bytes: file.subarray(start, end), start },
      decompression,
    );
    const flat = rowsAt(
      metadata,
      columns,
      Array.from({ length: rows }, (_, i) => i),
    );
    pairs.push({ hyparquet, flat });
    rowStart = rowEnd;
  }
  return pairs;
}

/** Small row groups and pages, so a map or list goes on across pages. */
const WRITERS = [
  { compression: 'none', rowGroupRows: 3, pageValues: 4 },
  { compression: 'none' },
] as const;

async function check<T>(
  spec: FlatSpec,
  builders: () => { append(items: T[], tally: ReturnType<typeof newTally>): void; seal(): never },
  items: T[],
) {
  for (const options of WRITERS) {
    const b = builders();
    b.append(items, newTally(false));
    const file = await flatEncoder(spec)(b.seal(), options);
    for (const { hyparquet, flat } of await bothWays(file)) expect(flat).toEqual(hyparquet);
  }
}

describe('rowsAt: the rows of columns read flat are the rows hyparquet reads', () => {
  test('spans', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spans, { minLength: 1, maxLength: 3 }), async (exports) => {
        await check(SPANS, spanColumnBuilders as never, exports.flat());
      }),
      { numRuns: 60 },
    );
  });

  test('log records', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(logRecords, { minLength: 1, maxLength: 3 }), async (exports) => {
        await check(LOG_RECORDS, logColumnBuilders as never, exports.flat());
      }),
      { numRuns: 60 },
    );
  });
});

describe('a trace lookup of a row group', () => {
  test('decompresses its ids and its columns within one maxDecompressedBytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spans, { minLength: 2, maxLength: 3 }), async (exports) => {
        const items = exports.flat();
        fc.pre(items.length > 0);
        const traceId = items[0]?.spanContext().traceId as string;
        const b = spanColumnBuilders();
        b.append(items, newTally(false));
        const file = await flatEncoder(SPANS)(b.seal(), {
          compression: 'gzip',
          compressPage: gzip,
        });
        const buffer = ownBuffer(file);
        const metadata = parquetMetadata(buffer);
        const total = (await readRows({ file: buffer, metadata }, decompression)).rawBytes;
        const ids = (
          await readRows({ file: buffer, metadata, columns: ['TraceId'] }, decompression)
        ).rawBytes;
        // Enough for the ids, and for all the columns, but not for both.
        const limit = { decompress, maxDecompressedBytes: total };
        expect(ids).toBeGreaterThan(0);
        await expect(readFlatRows(file, limit, SPANS, traceId)).rejects.toThrow(
          ObjectTooLargeError,
        );
        const enough = { decompress, maxDecompressedBytes: total + ids };
        const rows = await readFlatRows(file, enough, SPANS, traceId);
        expect(rows.length).toBeGreaterThan(0);
      }),
      { numRuns: 20 },
    );
  });
});
