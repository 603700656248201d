/**
 * Names of East Asian wide characters and of combining marks, recorded through the official SDK,
 * stored by the exporter on a real S3 server and read back by the otel-s3 CLI in a child process:
 * the table's and the waterfall's columns start at the same place on the terminal on every line.
 */
import { context, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { beforeAll, expect, test } from 'vitest';
import { S3SpanExporter } from '../../src/index.js';
import { type CliRun, lines, runCliChild } from '../support/cli-child.js';
import { oneBatchTracerProvider } from '../support/one-batch-providers.js';
import { cliEnvironment, connection, describeS3, withS3 } from '../support/s3.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

/**
 * What the test records, with the cells each takes on a terminal: a wide character (CJK) takes
 * two, a combining mark none (its letter's cell).
 */
const NAMES = [
  { name: 'checkout', cells: 8 },
  { name: '注文を確定', cells: 10 }, // five wide characters
  { name: 'cafe\u0301 crème', cells: 11 }, // e + COMBINING ACUTE ACCENT: one cell
] as const;

/** Terminal cells of `line` before `at`, for the characters this test recorded. */
function cellsBefore(line: string, at: number): number {
  let cells = 0;
  for (const c of line.slice(0, at)) {
    if (/\p{Mn}/u.test(c)) continue;
    cells += /[\u3040-\u30ff\u4e00-\u9fff]/u.test(c) ? 2 : 1;
  }
  return cells;
}

describeS3('otel-s3 tables over wide characters', () => {
  let bucket: string;
  let cwd: string;
  let env: Record<string, string>;
  let traceId: string;
  const otelS3 = (args: string[]): Promise<CliRun> => runCliChild(args, { cwd, env });

  withS3('cli-wide-text', (s) => ({ bucket } = s));
  beforeAll(async () => {
    cwd = await makeTempDir('otel-s3-cli-wide-text-');
    const exporter = new S3SpanExporter({ bucket, prefix: 'wide', ...connection() });
    const tracers = oneBatchTracerProvider(
      resourceFromAttributes({ 'service.name': 'shop' }),
      exporter,
    );
    const tracer = tracers.getTracer('t');
    const start = Date.now() - 1000;
    const root = tracer.startSpan((NAMES[0] as { name: string }).name, { startTime: start });
    traceId = root.spanContext().traceId;
    NAMES.slice(1).forEach(({ name }, i) => {
      tracer
        .startSpan(
          name,
          { startTime: start + 100 * (i + 1) },
          trace.setSpan(context.active(), root),
        )
        .end(start + 100 * (i + 2));
    });
    root.end(start + 500);
    await tracers.shutdown();
    env = cliEnvironment(bucket, 'wide');
    return () => removeDir(cwd);
  });

  test('the waterfall: every bar starts in the same cell', async () => {
    const waterfall = await otelS3(['trace', traceId]);
    expect([waterfall.code, waterfall.stderr]).toEqual([0, '']);
    const rows = lines(waterfall.stdout).slice(2);
    expect(rows).toHaveLength(NAMES.length);
    const bars = rows.map((line) => cellsBefore(line, line.indexOf('|')));
    expect(new Set(bars).size, rows.join('\n')).toBe(1);
  });

  test('the spans table: every kind starts in the same cell', async () => {
    const table = await otelS3(['spans', '--format', 'table']);
    expect(table.code).toBe(0);
    const rows = lines(table.stdout).slice(1);
    expect(rows).toHaveLength(NAMES.length);
    const kinds = rows.map((line) => cellsBefore(line, line.search(/ internal /)));
    expect(new Set(kinds).size, rows.join('\n')).toBe(1);
  });
});
