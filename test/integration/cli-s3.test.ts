import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { beforeAll, expect, test } from 'vitest';
import type { StatsReport } from '../../src/cli/commands/stats.js';
import type { PointRecord } from '../../src/cli/point-record.js';
import { S3MetricExporter } from '../../src/index.js';
import { dataPointRows, type MetricObject, readMetrics } from '../../src/reader.js';
import { type CliRun, lines, runCliChild } from '../support/cli-child.js';
import { type Exported, exportEveryCombination } from '../support/exported-objects.js';
import { instrumentValues, keyAt, rawRowOf, recordedValues } from '../support/reader-fixtures.js';
import { catLine, recordedRequest } from '../support/recorded-request.js';
import {
  cliEnvironment,
  connection,
  describeS3,
  s3Server,
  skipReason,
  withS3,
} from '../support/s3.js';
import { manualProvider, recordEveryInstrument } from '../support/service.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

if (!s3Server) console.warn(`otel-s3 CLI tests skipped: ${skipReason}`);

describeS3('the otel-s3 CLI against a real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  let cwd: string;
  let exported: Exported[];
  /** The stored objects, as readMetrics reads them. */
  let objects: MetricObject[];
  /** The environment a user of the CLI would set: the server, the bucket, AWS credentials. */
  let env: Record<string, string>;
  const otelS3 = (args: string[], extraEnv: Record<string, string> = {}): Promise<CliRun> =>
    runCliChild(args, { cwd, env: { ...env, ...extraEnv } });

  withS3('cli', (s) => ({ client, bucket } = s));
  beforeAll(async () => {
    cwd = await makeTempDir('otel-s3-cli-');
    exported = await exportEveryCombination(bucket, 'cli');
    objects = [];
    for await (const o of readMetrics({ bucket, prefix: 'cli', ...connection() })) objects.push(o);
    env = cliEnvironment(bucket, 'cli');
    return () => removeDir(cwd);
  });

  test('points --format jsonl: every instrument type of every format and compression, as recorded', async () => {
    const { code, stdout, stderr } = await otelS3(['points', '--since', '1h', '--format', 'jsonl']);
    expect([code, stderr]).toEqual([0, '']);
    const rows = lines(stdout).map((l) => rawRowOf(JSON.parse(l) as PointRecord));
    expect(rows).toHaveLength(6 * exported.length);
    for (const { service, recorded } of exported) {
      const values = instrumentValues(rows.filter((r) => r.resource['service.name'] === service));
      expect(values).toEqual(recordedValues(service, recorded));
    }
  });

  test('cat: one OTLP/JSON line per object, in key order, each the request its service recorded', async () => {
    const { code, stdout } = await otelS3(['cat']);
    expect(code).toBe(0);
    // Each line read by the strict reference decoder, against the SDK's collection as the
    // official serializer writes it; the order is that of the keys readMetrics lists.
    const expected = objects.map((o) => {
      const service = dataPointRows(o.request)[0]?.resource['service.name'];
      const recorded = exported.find((e) => e.service === service)?.recorded;
      if (recorded === undefined) throw new Error(`${o.key}: no service recorded`);
      return recordedRequest(recorded);
    });
    expect(lines(stdout).map(catLine)).toEqual(expected);
  });

  test('ls: every object with its exact stored size; stats: the totals and data points per metric', async () => {
    const [ls, stats, listed] = await Promise.all([
      otelS3(['ls', '--format', 'jsonl']),
      otelS3(['stats', '--format', 'json']),
      client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'cli/' })),
    ]);
    expect(ls.code).toBe(0);
    const stored = (listed.Contents ?? []).map((o) => ({ key: o.Key, size: o.Size }));
    expect(
      lines(ls.stdout)
        .map((l) => JSON.parse(l) as { key: string; size: number })
        .map(({ key, size }) => ({ key, size })),
    ).toEqual(stored);

    expect(stats.code).toBe(0);
    const report = JSON.parse(stats.stdout) as StatsReport;
    expect(report).toMatchObject({
      objects: 6,
      bytes: stored.reduce((sum, o) => sum + (o.size ?? 0), 0),
      dataPoints: 36,
      objectsUnreadable: 0,
    });
    expect(report.metrics.map((m) => [m.metric, m.type, m.dataPoints])).toEqual([
      ['cpu.temperature', 'gauge', 6],
      ['http.active', 'up-down-counter', 6],
      ['http.latency', 'histogram', 6],
      ['http.requests', 'counter', 12],
      ['payload.size', 'exponential-histogram', 6],
    ]);
    expect(report.compressionRatio).toBeGreaterThan(1);
  });

  test('flags win over environment variables', async () => {
    const { code, stdout } = await otelS3(['ls', '--bucket', bucket, '--prefix', 'cli'], {
      OTEL_EXPORTER_S3_BUCKET: 'no-such-bucket-from-env',
      OTEL_EXPORTER_S3_PREFIX: 'elsewhere',
    });
    expect(code).toBe(0);
    expect(lines(stdout)).toHaveLength(6);
  });

  test('a custom keyTemplate the exporter wrote: read with --key-template, or its environment variable', async () => {
    const template = '{service.name}/%Y/%m/%d/%H/metrics_{uuid}';
    for (const service of ['api', 'web']) {
      const exporter = new S3MetricExporter({
        bucket,
        prefix: 'tmpl',
        keyTemplate: template,
        ...connection(),
      });
      const provider = manualProvider(exporter, service);
      recordEveryInstrument(provider);
      await provider.shutdown();
      expect(exporter.stats().batchesUploaded).toBe(1);
    }
    const byFlag = await otelS3([
      'ls',
      '--prefix',
      'tmpl',
      '--since',
      '1h',
      '--key-template',
      template,
      '--format',
      'jsonl',
    ]);
    expect([byFlag.code, byFlag.stderr]).toEqual([0, '']);
    const keys = lines(byFlag.stdout).map((l) => (JSON.parse(l) as { key: string }).key);
    expect(keys).toEqual([
      expect.stringMatching(/^tmpl\/api\/\d{4}\//),
      expect.stringMatching(/^tmpl\/web\//),
    ]);

    const env = { OTEL_EXPORTER_S3_PREFIX: 'tmpl', OTEL_EXPORTER_S3_KEY_TEMPLATE: template };
    const points = await otelS3(['points', '--since', '1h', '--format', 'jsonl'], env);
    expect([points.code, points.stderr]).toEqual([0, '']);
    const services = lines(points.stdout).map(
      (l) => (JSON.parse(l) as PointRecord).resource['service.name'],
    );
    expect(services).toEqual([...Array(6).fill('api'), ...Array(6).fill('web')]);

    // Read as the default layout, they are ignored and counted.
    const asDefault = await otelS3(['ls', '--prefix', 'tmpl']);
    expect(asDefault.stdout).toBe('');
    expect(asDefault.stderr).toContain('ignored 2 keys');
  });

  test('an unreadable object: reported and skipped, the rest printed, exit code 1', async () => {
    const now = Date.now();
    const broken = keyAt('cli-broken', new Date(now), '.json.gz');
    const good = keyAt('cli-broken', new Date(now + 1), '.json.zst');
    const zstdJson = objects.find((o) => o.key.endsWith('.json.zst'));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: broken, Body: 'not gzip' }));
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: good, Body: zstdJson?.bytes }));
    const { code, stdout, stderr } = await otelS3(['points', '--prefix', 'cli-broken']);
    expect(code).toBe(1);
    expect(lines(stdout)).toHaveLength(6);
    expect(stderr).toContain(`otel-s3: cannot read ${broken} (decompress): invalid gzip data`);
    expect(stderr).toContain('1 object of 2 objects could not be read and was skipped');
  });

  test.each<[string, number, string[], Record<string, string>, RegExp[]]>([
    [
      'a wrong secret key',
      3,
      ['ls'],
      { AWS_SECRET_ACCESS_KEY: 'wrong-secret-key-000000000000000000000000' },
      [
        /cannot list s3:\/\/.*\/cli\/: SignatureDoesNotMatch \(HTTP 403\); the secret key does not match the access key id: check the credentials/,
      ],
    ],
    [
      'an unknown access key',
      3,
      ['points'],
      { AWS_ACCESS_KEY_ID: 'NOSUCHKEY00000000000' },
      [/InvalidAccessKeyId \(HTTP 403\); the access key id is unknown to the server/],
    ],
    [
      'a missing bucket',
      3,
      ['stats', '--bucket', 'no-such-bucket-otel-s3'],
      {},
      [
        /NoSuchBucket \(HTTP 404\); the bucket does not exist/,
        /\(bucket "no-such-bucket-otel-s3" from flag --bucket, endpoint .* from environment variable OTEL_EXPORTER_S3_ENDPOINT\)/,
      ],
    ],
    [
      'an endpoint nobody listens on',
      4,
      ['ls'],
      { OTEL_EXPORTER_S3_ENDPOINT: 'http://127.0.0.1:9' },
      [
        /ECONNREFUSED.*is the endpoint \(http:\/\/127\.0\.0\.1:9\) right and the server reachable\?/,
      ],
    ],
    [
      'compact, an endpoint nobody listens on',
      4,
      ['compact', '--dry-run'],
      { OTEL_EXPORTER_S3_ENDPOINT: 'http://127.0.0.1:9' },
      // The endpoint came from the environment: no s3Client was given to blame.
      [
        /ECONNREFUSED.*; is the endpoint \(http:\/\/127\.0\.0\.1:9\) right and the server reachable\?\n/,
      ],
    ],
    [
      'a bad environment variable',
      2,
      ['ls'],
      { OTEL_EXPORTER_S3_FORCE_PATH_STYLE: 'maybe' },
      [
        /invalid environment variable OTEL_EXPORTER_S3_FORCE_PATH_STYLE \(option forcePathStyle\): "maybe" \(expected true or false\)/,
      ],
    ],
  ])(
    '%s: exit code %i and a message that says what to fix',
    async (_name, exitCode, args, extraEnv, messages) => {
      const { code, stdout, stderr } = await otelS3(args, extraEnv);
      expect(code).toBe(exitCode);
      expect(stdout).toBe('');
      for (const message of messages) expect(stderr).toMatch(message);
    },
  );
});
