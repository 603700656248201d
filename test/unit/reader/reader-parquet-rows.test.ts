import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { readSpans, type UnreadableObject } from '../../../src/reader.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { collect, writeAtKey } from '../../support/reader-fixtures.js';
import { type RecordedTrace, recordTrace, signalKeyAt } from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';
import { v1File } from '../../support/v1-pages.js';

/**
 * Parquet files of this package's schema whose pages are sound but whose rows no exporter
 * writes: each column is read right, and only their rows together say the file is damaged.
 * Such a file must be reported unreadable, not read as rows made up.
 */

type Rows = Record<string, unknown>[];

let recorded: RecordedTrace;
let dir: string;
beforeAll(async () => {
  recorded = await recordTrace();
  dir = await makeTempDir('otel-s3-parquet-rows-');
  return () => removeDir(dir);
});

/** The recorded spans as the exporter stores them, and as hyparquet reads that file's rows. */
async function spansFile() {
  const builders = spanColumnBuilders();
  builders.append(recorded.spans, newTally(false));
  const file = new Uint8Array(await flatEncoder(SPANS)(builders.seal(), { compression: 'none' }));
  const metadata = parquetMetadata(file.slice().buffer);
  const rows = (await parquetReadObjects({ file: file.slice().buffer })) as Rows;
  return { metadata, rows };
}

/** The spans of a file at its own key, read by readSpans: the spans, and what it refused. */
async function readSpansFile(name: string, file: Uint8Array) {
  const root = join(dir, name);
  await writeAtKey(root, signalKeyAt('traces', 'parquet', 'p', READER_T0, '.parquet'), file);
  const problems: UnreadableObject[] = [];
  const objects = await collect(
    readSpans({ dir: root, prefix: 'p', onError: (p) => problems.push(p) }),
  );
  return { objects, problems };
}

describe("a span's parallel list columns that disagree are refused, not paired up", () => {
  test('unchanged, rewritten by another writer, the file reads', async () => {
    const { metadata, rows } = await spansFile();
    const { objects, problems } = await readSpansFile(
      'same',
      v1File(metadata.schema, metadata.key_value_metadata ?? [], rows),
    );
    expect(problems).toEqual([]);
    expect(objects).toHaveLength(1);
  });

  const cases: { name: string; edit: (row: Record<string, unknown>) => void; says: string }[] = [
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
    test(c.name, async () => {
      const { metadata, rows } = await spansFile();
      const row = rows[0] as Record<string, unknown>;
      c.edit(row);
      const { objects, problems } = await readSpansFile(
        c.name.replaceAll(' ', '-'),
        v1File(metadata.schema, metadata.key_value_metadata ?? [], rows),
      );
      expect(objects).toEqual([]);
      expect(problems.map((p) => p.stage)).toEqual(['decode']);
      expect(problems[0]?.error.message).toContain(c.says);
    });
  }
});
