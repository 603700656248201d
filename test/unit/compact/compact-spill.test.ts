import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { METRICS_ROWS } from '../../../src/compact/metrics-rows.js';
import { Spill } from '../../../src/compact/spill.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { batchAt } from '../../support/compaction-data.js';
import { tmpdirEachTest } from '../../support/temp-dir.js';

/** Spilled runs live under TMPDIR; a compactor killed while it merged leaves its directory. */
const spillDir = tmpdirEachTest('otel-s3-spill-');

test("a spill deletes an hour-old directory of this host's dead compactor, and nothing else", () => {
  // A process that has exited: its pid is not running.
  const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
  const host = hostname().replace(/[^A-Za-z0-9.]/g, '_');
  const hourAgo = new Date(Date.now() - 2 * 3_600_000);
  const make = (name: string, old: boolean) => {
    mkdirSync(join(spillDir(), name));
    if (old) utimesSync(join(spillDir(), name), hourAgo, hourAgo);
  };
  make(`otel-s3-compact-${host}-${dead}-old`, true);
  make(`otel-s3-compact-${host}-${dead}-new`, false);
  make(`otel-s3-compact-${host}-${process.pid}-alive`, true);
  make(`otel-s3-compact-other_host-${dead}-old`, true);
  const builders = new MetricColumnBuilders();
  builders.appendResourceMetrics(batchAt('svc', Date.UTC(2026, 0, 1), 3).rm);
  const spill = new Spill(METRICS_ROWS, 64);
  spill.add(builders.seal());
  const left = readdirSync(spillDir()).sort();
  expect(
    left.filter((n) => !n.endsWith('-new') && !n.endsWith('-alive') && !n.includes('other_host')),
  ).toHaveLength(1); // the spill's own directory
  expect(left).not.toContain(`otel-s3-compact-${host}-${dead}-old`);
  expect(left).toContain(`otel-s3-compact-${host}-${dead}-new`);
  expect(left).toContain(`otel-s3-compact-${host}-${process.pid}-alive`);
  expect(left).toContain(`otel-s3-compact-other_host-${dead}-old`);
  expect(spill.runs[0]?.rows).toBe(9);
  spill.remove();
  expect(readdirSync(spillDir())).toHaveLength(3);
});
