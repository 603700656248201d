import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { StatsReport } from '../../../src/cli/commands/stats.js';
import { runCliInProcess } from '../../support/cli-child.js';
import { keyAt, writeAtKey } from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0 } from '../../support/time.js';

let root: string;
const T = String(BigInt(CLI_T0.getTime()) * 1_000_000n);

beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-stats-types-');
  const resource = { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] };
  // One name, two instruments (as two scopes may define it): a counter of 2 points, a gauge of 1.
  const point = (region: string) => ({
    timeUnixNano: T,
    asInt: '1',
    attributes: [{ key: 'region', value: { stringValue: region } }],
  });
  const request = {
    resourceMetrics: [
      {
        resource,
        scopeMetrics: [
          {
            scope: { name: 'a' },
            metrics: [
              {
                name: 'queue.size',
                sum: {
                  dataPoints: [point('eu'), point('us')],
                  aggregationTemporality: 2,
                  isMonotonic: true,
                },
              },
            ],
          },
          {
            scope: { name: 'b' },
            metrics: [{ name: 'queue.size', gauge: { dataPoints: [point('eu')] } }],
          },
        ],
      },
    ],
  };
  await writeAtKey(
    join(root, 'd'),
    keyAt('p', CLI_T0, '.json'),
    Buffer.from(`${JSON.stringify(request)}\n`),
  );
  // One counter name in two scopes, with the same attributes: two series (docs/reading.md: a
  // series is one resource, scope and attribute set).
  const counter = (scope: string) => ({
    scope: { name: scope },
    metrics: [
      {
        name: 'jobs.done',
        sum: { dataPoints: [point('eu')], aggregationTemporality: 2, isMonotonic: true },
      },
    ],
  });
  await writeAtKey(
    join(root, 'scopes'),
    keyAt('p', CLI_T0, '.json'),
    Buffer.from(
      `${JSON.stringify({ resourceMetrics: [{ resource, scopeMetrics: [counter('a'), counter('b')] }] })}\n`,
    ),
  );
});
afterAll(() => removeDir(root));

test('stats: a metric name of two instrument types is a row per type, not one of the first type', async () => {
  const { code, stdout } = await runCliInProcess(
    ['stats', '--dir', 'd', '--prefix', 'p', '--format', 'json'],
    { cwd: root },
  );
  expect(code).toBe(0);
  const report = JSON.parse(stdout) as StatsReport;
  expect(report.metrics).toEqual([
    { metric: 'queue.size', type: 'counter', series: 2, dataPoints: 2 },
    { metric: 'queue.size', type: 'gauge', series: 1, dataPoints: 1 },
  ]);
});

test("stats' metrics table: the total row sums the series of its rows, as their data points", async () => {
  const { code, stdout } = await runCliInProcess(['stats', '--dir', 'd', '--prefix', 'p'], {
    cwd: root,
  });
  expect(code).toBe(0);
  // The fixture's rows: the counter's 2 series (eu, us) of 2 points, the gauge's 1 of 1.
  expect(stdout).toMatch(
    /\nmetric +type +series +data points\nqueue\.size +counter +2 +2\nqueue\.size +gauge +1 +1\ntotal +3 +3\n$/,
  );
});

test('stats: a series is one resource, scope and attribute set: two scopes, two series', async () => {
  const { code, stdout } = await runCliInProcess(
    ['stats', '--dir', 'scopes', '--prefix', 'p', '--format', 'json'],
    { cwd: root },
  );
  expect(code).toBe(0);
  const report = JSON.parse(stdout) as StatsReport;
  expect(report.metrics).toEqual([
    { metric: 'jobs.done', type: 'counter', series: 2, dataPoints: 2 },
  ]);
});
