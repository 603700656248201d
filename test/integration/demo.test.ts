/**
 * `npm start` (examples/demo.ts) on its embedded fake S3, in a directory of the test's: what it
 * leaves for the `otel-s3` CLI (`.otel-s3.json` and the mirror in `.otel-s3-demo/`) must give
 * back what the demo printed it had read from the server, for each of the three signals. And on
 * the test S3 server (S3_ENDPOINT), stopped early by SIGTERM.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, test } from 'vitest';
import type { StatsReport } from '../../src/cli/commands/stats.js';
import { dataPointRows } from '../../src/reader.js';
import { collectOutput } from '../support/child.js';
import { type CliRun, lines, runCliInProcess } from '../support/cli-child.js';
import { decodeStored, describeS3, listAndFetch, s3Server, withS3 } from '../support/s3.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const DEMO = new URL('../../examples/demo.ts', import.meta.url).pathname;
/** tsx by absolute URL: the demo runs in the test's directory, where it writes its files. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * The demo in `cwd` for `seconds`, without S3_ENDPOINT (so on its embedded server) unless `env`
 * names one; `started` resolves at its first progress line on stderr.
 */
function startDemo(
  cwd: string,
  seconds: number,
  env: Record<string, string> = {},
): { child: ChildProcess; started: Promise<void>; done: Promise<CliRun> } {
  const child = spawn(process.execPath, ['--import', TSX, DEMO], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: cwd,
      TMPDIR: cwd,
      DEMO_SECONDS: String(seconds),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let progressed = () => {};
  const started = new Promise<void>((resolve) => {
    progressed = resolve;
  });
  const output = collectOutput(child, (chunk) => {
    if (/\d+ requests \|/.test(chunk.toString())) progressed();
  });
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code, stdout: output.stdout(), stderr: output.stderr() }),
    );
  });
  return { child, started, done };
}

const runDemo = (cwd: string, seconds: number): Promise<CliRun> => startDemo(cwd, seconds).done;

/** The rows of the demo's metrics table: each metric's name and type, as printed. */
function printedMetricTypes(stdout: string): { metric: string; type: string }[] {
  const rest = stdout.split('\n');
  const start = rest.findIndex((line) => /^\s+metric\s+type\s+series\s+data points$/.test(line));
  const rows: { metric: string; type: string }[] = [];
  for (const line of rest.slice(start + 1)) {
    if (/^\s+total\s/.test(line) || line.trim() === '') break;
    const [metric = '', type = ''] = line.trim().split(/\s{3,}/);
    rows.push({ metric, type });
  }
  if (start < 0 || rows.length === 0) throw new Error(`no metrics table in:\n${stdout}`);
  return rows;
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
  let printedTypes: { metric: string; type: string }[];
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
    printedTypes = printedMetricTypes(demo.stdout);
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

  test('trace --logs: a log record of the demo under the span it was logged in', async () => {
    const logs = await otelS3(['logs', '--format', 'jsonl']);
    expect([logs.code, logs.stderr]).toEqual([0, '']);
    const records = lines(logs.stdout).map(
      (line) => JSON.parse(line) as { traceId: string; spanId: string; body: unknown },
    );
    // The service logs inside its requests' spans, as an instrumented service does.
    const traced = records.filter((r) => r.traceId !== '');
    expect(traced).toHaveLength(records.length);
    const record = traced[0];
    if (record === undefined) throw new Error('unreachable');
    const spans = await otelS3(['spans', '--trace-id', record.traceId, '--format', 'jsonl']);
    expect([spans.code, spans.stderr]).toEqual([0, '']);
    const span = lines(spans.stdout)
      .map((line) => JSON.parse(line) as { spanId: string; name: string })
      .find((s) => s.spanId === record.spanId);
    expect(span).toBeDefined();

    const { code, stdout, stderr } = await otelS3(['trace', record.traceId, '--logs']);
    expect([code, stderr]).toEqual([0, '']);
    const shown = stdout.split('\n');
    const spanLine = shown.findIndex((line) => line.includes(span?.name ?? '?'));
    const logLine = shown.findIndex((line) => line.includes(String(record.body)));
    expect(spanLine).toBeGreaterThan(-1);
    // Below its span, on a branch of the tree.
    expect(logLine).toBeGreaterThan(spanLine);
    expect(shown[logLine]).toMatch(/[├└]─ /);
  });

  test('stats (which the demo suggests): the data points, spans and log records it printed', async () => {
    const { code, stdout, stderr } = await otelS3(['stats', '--format', 'json']);
    expect([code, stderr]).toEqual([0, '']);
    const report = JSON.parse(stdout) as StatsReport;
    expect(report).toMatchObject(printed);
    expect(Object.keys(report.signals).sort()).toEqual(['logs', 'metrics', 'traces']);
    // The demo names each metric's type as the CLI does.
    expect(printedTypes).toEqual(report.metrics.map(({ metric, type }) => ({ metric, type })));
  });
});

describeS3('npm start against an S3 server (S3_ENDPOINT), stopped by SIGTERM', () => {
  let client: S3Client;
  let bucket: string;
  withS3('demo', (s) => ({ client, bucket } = s));

  test('SIGTERM ends the traffic early: every request simulated is in S3, exit 0', async () => {
    const server = s3Server;
    if (server === undefined) throw new Error('unreachable');
    const cwd = await makeTempDir('otel-s3-demo-test-');
    try {
      const demo = startDemo(cwd, 60, {
        S3_ENDPOINT: server.endpoint,
        S3_ACCESS_KEY_ID: server.accessKeyId,
        S3_SECRET_ACCESS_KEY: server.secretAccessKey,
        S3_REGION: server.region,
        S3_BUCKET: bucket,
      });
      await demo.started;
      const signalled = performance.now();
      demo.child.kill('SIGTERM');
      const { code, stdout, stderr } = await demo.done;
      const millis = performance.now() - signalled;
      expect([code, stdout], stderr).toEqual([0, expect.stringContaining('\nOK: ')]);
      // Not the 60 s it was started for: the last export, the read-back and the summary.
      expect(millis).toBeLessThan(10_000);
      // Progress lines and the signal's, no warning of the exporter, the SDK or Node.js.
      expect(stderr).toContain('SIGTERM: stopping the traffic early');
      expect(stderr).not.toMatch(/\[(warn|error)\]|Warning/);

      // What the demo says it simulated is the stored request counter's last total.
      const simulated = Number(
        /Simulated ([\d,]+) requests/.exec(stdout)?.[1]?.replaceAll(',', ''),
      );
      const prefix = /writes {2}s3:\/\/[^/]+\/(\S+)\/$/m.exec(stdout)?.[1];
      expect(prefix).toMatch(/^demo\//);
      const rows = (await listAndFetch(client, bucket, `${prefix}/`))
        .filter((o) => o.key.includes('/metrics_'))
        .flatMap((o) => dataPointRows(decodeStored(o)))
        .filter((r) => r.metric === 'checkout.requests');
      const newest = rows
        .map((r) => r.time)
        .sort()
        .at(-1);
      const stored = rows.filter((r) => r.time === newest).reduce((n, r) => n + (r.value ?? 0), 0);
      expect(simulated).toBeGreaterThan(0);
      expect(stored).toBe(simulated);
    } finally {
      await removeDir(cwd);
    }
  }, 60_000);
});
