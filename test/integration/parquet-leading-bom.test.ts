import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { newTally } from '../../src/encoding/records.js';
import { flatEncoder } from '../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../src/signals/logs/parquet-schema.js';
import { flatDuckdbRows, flatHyparquetRows, flatPolarsRows } from '../support/parquet-engines.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * A text column's value that starts with U+FEFF (the property test of parquet-writer-engines
 * found one, seed 1658081422): the file holds its three bytes, and every engine must read them.
 * DuckDB's JavaScript binding drops a leading U+FEFF from strings, so the harness reads DuckDB's
 * text columns as bytes; before, the Body column was read as a string and came back empty.
 */
let dir: string;
beforeAll(() => tempDir('otel-s3-parquet-bom-', (path) => (dir = path)));

test('a log body that starts with U+FEFF is read whole by DuckDB, hyparquet and Polars', async () => {
  const record = (body: string) => ({
    resource: { attributes: {}, schemaUrl: '' },
    instrumentationScope: { name: '', version: '', schemaUrl: '', attributes: {} },
    hrTime: [0, 0],
    hrTimeObserved: [0, 0],
    body,
    attributes: {},
    droppedAttributesCount: 0,
  });
  const builders = logColumnBuilders();
  builders.append([record('\uFEFF'), record('\uFEFFx'), record('')] as never, newTally(false));
  const path = join(dir, 'bom.parquet');
  await writeFile(path, await flatEncoder(LOG_RECORDS)(builders.seal(), { compression: 'none' }));
  const bodies = ['', '\uFEFF', '\uFEFFx'];
  for (const read of [flatDuckdbRows, flatHyparquetRows, flatPolarsRows]) {
    const rows = await read(path, LOG_RECORDS);
    expect(rows.map((r) => r.Body as string).sort(), read.name).toEqual(bodies);
  }
});
