import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { OPTION_TABLE, type OptionRow, optionsOf } from '../../../src/config/option-table.js';
import { FORMATS } from '../../../src/layout/formats.js';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

/** The first cells (`option`) of a markdown table's rows, as code spans. */
function firstCells(markdown: string): Set<string> {
  const cells = new Set<string>();
  for (const line of markdown.split('\n')) {
    const match = /^\|\s*`([^`]+)`/.exec(line);
    if (match?.[1] !== undefined) cells.add(match[1]);
  }
  return cells;
}

/** The markdown table row of `text` whose first cell is a code span that starts with `flag`. */
function rowOf(text: string, flag: string): string | undefined {
  return text.split('\n').find((line) => new RegExp(`^\\| \`${flag}[\` ,]`).test(line));
}

const rows: readonly OptionRow[] = OPTION_TABLE;
/** The exporter's options as documented: `retry` is its two rows `retry.…`. */
const EXPORTER_OPTIONS = optionsOf('exporter')
  .map((row) => row.name)
  .filter((name) => name !== 'retry');
const CLI_SETTINGS = rows.filter((row) => row.file === true);

// The docs are the manual and the option table is the truth: an option, a variable, a flag or a
// format of the table that the docs do not name is a bug in the docs.
describe('the docs name every option, variable, flag and format of the option table', () => {
  test.each([['README.md'], ['docs/configuration.md']])(
    '%s has a row for every exporter option',
    (path) => {
      const cells = firstCells(read(path));
      expect(EXPORTER_OPTIONS.filter((name) => !cells.has(name))).toEqual([]);
    },
  );

  test('docs/configuration.md has a row for every environment variable of the exporter', () => {
    const cells = firstCells(read('docs/configuration.md'));
    const variables = optionsOf('exporter').flatMap((row) => row.variable ?? []);
    expect(variables.filter((variable) => !cells.has(variable))).toEqual([]);
  });

  test('docs/reading.md has a row per CLI setting: its flag, its variable and its file key', () => {
    const text = read('docs/reading.md');
    const wrong = CLI_SETTINGS.filter((row) => {
      const line = rowOf(text, row.flag as string);
      return (
        line === undefined ||
        !line.includes(`\`${row.name}\``) ||
        (row.variable !== undefined && !line.includes(`\`${row.variable}\``))
      );
    });
    expect(wrong.map((row) => row.name)).toEqual([]);
  });

  test('docs/parquet.md names every flag of otel-s3 compact and every option of compactMetrics', () => {
    const text = read('docs/parquet.md');
    const compaction = rows.filter(
      (row) => row.for.includes('compactor') && !row.for.includes('reader'),
    );
    const flags = compaction.flatMap((row) => row.flag ?? []);
    expect(flags.filter((flag) => !text.includes(`\`${flag}`))).toEqual([]);
    // `shard: { index, count }` names its option too.
    expect(
      compaction.map((row) => row.name).filter((name) => !new RegExp(`\`${name}[\`:]`).test(text)),
    ).toEqual([]);
  });

  test('the format option lists every format, in the README and the reference', () => {
    for (const path of ['README.md', 'docs/configuration.md']) {
      const row = rowOf(read(path), 'format');
      expect(
        FORMATS.filter((format) => !row?.includes(`'${format}'`)),
        path,
      ).toEqual([]);
    }
  });
});

describe('the option table', () => {
  test('names each option, variable and flag once', () => {
    const once = (values: string[]) => values.filter((v, i) => values.indexOf(v) !== i);
    expect(once(rows.map((row) => row.name))).toEqual([]);
    expect(once(rows.flatMap((row) => row.variable ?? []))).toEqual([]);
    expect(once(rows.flatMap((row) => row.flag ?? []))).toEqual([]);
  });

  test('a setting the config file may set has a flag, and every flag a one-line doc', () => {
    expect(CLI_SETTINGS.filter((row) => row.flag === undefined).map((row) => row.name)).toEqual([]);
    expect(
      rows.filter((row) => row.doc.includes('\n') || row.doc === '').map((r) => r.name),
    ).toEqual([]);
  });
});
