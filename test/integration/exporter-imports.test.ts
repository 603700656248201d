/**
 * A service that only exports pays for the exporter alone: `import { S3MetricExporter }` loads
 * neither the reader, nor the CLI, nor compaction, nor the Parquet modules (unless the format is
 * Parquet: then the column builders, and the metrics' writer, which makes files on the exporter's
 * thread in slices, at the first export), nor commander, cli-progress or hyparquet, nor (with the
 * exporter's own requests) `@aws-sdk/client-s3`. The packed package is held to the same in
 * test/integration/package.test.ts.
 */
import { describe, expect, test } from 'vitest';
import {
  COLUMN_BUILDERS,
  loadedModules,
  METRICS_PARQUET_WRITER,
  readerOnly,
} from '../support/loaded-modules.js';
import { startedTogether } from '../support/together.js';

const ROOT = new URL('../../', import.meta.url).pathname;
/** The children of this file, by the test's name for them: all start at the first test. */
const CHILDREN: Record<string, [file: string, env?: Record<string, string>]> = {
  'reader-and-cli': ['test/support/children/reader-and-cli.ts'],
  'otlp-json': ['test/support/children/exporter-only.ts', { FORMAT: 'otlp-json' }],
  'otlp-proto': ['test/support/children/exporter-only.ts', { FORMAT: 'otlp-proto' }],
  parquet: ['test/support/children/exporter-only.ts', { FORMAT: 'parquet' }],
  sdk: ['test/support/children/exporter-only.ts', { TRANSPORT: 'sdk' }],
  'compact-start': ['test/support/children/compact-start.ts'],
};
const run = startedTogether(Object.keys(CHILDREN), (name) => {
  const [file, env] = CHILDREN[name] ?? [];
  return loadedModules(['--import', 'tsx'], file ?? name, {
    cwd: ROOT,
    ...(env === undefined ? {} : { env }),
  });
});

describe('what an exporter-only import loads', () => {
  test('the recorder sees the reader, the CLI and the Parquet modules where they are imported', async () => {
    const { modules } = await run('reader-and-cli');
    for (const expected of [
      /\/src\/reader\.ts$/,
      /\/src\/reader\/read-metrics\.ts$/,
      /\/src\/cli\/main\.ts$/,
      /\/src\/compact\/compact-metrics\.ts$/,
      /\/src\/encoding\/decode-request\.ts$/,
      /\/src\/signals\/metrics\/parquet\/encode\.js$/,
      /\/node_modules\/commander\//,
      /\/node_modules\/cli-progress\//,
      /\/node_modules\/hyparquet\//,
    ]) {
      expect(
        modules.some((m) => expected.test(m)),
        String(expected),
      ).toBe(true);
    }
  });

  for (const [format, extension] of [
    ['otlp-json', '.json.zst'],
    ['otlp-proto', '.binpb.zst'],
    ['parquet', '.parquet'],
  ] as const) {
    test(`${format}: constructing and exporting loads none of the reader's or the CLI's modules, the Parquet writer for Parquet only`, async () => {
      const { modules, stdout } = await run(format);
      expect(JSON.parse(stdout)).toEqual({ checks: 1, extensions: [extension] });
      expect(modules.some((m) => m.endsWith('/src/exporter/metric-exporter.ts'))).toBe(true);
      const builders = modules.filter((m) => COLUMN_BUILDERS.test(m));
      // Parquet appends to column builders on this thread; OTLP formats never load them.
      expect(builders.length > 0).toBe(format === 'parquet');
      // Parquet of metrics is written on this thread: its writer loads here, the reader does not.
      const writer = modules.filter((m) => METRICS_PARQUET_WRITER.test(m));
      expect(writer.length > 0).toBe(format === 'parquet');
      expect(
        modules.filter(
          (m) => readerOnly(m) && !COLUMN_BUILDERS.test(m) && !METRICS_PARQUET_WRITER.test(m),
        ),
      ).toEqual([]);
      // Its own signed requests: the AWS SDK's S3 client (~11 MiB resident) stays unloaded.
      expect(modules.filter((m) => m.includes('/node_modules/@aws-sdk/client-s3/'))).toEqual([]);
    });
  }

  test("with a caller's s3Client, the exporter stores through it", async () => {
    const { stdout } = await run('sdk');
    expect(JSON.parse(stdout)).toEqual({ checks: 1, extensions: ['.json.zst'] });
  });
});

describe('what `otel-s3 compact --dir` loads', () => {
  // Each is about 0.1 s of module loading on both of the compactor's threads, a fifth of a run
  // with little to do: the S3 client only where a bucket is opened (import()), the SDK never.
  test('neither the S3 client nor an OpenTelemetry SDK', async () => {
    const { modules, stdout } = await run('compact-start');
    expect(JSON.parse(stdout)).toEqual({ partitions: [0, 0, 0] });
    expect(modules.some((m) => m.endsWith('/src/compact/compact-metrics.ts'))).toBe(true);
    expect(
      modules.filter((m) => /\/node_modules\/(@aws-sdk|@smithy|@opentelemetry\/sdk-)/.test(m)),
    ).toEqual([]);
  });
});
