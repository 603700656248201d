import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { beforeEach, describe, expect, test } from 'vitest';
import { compactSpans } from '../../../src/compact/index.js';
import { exportSpansToDir, keysIn } from '../../support/compaction-dir.js';
import { duckdbSpanRows, TWO_SMALL_BATCHES } from '../../support/flat-batches.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';
import { v1File } from '../../support/v1-pages.js';
import { zstdDecompress } from '../../support/zstd.js';

/**
 * A span file whose parallel list columns (a span's Events.*, Links.*) disagree in one row is
 * damaged: the compactor, like the reader (test/unit/reader/reader-parquet-rows.test.ts), must
 * refuse it (skipped, kept, reported), not merge it with names made up or entries dropped and
 * then delete it.
 */

type Row = Record<string, unknown>;

const sorted = (rows: readonly string[]) => [...rows].sort();

/** The exporter's span file at `key` under `dir`, rewritten by another writer with `edit` applied to its first row. */
async function rewrite(dir: string, key: string, edit: (row: Row) => void): Promise<void> {
  const path = join(dir, key);
  const bytes = new Uint8Array(await readFile(path));
  const metadata = parquetMetadata(bytes.slice().buffer);
  const rows = (await parquetReadObjects({
    file: bytes.slice().buffer,
    compressors: { ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompress(input)) },
  })) as Row[];
  edit(rows[0] as Row);
  await writeFile(path, v1File(metadata.schema, metadata.key_value_metadata ?? [], rows));
}

describe('compaction refuses a span file whose parallel list columns disagree', () => {
  let dir: string;
  beforeEach(() => tempDir('otel-s3-compact-lists-', (path) => (dir = path)));

  /** Two exporter span files of an hour; the second rewritten with `edit`; compacted. */
  async function compactWithEdited(edit: (row: Row) => void) {
    await exportSpansToDir(dir, HOUR, TWO_SMALL_BATCHES);
    const [good, edited] = (await keysIn(dir)).filter((k) => k.endsWith('.parquet')) as [
      string,
      string,
    ];
    const goodRows = await duckdbSpanRows(join(dir, good));
    await rewrite(dir, edited, edit);
    const report = await compactSpans({ dir, prefix: 'p', settleMillis: 0, from: new Date(HOUR) });
    const keys = await keysIn(dir);
    const outputs = keys.filter((k) => k.endsWith('.compacted.parquet'));
    return { good, edited, goodRows, report, keys, outputs };
  }

  test('unchanged, rewritten by another writer, the file is compacted with the other', async () => {
    const { report, keys, outputs, good, edited } = await compactWithEdited(() => {});
    const [partition] = report.partitions;
    expect(partition?.skipped).toEqual([]);
    expect(partition?.status).toBe('compacted');
    expect(outputs).toHaveLength(1);
    expect(keys).not.toContain(good);
    expect(keys).not.toContain(edited);
  });

  const cases: { name: string; edit: (row: Row) => void; says: string }[] = [
    {
      name: 'more event times than event names',
      edit: (row) => {
        row['Events.Timestamp'] = [1n, 2n];
        row['Events.Name'] = ['exception'];
        row['Events.Attributes'] = [{}, {}];
      },
      says: 'Events.Timestamp, Events.Name, Events.Attributes hold 2, 1, 2 elements',
    },
    {
      name: 'event names but no event times',
      edit: (row) => {
        row['Events.Timestamp'] = [];
        row['Events.Name'] = ['exception'];
        row['Events.Attributes'] = [];
      },
      says: 'Events.Timestamp, Events.Name, Events.Attributes hold 0, 1, 0 elements',
    },
    {
      name: 'a link without its span id',
      edit: (row) => {
        row['Links.TraceId'] = ['5b8efff798038103d269b633813fc60c'];
        row['Links.SpanId'] = [];
        row['Links.TraceState'] = [''];
        row['Links.Attributes'] = [{}];
      },
      says: 'Links.TraceId, Links.SpanId, Links.TraceState, Links.Attributes hold 1, 0, 1, 1 elements',
    },
  ];
  for (const c of cases) {
    test(`${c.name}: skipped, kept and reported; the good file compacted`, async () => {
      const { report, keys, outputs, good, edited, goodRows } = await compactWithEdited(c.edit);
      const [partition] = report.partitions;
      // Before: merged (its rows paired up by index, names made up) and deleted.
      expect(keys).toContain(edited);
      expect(partition?.skipped).toEqual([
        { key: edited, stage: 'decode', reason: expect.stringContaining(c.says) },
      ]);
      expect(keys).not.toContain(good);
      expect(keys.filter((k) => k.includes('/skipped/'))).toHaveLength(1);
      expect(outputs).toHaveLength(1);
      expect(sorted(await duckdbSpanRows(join(dir, outputs[0] as string)))).toEqual(
        sorted(goodRows),
      );
    });
  }
});
