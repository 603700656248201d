import { expect, test } from 'vitest';
import { captureDiag } from '../../support/diag-capture.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { GOOD, timeItems } from '../../support/time-items.js';

/**
 * An export the exporter cannot encode (OTLP) or append (Parquet columns) is answered FAILED and
 * counted each time; the same failure, repeated at every export (a cumulative metric that keeps
 * its bad point), is logged once until an export is appended again.
 */

const logged = captureDiag();
const { gauge } = timeItems('append-failures');
const bad = gauge(GOOD, [Number.POSITIVE_INFINITY, 0]);
const good = gauge(GOOD, GOOD);

test.each(['otlp-proto', 'parquet'] as const)(
  '%s: a failure that repeats is logged once per streak, and its end once',
  async (format) => {
    const s3 = new ScriptedS3();
    const exporter = scriptedExporter(s3, { format });
    const exportOf = (item: typeof bad) =>
      new Promise<{ code: number }>((resolve) => exporter.export(item, resolve));
    const lines = () => logged.splice(0).filter((l) => l.level === 'error' || l.level === 'info');
    try {
      logged.splice(0);
      for (let i = 0; i < 5; i++) expect((await exportOf(bad)).code).toBe(1);
      expect(exporter.stats().exportsRejected).toBe(5);
      const errors = lines();
      expect(errors.map((l) => l.level)).toEqual(['error']);
      expect(errors[0]?.text).toBe(
        'otel-s3-exporter: could not encode metrics: RangeError: HrTime [Infinity, 0] is not a time: its seconds and nanoseconds must be finite numbers; the export is answered FAILED (counted in stats().exportsRejected), and this failure is not logged again until an export is appended',
      );
      expect((await exportOf(good)).code).toBe(0);
      expect(lines().map((l) => l.text)).toEqual([
        'otel-s3-exporter: metrics exporter: exports are appended again, after 5 failures to encode or append one (each answered FAILED, counted in stats().exportsRejected)',
      ]);
      // A new streak is logged again.
      expect((await exportOf(bad)).code).toBe(1);
      expect(lines().map((l) => l.level)).toEqual(['error']);
      expect(exporter.stats().exportsRejected).toBe(6);
    } finally {
      await exporter.shutdown();
    }
  },
);
