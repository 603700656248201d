/**
 * Non-finite doubles (NaN, ±Infinity) in span attributes and log bodies, recorded through the
 * official SDKs, stored by the exporters in OTLP/JSON and in Parquet on a real S3 server, and read
 * back by the otel-s3 CLI (in this process: 21 commands, each a second and a half as a child):
 * the same command finds and shows the same values whatever the format, and never shows a NaN
 * as `null`.
 */
import { resourceFromAttributes } from '@opentelemetry/resources';
import { beforeAll, expect, test, vi } from 'vitest';
import { S3LogRecordExporter, S3SpanExporter } from '../../src/index.js';
import { type CliRun, lines, runCliInProcess } from '../support/cli-child.js';
import { oneBatchLoggers, oneBatchTracerProvider } from '../support/one-batch-providers.js';
import { cliEnvironment, connection, describeS3, withS3 } from '../support/s3.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const FORMATS = ['otlp-json', 'otlp-proto', 'parquet'] as const;

/** What the test records: a span's attributes and a log record's body. */
const ATTRIBUTES = { ratio: Number.NaN, limit: Number.POSITIVE_INFINITY, floor: -Infinity };
const BODY = Number.NaN;

describeS3('otel-s3 spans and logs over non-finite doubles', () => {
  let bucket: string;
  let cwd: string;
  let env: Record<string, string>;
  const otelS3 = (args: string[]): Promise<CliRun> => runCliInProcess(args, { cwd, env });

  withS3('cli-non-finite', (s) => ({ bucket } = s));
  beforeAll(async () => {
    cwd = await makeTempDir('otel-s3-cli-non-finite-');
    for (const format of FORMATS) {
      const options = { bucket, prefix: format, format, ...connection() };
      const resource = resourceFromAttributes({ 'service.name': 'pricing' });
      const tracers = oneBatchTracerProvider(resource, new S3SpanExporter(options));
      const { provider: logs, loggers } = oneBatchLoggers(
        resource,
        new S3LogRecordExporter(options),
      );
      tracers.getTracer('t').startSpan('quote', { attributes: ATTRIBUTES }).end();
      loggers[0]?.emit({ severityNumber: 9, body: BODY });
      await Promise.all([tracers.shutdown(), logs.shutdown()]);
    }
    env = cliEnvironment(bucket, '');
    // The SDK's credential chain reads this process's environment, not the one handed to the CLI.
    vi.stubEnv('AWS_ACCESS_KEY_ID', env.AWS_ACCESS_KEY_ID);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', env.AWS_SECRET_ACCESS_KEY);
    return () => {
      vi.unstubAllEnvs();
      return removeDir(cwd);
    };
  });

  test.each(FORMATS)('%s: found and shown by the values recorded', async (format) => {
    const at = ['--prefix', format];
    // Each recorded value, spelled as JavaScript (and the Parquet tables) spell it.
    for (const [key, value] of Object.entries(ATTRIBUTES)) {
      const found = await otelS3([
        'spans',
        '--format',
        'jsonl',
        '--attribute',
        `${key}=${value}`,
        ...at,
      ]);
      expect([found.code, lines(found.stdout).length], `${key}=${value}`).toEqual([0, 1]);
    }
    const table = await otelS3(['spans', '--format', 'table', ...at]);
    expect(lines(table.stdout)[1]).toMatch(/ ratio=NaN limit=Infinity floor=-Infinity$/);

    const body = await otelS3(['logs', '--format', 'table', '--body', String(BODY), ...at]);
    expect(body.code).toBe(0);
    expect(lines(body.stdout)[1]).toMatch(/ NaN$/);
  });
});
