/**
 * A trace lookup makes its rows from the row group's columns read flat (rowsAt), not from
 * hyparquet's rows of the whole group: each row must be the row hyparquet makes (readRows), for
 * every shape the spans' and log records' tables hold (maps, lists, lists of maps, nulls, odd
 * strings, bodies of every type), across row groups and pages.
 */
import fc from 'fast-check';
import { parquetMetadata } from 'hyparquet';
import { describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { groupBytes, ownBuffer, readColumns, readRows, rowsAt } from '../../../src/parquet/read.js';
import { decompress } from '../../../src/reader/decompress.js';
import { type FlatSpec, flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { logRecords, spans } from '../../support/signal-arbitraries.js';

const decompression = { decompress, maxDecompressedBytes: 1 << 28 };

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
