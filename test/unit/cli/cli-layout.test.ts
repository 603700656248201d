import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { InvalidOptionError } from '../../../src/base/invalid-option.js';
import type { PointRecord } from '../../../src/cli/point-record.js';
import { readEnvironment } from '../../../src/config/environment.js';
import { resolveConfig, resolveSources } from '../../../src/config/resolve.js';
import { type CliInProcessOptions, lines, runCliInProcess } from '../../support/cli-child.js';
import { renderKey } from '../../support/layout-fixtures.js';
import { encodeObject, sampleMetrics, writeAtKey } from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0, timesAfter } from '../../support/time.js';

const CUSTOM = '{service.name}/%Y/%m/%d/%H/metrics_{uuid}';
const at = timesAfter(CLI_T0, 60_000);

let root: string;
const run = (args: string[], options: CliInProcessOptions = {}) =>
  runCliInProcess(args, { cwd: root, ...options });

/** Objects in the custom layout: one per service, in minute 1 and 2. */
const custom: string[] = [];
/** Objects filed (partitionTime 'data') three minutes before their seal time, at minutes 10, 12. */
const data: string[] = [];

beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-layout-');
  for (const [minute, service] of [
    [1, 'api'],
    [2, 'web'],
  ] as const) {
    const body = encodeObject(await sampleMetrics(service), 'otlp-json', 'gzip');
    const key = renderKey({ prefix: 'prod', keyTemplate: CUSTOM }, at(minute), '.json.gz', {
      attributes: { 'service.name': service },
    });
    await writeAtKey(join(root, 'custom'), key, body);
    custom.push(key);
  }
  const body = encodeObject(await sampleMetrics('svc'), 'otlp-proto', 'none');
  for (const minute of [10, 12]) {
    const key = renderKey({ prefix: 'prod' }, at(minute), '.binpb', { partition: at(minute - 3) });
    await writeAtKey(join(root, 'data'), key, body);
    data.push(key);
  }
  return () => removeDir(root);
});

describe('otel-s3 reads the layout the exporter was given', () => {
  const where = ['--dir', 'custom', '--prefix', 'prod'];

  test('ls and points with --key-template', async () => {
    const ls = await run(['ls', ...where, '--key-template', CUSTOM, '--format', 'jsonl']);
    expect(ls.code).toBe(0);
    expect(lines(ls.stdout).map((l) => (JSON.parse(l) as { key: string }).key)).toEqual(custom);
    const points = await run(['points', ...where, '--key-template', CUSTOM, '--format', 'jsonl']);
    expect(points.code).toBe(0);
    const services = lines(points.stdout).map(
      (l) => (JSON.parse(l) as PointRecord).resource['service.name'],
    );
    expect(new Set(services)).toEqual(new Set(['api', 'web']));
    expect(services).toHaveLength(2 * 6);
  });

  test("the exporter's environment variable sets it too; the flag wins over it", async () => {
    const env = { OTEL_EXPORTER_S3_KEY_TEMPLATE: CUSTOM };
    const ls = await run(['ls', ...where, '--format', 'jsonl'], { env });
    expect(lines(ls.stdout)).toHaveLength(2);
    const points = await run(['points', ...where, '--since', '1h', '--format', 'jsonl'], {
      env: { ...env, OTEL_EXPORTER_S3_PREFIX: 'prod' },
    });
    expect(points.code).toBe(0); // nothing in the last hour, but the template was accepted
    const overridden = await run(['ls', ...where, '--key-template', '%Y/{uuid}'], { env });
    expect(overridden.stdout).toBe('');
    expect(overridden.stderr).toContain('ignored 2 keys');
  });

  test('without it the keys are ignored and counted: nothing readable, and the note says how to read them', async () => {
    const { code, stdout, stderr } = await run(['ls', ...where]);
    expect([code, stdout]).toEqual([5, '']);
    expect(stderr).toContain(
      `otel-s3: nothing readable: ignored 2 keys under ${root}/custom/prod/ that are not in the exporter's layout for this prefix; if the exporter was given a keyTemplate, give it with --key-template`,
    );
  });

  test("partitionTime 'data' from the environment: a range after the partition finds the object", async () => {
    // The minute layout alone: without a format, Parquet's hour partitions widen the listing.
    const args = ['ls', '--dir', 'data', '--prefix', 'prod', '--format', 'jsonl'];
    const range = [
      '--object-format',
      'otlp-json',
      '--from',
      at(9).toISOString(),
      '--to',
      at(11).toISOString(),
    ];
    const keysOf = (stdout: string) =>
      lines(stdout).map((l) => (JSON.parse(l) as { key: string }).key);
    // Filed at minute 7, sealed at 10: the exporter's default reading (upload) prunes it away.
    expect(keysOf((await run([...args, ...range])).stdout)).toEqual([]);
    const env = {
      OTEL_EXPORTER_S3_PARTITION_TIME: 'data',
      OTEL_EXPORTER_S3_MAX_BATCH_AGE: '60000',
      OTEL_METRIC_EXPORT_INTERVAL: '60000',
    };
    expect(keysOf((await run([...args, ...range], { env })).stdout)).toEqual([data[0]]);
    // The same with flags, and in .otel-s3.json.
    const flags = ['--partition-time', 'data', '--max-batch-age', '60000'];
    expect(keysOf((await run([...args, ...range, ...flags])).stdout)).toEqual([data[0]]);
    const cwd = await mkdtemp(join(root, 'config-'));
    await writeFile(
      join(cwd, '.otel-s3.json'),
      JSON.stringify({
        dir: join(root, 'data'),
        partitionTime: 'data',
        exportIntervalMillis: 5000,
      }),
    );
    const fromFile = await run(['ls', '--prefix', 'prod', '--format', 'jsonl', ...range], { cwd });
    expect(keysOf(fromFile.stdout)).toEqual([data[0]]);
  });
});

describe("bad layout options: usage errors with the exporter's messages and where they came from", () => {
  /** What the exporter says of `value` for `option` passed in code. */
  function exporterDetail(option: string, value: unknown): string {
    try {
      resolveConfig({ bucket: 'b', [option]: value });
    } catch (error) {
      if (error instanceof InvalidOptionError) return error.detail;
    }
    throw new Error('expected an InvalidOptionError');
  }

  /** What the exporter warns of these environment variables (before "using the default"). */
  function exporterWarning(env: Record<string, string>): string {
    const warnings: string[] = [];
    const warn = (error: InvalidOptionError) => warnings.push(error.detail);
    resolveSources({ options: { bucket: 'b' }, environment: readEnvironment(env, warn), warn });
    expect(warnings).toHaveLength(1);
    return warnings[0] as string;
  }

  test.each<[string, string, string, unknown]>([
    ['--key-template', 'keyTemplate', 'year=%Y/metrics', 'year=%Y/metrics'],
    ['--object-format', 'format', 'csv', 'csv'],
    ['--file-prefix', 'filePrefix', 'a/b', 'a/b'],
    ['--partition-time-zone', 'partitionTimeZone', 'Europe/Paris', 'Europe/Paris'],
    ['--partition-time', 'partitionTime', 'seal', 'seal'],
    ['--max-batch-age', 'maxBatchAgeMillis', '0', 0],
  ])('flag %s (option %s)', async (flag, option, text, value) => {
    const { code, stderr } = await run(['ls', '--dir', 'custom', flag, text]);
    expect(code).toBe(2);
    const detail = exporterDetail(option, value).replace(
      `option ${option}`,
      `flag ${flag} (option ${option})`,
    );
    expect(stderr).toBe(`otel-s3: ${detail}\n`);
  });

  test.each<[Record<string, string>]>([
    [{ OTEL_EXPORTER_S3_KEY_TEMPLATE: '%Q/{uuid}' }],
    [{ OTEL_EXPORTER_S3_FORMAT: 'arrow' }],
    [{ OTEL_EXPORTER_S3_FILE_PREFIX: '..' }],
    [{ OTEL_EXPORTER_S3_PARTITION_TIME_ZONE: 'Mars' }],
    [{ OTEL_EXPORTER_S3_PARTITION_TIME: 'never' }],
    [{ OTEL_EXPORTER_S3_MAX_BATCH_AGE: '1m' }],
  ])('environment %j', async (env) => {
    const { code, stderr } = await run(['ls', '--dir', 'custom'], { env });
    expect(code).toBe(2);
    expect(stderr).toBe(`otel-s3: ${exporterWarning(env)}\n`);
  });

  test('OTEL_METRIC_EXPORT_INTERVAL and a config file key are named too', async () => {
    const env = await run(['ls', '--dir', 'custom'], {
      env: { OTEL_METRIC_EXPORT_INTERVAL: 'soon' },
    });
    expect(env.stderr).toBe(
      'otel-s3: invalid environment variable OTEL_METRIC_EXPORT_INTERVAL (option exportIntervalMillis): "soon" (expected an integer of milliseconds from 1 to 2147483647)\n',
    );
    const cwd = await mkdtemp(join(root, 'bad-config-'));
    await writeFile(join(cwd, '.otel-s3.json'), JSON.stringify({ dir: '.', keyTemplate: 7 }));
    const file = await run(['ls'], { cwd });
    expect(file.code).toBe(2);
    expect(file.stderr).toBe(
      `otel-s3: ${exporterDetail('keyTemplate', 7).replace('option keyTemplate', `"keyTemplate" in ${join(cwd, '.otel-s3.json')} (option keyTemplate)`)}\n`,
    );
  });

  test('a bad value of a variable the CLI does not read is none of its business', async () => {
    const args = ['ls', '--dir', 'custom', '--prefix', 'prod', '--key-template', CUSTOM];
    const { code, stdout } = await run(args, {
      env: { OTEL_EXPORTER_S3_COMPRESSION: 'brotli', OTEL_EXPORTER_S3_TAGS: '=' },
    });
    expect(code).toBe(0);
    expect(lines(stdout)).toHaveLength(2);
  });
});

describe('a bucket written with the defaults needs no flag; keys still ignored name the flag', () => {
  /** Parquet's default layout, written out (the test's own copy, not the table's). */
  const HOURS = 'year=%Y/month=%m/day=%d/hour=%H/{filePrefix}metrics_{uuid}';
  let hours: string[];
  let minutes: string[];
  let prefixed: string[];

  beforeAll(async () => {
    const body = encodeObject(await sampleMetrics('svc'), 'otlp-json', 'none');
    // Parquet's hour layout (here its OTLP/JSON fallback objects), the OTLP minute layout, both
    // under one prefix; and objects of an exporter given filePrefix 'app-'.
    hours = [1, 2].map((m) => renderKey({ prefix: 'lake', keyTemplate: HOURS }, at(m), '.json'));
    minutes = [3].map((m) => renderKey({ prefix: 'lake' }, at(m), '.json'));
    prefixed = [4, 5].map((m) => renderKey({ prefix: 'prod', filePrefix: 'app-' }, at(m), '.json'));
    for (const key of [...hours, ...minutes, ...prefixed]) {
      await writeAtKey(join(root, 'defaults'), key, body);
    }
    // The package's own bookkeeping under the prefix: neither read nor counted.
    await writeAtKey(join(root, 'defaults'), 'lake/_otel_s3_compaction/lease.json', body);
  });

  const where = (prefix: string) => ['--dir', 'defaults', '--prefix', prefix];
  const keysOf = (stdout: string) =>
    lines(stdout).map((l) => (JSON.parse(l) as { key: string }).key);

  test('ls and stats read both default layouts under one prefix without a flag', async () => {
    const ls = await run(['ls', ...where('lake'), '--format', 'jsonl']);
    expect([ls.code, ls.stderr]).toEqual([0, '']);
    expect(keysOf(ls.stdout).sort()).toEqual([...hours, ...minutes].sort());
    const stats = await run(['stats', ...where('lake'), '--format', 'json']);
    expect([stats.code, stats.stderr]).toEqual([0, '']);
    expect(JSON.parse(stats.stdout)).toMatchObject({ objects: 3, keysSkipped: 0 });
  });

  test('a format that names another layout: nothing readable (5), and the note names the flag', async () => {
    const { code, stdout, stderr } = await run([
      'stats',
      ...where('lake'),
      '--object-format',
      'otlp-proto',
      '--from',
      at(0).toISOString(),
      '--to',
      at(3).toISOString(),
    ]);
    expect(code).toBe(5);
    expect(stdout).toContain('objects       0');
    expect(stderr).toBe(
      `otel-s3: nothing readable: ignored 2 keys under ${root}/defaults/lake/ that are not in the exporter's layout for this prefix; they are read with --object-format parquet\n`,
    );
  });

  test('another filePrefix: the note names --file-prefix, which then reads them', async () => {
    const without = await run(['points', ...where('prod'), '--format', 'jsonl']);
    expect([without.code, without.stdout]).toEqual([5, '']);
    expect(without.stderr).toBe(
      `otel-s3: nothing readable: ignored 2 keys under ${root}/defaults/prod/ that are not in the exporter's layout for this prefix; they are read with --file-prefix app-\n`,
    );
    const withIt = await run([
      'ls',
      ...where('prod'),
      '--file-prefix',
      'app-',
      '--format',
      'jsonl',
    ]);
    expect([withIt.code, keysOf(withIt.stdout)]).toEqual([0, prefixed]);
  });

  test('a misspelled OTEL_EXPORTER_S3_* variable is named on stderr, with what it probably means', async () => {
    const { code, stderr } = await run(['ls', '--dir', 'defaults', '--format', 'jsonl'], {
      env: { OTEL_EXPORTER_S3_PREFXI: 'lake' },
    });
    // Ignored, so the prefix is the bucket's root, where nothing is in the layout.
    expect(code).toBe(5);
    expect(stderr.split('\n')[0]).toBe(
      'otel-s3: unknown environment variable OTEL_EXPORTER_S3_PREFXI (did you mean OTEL_EXPORTER_S3_PREFIX?); it is ignored',
    );
  });
});
