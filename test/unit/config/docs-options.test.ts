import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { OPTION_TABLE, type OptionRow, optionsOf } from '../../../src/config/option-table.js';
import { FORMATS } from '../../../src/layout/formats.js';
import { emptySpoolStats, emptyStats } from '../../../src/pipeline/stats.js';

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

/** The string literals of `export type name = | 'a' | 'b' ...;` in the source file at `path`. */
function unionOf(path: string, name: string): string[] {
  const body = new RegExp(`export type ${name} =([^;]*);`).exec(read(path))?.[1] ?? '';
  return [...body.matchAll(/'([^']+)'/g)].map((match) => match[1] as string);
}

/** The lines of the markdown section headed `heading` (up to the next heading of any level). */
function sectionOf(text: string, heading: string): string {
  const start = text.indexOf(`${heading}\n`);
  const end = text.slice(start + heading.length).search(/\n#{1,6} /);
  return start < 0 ? '' : text.slice(start, end < 0 ? undefined : start + heading.length + end);
}

// What a user filters, alerts or graphs on: codes, reasons and fields the docs must all name.
describe('the docs name every alert code, drop reason, failure reason and stats() field', () => {
  const guarantees = read('docs/guarantees.md');
  const alertCodes = unionOf('src/base/log.ts', 'AlertCode');
  const accessFaults = unionOf('src/s3/errors.ts', 'AccessFaultReason');

  test('docs/guarantees.md has a row in "Visible failures" for every AlertCode', () => {
    expect(alertCodes.length).toBeGreaterThan(10);
    const cells = firstCells(sectionOf(guarantees, '## Visible failures'));
    expect(alertCodes.filter((code) => !cells.has(code))).toEqual([]);
  });

  test('every access fault has its own alert code (OTEL_S3_ + the reason)', () => {
    const codeOf = (reason: string) => `OTEL_S3_${reason.toUpperCase().replace(/-/g, '_')}`;
    expect(accessFaults.filter((reason) => !alertCodes.includes(codeOf(reason)))).toEqual([]);
  });

  test('docs/operations.md says which code the startup check gives each access fault', () => {
    const section = sectionOf(read('docs/operations.md'), '### Startup check');
    const codeOf = (reason: string) => `OTEL_S3_${reason.toUpperCase().replace(/-/g, '_')}`;
    expect(accessFaults.map(codeOf).filter((code) => !section.includes(`\`${code}\``))).toEqual([]);
  });

  test('docs/guarantees.md has a row in "No silent loss" for every DropReason', () => {
    const cells = firstCells(sectionOf(guarantees, '### No silent loss'));
    const reasons = unionOf('src/pipeline/stats.ts', 'DropReason');
    expect(reasons.length).toBeGreaterThan(3);
    expect(reasons.filter((reason) => !cells.has(reason))).toEqual([]);
  });

  test('the uploadFailures row names every reason a failed upload is counted under', () => {
    const row = sectionOf(guarantees, '## What is counted where')
      .split('\n')
      .find((line) => line.startsWith('| `uploadFailures`'));
    const verdicts = [...read('src/s3/verdict.ts').matchAll(/reason: '([a-z-]+)'/g)].map(
      (match) => match[1] as string,
    );
    const reasons = [...new Set([...accessFaults, ...verdicts, 'throttled', 'server'])];
    expect(reasons.filter((reason) => !row?.includes(`\`${reason}\``))).toEqual([]);
  });

  test.each([
    ['docs/guarantees.md', '## What is counted where', Object.keys(emptyStats())],
    ['docs/durability.md', '## What is counted', Object.keys(emptySpoolStats())],
  ])('%s names every field of its stats() table', (path, heading, fields) => {
    const table = sectionOf(read(path), heading)
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|')[1] ?? '');
    expect(fields.filter((field) => !table.some((cell) => cell.includes(`\`${field}\``)))).toEqual(
      [],
    );
  });
});
