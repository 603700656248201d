import { existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { beforeAll, expect, test } from 'vitest';
import type { StatsReport } from '../../src/cli/commands/stats.js';
import type { PointRecord } from '../../src/cli/point-record.js';
import { lines, runCliChild, splitTimeReport } from '../support/cli-child.js';
import { nestedJsonObject, withGaugeTime, zstdBomb } from '../support/hostile-objects.js';
import {
  encodeObject,
  instrumentValues,
  keyAt,
  rawRowOf,
  recordedValues,
  sampleMetrics,
} from '../support/reader-fixtures.js';
import { cliEnvironment, describeS3, s3Server, skipReason, withS3 } from '../support/s3.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

if (!s3Server) console.warn(`otel-s3 hostile-object tests skipped: ${skipReason}`);

const GiB = 1024 ** 3;
const MB = 1000 * 1000;
/** GNU time, to read the CLI's peak RSS as the kernel counts it. */
const TIME = '/usr/bin/time';

describeS3('otel-s3 against hostile objects in a real S3 bucket', () => {
  let client: S3Client;
  let bucket: string;
  let cwd: string;
  let env: Record<string, string>;
  const keys = {
    good1: keyAt('hostile', new Date(Date.now() - 5000), '.json.zst'),
    bomb: keyAt('hostile', new Date(Date.now() - 4000), '.json.zst'),
    deep: keyAt('hostile', new Date(Date.now() - 3000), '.json.gz'),
    badTime: keyAt('hostile', new Date(Date.now() - 2000), '.json'),
    good2: keyAt('hostile', new Date(Date.now() - 1000), '.binpb.gz'),
  };
  let bombBytes: number;
  let rm1: ResourceMetrics;

  withS3('hostile', (s) => ({ client, bucket } = s));
  beforeAll(async () => {
    cwd = await makeTempDir('otel-s3-hostile-');
    rm1 = await sampleMetrics('hostile-svc');
    const bomb = await zstdBomb(10 * GiB);
    bombBytes = bomb.length;
    const bodies: Record<keyof typeof keys, Uint8Array> = {
      good1: encodeObject(rm1, 'otlp-json', 'zstd'),
      bomb,
      deep: gzipSync(nestedJsonObject(200_000)),
      badTime: withGaugeTime(encodeObject(rm1, 'otlp-json', 'none'), '1000000000000000000000000'),
      good2: encodeObject(rm1, 'otlp-proto', 'gzip'),
    };
    for (const [name, body] of Object.entries(bodies)) {
      const key = keys[name as keyof typeof keys];
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    }
    env = cliEnvironment(bucket, 'hostile');
    return () => removeDir(cwd);
  }, 120_000);

  test('the bomb is a 10 GiB zstd stream stored in well under 1 MB', () => {
    expect(bombBytes).toBeLessThan(MB);
  });

  test.skipIf(!existsSync(TIME))(
    'points: every good point printed, each hostile object skipped with its reason, exit code 1, peak RSS under 300 MB',
    async () => {
      const run = await runCliChild(['points', '--format', 'jsonl'], {
        cwd,
        env,
        wrapper: [TIME, '-v'],
        timeoutMillis: 60_000,
      });
      const { maxRssBytes, stderr } = splitTimeReport(run.stderr);
      console.info(
        `otel-s3 points over a 10 GiB zstd bomb: peak RSS ${(maxRssBytes / MB).toFixed(0)} MB`,
      );
      expect(run.code).toBe(1);
      expect(lines(stderr)).toEqual([
        `otel-s3: cannot read ${keys.bomb} (decompress): decompressed size is over the --max-decompressed-bytes limit of 64.0 MiB`,
        `otel-s3: cannot read ${keys.deep} (decode): values nested deeper than 200 levels (an attribute of arrays or key-value lists nested too deep)`,
        `otel-s3: cannot read ${keys.badTime} (decode): timeUnixNano "1000000000000000000000000" is not a time in nanoseconds since 1970 (an unsigned 64-bit integer)`,
        'otel-s3: 3 objects of 5 objects could not be read and were skipped (see above)',
      ]);
      const rows = lines(run.stdout).map((l) => rawRowOf(JSON.parse(l) as PointRecord));
      expect(rows).toHaveLength(12);
      for (const half of [rows.slice(0, 6), rows.slice(6)]) {
        const values = instrumentValues(half);
        expect(values).toEqual(recordedValues('hostile-svc', rm1));
      }
      expect(maxRssBytes).toBeLessThan(300 * MB);
    },
  );

  test('stats: the good objects totalled, the hostile ones counted, exit code 1', async () => {
    const run = await runCliChild(['stats', '--format', 'json'], {
      cwd,
      env,
      timeoutMillis: 60_000,
    });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout) as StatsReport).toMatchObject({
      objects: 2,
      objectsUnreadable: 3,
      dataPoints: 12,
    });
  });

  test('--max-object-bytes below the bomb: skipped as listed, never downloaded', async () => {
    const run = await runCliChild(['points', '--max-object-bytes', '100KiB'], { cwd, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `otel-s3: cannot read ${keys.bomb} (fetch): stored size ${(bombBytes / 1024).toFixed(1)} KiB is over the --max-object-bytes limit of 100.0 KiB`,
    );
  });
});
