import { describe, expect, test } from 'vitest';
import { noLossTarget, type ServiceRun } from '../../../bench/lib/footprint-service.js';

/**
 * The footprint and Parquet-peak suites compare the memory and CPU of a service running our
 * exporter with baselines: a run of ours that dropped data or uploaded nothing did less work,
 * and must fail the suite (a required target), not pass beside a warning.
 */

const run = (over: Partial<ServiceRun>): ServiceRun => ({
  mode: 'otlp-json',
  series: 200,
  seconds: 10,
  rssBeforeImport: 0,
  imported: { rss: 0, cpuMillis: 0 },
  cpuMillis: 100,
  shutdownMillis: 1,
  samples: [],
  uploaded: { batches: 3, points: 1_000, dropped: 0 },
  ...over,
});

describe('the no-loss target of the service runs', () => {
  test('passes when every run of ours uploaded and dropped nothing; baselines do not count', () => {
    const t = noLossTarget([
      run({ mode: 'none', uploaded: undefined }),
      run({ mode: 'otlp-http', uploaded: undefined }),
      run({}),
      run({ mode: 'parquet' }),
    ]);
    expect(t.pass).toBe(true);
    expect(t.required).toBe(true);
  });

  test('fails on dropped points, no batch uploaded, or no report from ours', () => {
    for (const uploaded of [
      { batches: 3, points: 900, dropped: 100 },
      { batches: 0, points: 0, dropped: 0 },
      undefined,
    ]) {
      const t = noLossTarget([run({ mode: 'none' }), run({ mode: 'parquet', uploaded })]);
      expect(t.pass).toBe(false);
      expect(t.required).toBe(true);
    }
  });

  test('three signals: a span or log record exporter of ours that lost data or did not report fails', () => {
    const ok = { batches: 2, items: 500, dropped: 0 };
    expect(noLossTarget([run({ signals: { spans: ok, logs: ok } })]).pass).toBe(true);
    expect(noLossTarget([run({ signals: { spans: ok, logs: { ...ok, dropped: 3 } } })]).pass).toBe(
      false,
    );
    expect(noLossTarget([run({ signals: { spans: ok } })]).pass).toBe(false);
  });

  test('no run of ours at all is no pass', () => {
    expect(noLossTarget([run({ mode: 'none' })]).pass).toBe(false);
  });
});
