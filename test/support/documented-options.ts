import { readFileSync } from 'node:fs';

/** One row of the option tables in docs/configuration.md ("## Options"). */
export interface DocumentedOption {
  /** The option's name as documented, e.g. `maxBatchBytes` or `retry.initialDelayMillis`. */
  name: string;
  /** The Default cell, as written. */
  defaultText: string;
  /** The "Allowed and meaning" cell, as written. */
  meaning: string;
}

/** The rows of every option table under "## Options" in docs/configuration.md, in order. */
export function documentedOptions(): DocumentedOption[] {
  const text = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  const start = text.indexOf('\n## Options\n');
  const end = text.indexOf('\n## ', start + 1);
  if (start < 0 || end < 0) throw new Error('docs/configuration.md has no "## Options" section');
  const rows: DocumentedOption[] = [];
  for (const line of text.slice(start, end).split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1];
    if (name === undefined) continue;
    rows.push({ name, defaultText: cells[2] ?? '', meaning: cells[3] ?? '' });
  }
  return rows;
}

/**
 * The value a Default cell states, when it states one literal value (`'otlp-json'`, `true`,
 * 4, 8 MiB (8388608), a backticked template), else undefined (e.g. "(required)", "AWS S3",
 * "`true` when `endpoint` is set, else `false`"). A cell with a second value for Parquet gives
 * the first: "60000; 600000 for `'parquet'`".
 */
export function documentedValue(cell: string): string | number | boolean | undefined {
  const text = cell.replace(/; \S+ for `'parquet'`$/, '');
  const quoted = /^`'([^']*)'`$/.exec(text);
  if (quoted) return quoted[1];
  if (text === '`true`' || text === '`false`') return text === '`true`';
  if (/^\d+$/.test(text)) return Number(text);
  const bytes = /^\d+ [KMG]iB \((\d+)\)$/.exec(text);
  if (bytes) return Number(bytes[1]);
  const code = /^`([^`'\s]+)`$/.exec(text);
  if (code) return code[1];
  return undefined;
}
