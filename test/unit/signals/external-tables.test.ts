/**
 * docs/parquet.md's Athena tables for spans and log records read the files' columns by position:
 * their column lists must be the Parquet tables' columns, in order (a dotted name with `_`).
 */
import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';

const docs = readFile(new URL('../../../docs/parquet.md', import.meta.url), 'utf8');

/** `Events.Name` as a Hive column: lower case, the dot an underscore. */
const hiveName = (name: string) => name.toLowerCase().replace('.', '_');

/** The names of a comma-separated column list (`name type, name type<...>, ...`). */
function names(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let item = '';
  for (const c of `${list},`) {
    if (c === '<') depth++;
    if (c === '>') depth--;
    if (c === ',' && depth === 0) {
      const name = item.replaceAll('`', '').trim().split(/\s+/)[0];
      if (name) out.push(name);
      item = '';
    } else item += c;
  }
  return out;
}

test('the Athena otel_traces table declares the spans file columns, in order', async () => {
  const m = /CREATE EXTERNAL TABLE otel_traces \(([\s\S]*?)\n\)\nPARTITIONED BY/.exec(await docs);
  expect(m).not.toBeNull();
  expect(names(m?.[1] ?? '')).toEqual(SPANS.columns.map((c) => hiveName(c.name)));
});

test('the otel_logs columns the docs list are the log records file columns, in order', async () => {
  const m = /with its columns in order: ([\s\S]*?)\.\n/.exec(await docs);
  expect(m).not.toBeNull();
  expect(names((m?.[1] ?? '').replace(/\s+/g, ' '))).toEqual(
    LOG_RECORDS.columns.map((c) => hiveName(c.name)),
  );
});
