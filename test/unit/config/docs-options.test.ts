import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { SETTINGS } from '../../../src/cli/setting-sources.js';
import { ENVIRONMENT_VARIABLES } from '../../../src/config/environment.js';
import { OPTION_NAMES, RETRY_OPTION_NAMES } from '../../../src/config/options.js';
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

const EXPORTER_OPTIONS = [
  ...OPTION_NAMES.filter((name) => name !== 'retry'),
  ...RETRY_OPTION_NAMES.map((name) => `retry.${name}`),
];

// The docs are the manual: an option, a variable or a format that exists in the code and not
// in them is a bug in the docs.
describe('the docs name every option, variable and format the code has', () => {
  test.each([['README.md'], ['docs/configuration.md']])(
    '%s has a row for every exporter option',
    (path) => {
      const rows = firstCells(read(path));
      expect(EXPORTER_OPTIONS.filter((name) => !rows.has(name))).toEqual([]);
    },
  );

  test('docs/configuration.md has a row for every environment variable', () => {
    const rows = firstCells(read('docs/configuration.md'));
    const variables = ENVIRONMENT_VARIABLES.map(([variable]) => variable);
    expect(variables.filter((variable) => !rows.has(variable))).toEqual([]);
  });

  test('docs/reading.md names every CLI setting by its flag', () => {
    const text = read('docs/reading.md');
    const flags = Object.values(SETTINGS).map((s) => s.flag);
    expect(flags.filter((flag) => !text.includes(`\`${flag}`))).toEqual([]);
  });

  test('the format option lists every format, in the README and the reference', () => {
    for (const path of ['README.md', 'docs/configuration.md']) {
      const row = read(path)
        .split('\n')
        .find((line) => line.startsWith('| `format`'));
      expect(
        FORMATS.filter((format) => !row?.includes(`'${format}'`)),
        path,
      ).toEqual([]);
    }
  });
});
