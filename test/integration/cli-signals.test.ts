/**
 * Spans and log records recorded through the official SDKs, exported by S3SpanExporter and
 * S3LogRecordExporter to a real S3 server in every format, and read back by the otel-s3 CLI in
 * a child process: the trace's waterfall, its spans and log records as rows, and stats.
 */
import { beforeAll, expect, test } from 'vitest';
import type { StatsReport } from '../../src/cli/commands/stats.js';
import { S3LogRecordExporter, S3SpanExporter } from '../../src/index.js';
import type { LogRecordRow, SpanRow } from '../../src/reader.js';
import { type CliRun, lines, runCliChild } from '../support/cli-child.js';
import { hrTimeNanos } from '../support/reader-fixtures.js';
import { cliEnvironment, connection, describeS3, withS3 } from '../support/s3.js';
import { type RecordedTrace, recordTrace } from '../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const FORMATS = [
  { format: 'otlp-json', compression: 'zstd' },
  { format: 'otlp-proto', compression: 'gzip' },
  { format: 'otlp-json', compression: 'none' },
] as const;

describeS3('otel-s3 spans, logs and trace over what the exporters stored', () => {
  let bucket: string;
  let cwd: string;
  let recorded: RecordedTrace;
  let env: Record<string, string>;
  const otelS3 = (args: string[]): Promise<CliRun> => runCliChild(args, { cwd, env });

  withS3('cli-signals', (s) => ({ bucket } = s));
  beforeAll(async () => {
    cwd = await makeTempDir('otel-s3-cli-signals-');
    recorded = await recordTrace();
    // The same trace under three prefixes, one per format and compression.
    for (const { format, compression } of FORMATS) {
      const prefix = `${format}-${compression}`;
      const options = { bucket, prefix, format, compression, ...connection() };
      const spans = new S3SpanExporter(options);
      const logs = new S3LogRecordExporter(options);
      await new Promise((resolve) => spans.export(recorded.spans, resolve));
      await new Promise((resolve) => logs.export(recorded.logs, resolve));
      await Promise.all([spans.shutdown(), logs.shutdown()]);
    }
    env = cliEnvironment(bucket, '');
    return () => removeDir(cwd);
  });

  test.each(FORMATS)(
    '$format+$compression: the waterfall of the recorded trace, its rows and stats',
    async ({ format, compression }) => {
      const at = ['--prefix', `${format}-${compression}`, '--since', '1h'];
      const waterfall = await otelS3(['trace', recorded.traceId, '--logs', ...at]);
      expect([waterfall.code, waterfall.stderr]).toEqual([0, '']);
      const names = lines(waterfall.stdout)
        .slice(2)
        .map((l) => /^[│├└─ ]*(.+?) {3}/u.exec(l)?.[1]);
      expect(names).toEqual([
        'GET /checkout',
        'SELECT orders',
        'INFO querying orders',
        'POST /cart',
        'add item',
        'validate',
        'ERROR {"message":"item out of stock","sku":"A-42"}',
        'render',
        'INFO checkout done',
      ]);

      const spans = await otelS3([
        'spans',
        '--format',
        'jsonl',
        '--trace-id',
        recorded.traceId,
        ...at,
      ]);
      expect(spans.code).toBe(0);
      const rows = lines(spans.stdout).map((l) => JSON.parse(l) as SpanRow);
      const durations = new Map(rows.map((r) => [r.spanId, r.duration]));
      for (const span of recorded.spans) {
        const ns = BigInt(hrTimeNanos(span.endTime)) - BigInt(hrTimeNanos(span.startTime));
        expect(durations.get(span.spanContext().spanId), span.name).toBe(Number(ns) / 1e6);
      }

      const logs = await otelS3(['logs', '--format', 'jsonl', '--severity', 'error', ...at]);
      const errors = lines(logs.stdout).map((l) => JSON.parse(l) as LogRecordRow);
      expect(errors.map((r) => [r.service, r.body, r.severityNumber])).toEqual([
        ['cart', { message: 'item out of stock', sku: 'A-42' }, 17],
      ]);

      const stats = await otelS3(['stats', '--format', 'json', ...at]);
      const report = JSON.parse(stats.stdout) as StatsReport;
      expect([report.spans, report.logRecords, report.keysSkipped]).toEqual([6, 4, 0]);
    },
  );
});
