/**
 * `npm start` (examples/demo.ts) on its embedded fake S3, in a directory of the test's: what it
 * leaves for the `otel-s3` CLI (`.otel-s3.json` and the mirror in `.otel-s3-demo/`) must give
 * back what the demo printed it had read from the server, for each of the three signals.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import type { StatsReport } from '../../src/cli/commands/stats.js';
import { collectOutput } from '../support/child.js';
import { type CliRun, lines, runCliInProcess } from '../support/cli-child.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const DEMO = new URL('../../examples/demo.ts', import.meta.url).pathname;
/** tsx by absolute URL: the demo runs in the test's directory, where it writes its files. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** The demo in `cwd` for `seconds`, without S3_ENDPOINT (so on its embedded server). */
function runDemo(cwd: string, seconds: number): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', TSX, DEMO], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: cwd,
      TMPDIR: cwd,
      DEMO_SECONDS: String(seconds),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collectOutput(child);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout: output.stdout(), stderr: output.stderr() }),
    );
  });
}

/** The `total` of the demo's table whose header line is `header` (e.g. `span  spans`). */
function printedTotal(stdout: string, header: RegExp): number {
  const rest = stdout.split('\n');
  const start = rest.findIndex((line) => header.test(line));
  const total = rest
    .slice(start + 1)
    .map((line) => /^\s+total\s+([\d,]+)$/.exec(line)?.[1])
    .find((n) => n !== undefined);
  if (start < 0 || total === undefined) throw new Error(`no table ${header} in:\n${stdout}`);
  return Number(total.replaceAll(',', ''));
}

describe('npm start: the otel-s3 CLI reads what the demo stored from its mirror', () => {
  let cwd: string;
  let printed: { dataPoints: number; spans: number; logRecords: number };
  const otelS3 = (args: string[]) => runCliInProcess([...args, '--since', '1h'], { cwd });

  beforeAll(async () => {
    cwd = await makeTempDir('otel-s3-demo-test-');
    const demo = await runDemo(cwd, 2);
    expect([demo.code, demo.stdout]).toEqual([0, expect.stringContaining('\nOK: ')]);
    printed = {
      dataPoints: printedTotal(demo.stdout, /^\s+metric\s+type\s+series\s+data points$/),
      spans: printedTotal(demo.stdout, /^\s+span\s+spans$/),
      logRecords: printedTotal(demo.stdout, /^\s+severity\s+log records$/),
    };
    // Else the counts below would prove nothing about spans and log records.
    expect(printed.spans).toBeGreaterThan(0);
    expect(printed.logRecords).toBeGreaterThan(0);
    return () => removeDir(cwd);
  }, 60_000);

  test.each([
    ['points', 'dataPoints'],
    ['spans', 'spans'],
    ['logs', 'logRecords'],
  ] as const)('%s: one row for each the demo printed', async (command, counted) => {
    const { code, stdout, stderr } = await otelS3([command, '--format', 'jsonl']);
    expect([code, stderr]).toEqual([0, '']);
    expect(lines(stdout)).toHaveLength(printed[counted]);
  });

  test('stats (which the demo suggests): the data points, spans and log records it printed', async () => {
    const { code, stdout, stderr } = await otelS3(['stats', '--format', 'json']);
    expect([code, stderr]).toEqual([0, '']);
    const report = JSON.parse(stdout) as StatsReport;
    expect(report).toMatchObject(printed);
    expect(Object.keys(report.signals).sort()).toEqual(['logs', 'metrics', 'traces']);
  });
});
