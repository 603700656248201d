/**
 * `otel-s3 check` in a child process against a real S3 server (Ceph RGW: it checks signatures,
 * conditional writes and bucket policies): what the exporter, the reader and the compactor each
 * need, a row per step with the fix for each failure, an exit code that says whether the exporter
 * can work, and nothing left behind.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { CheckReport } from '../../src/cli/commands/check.js';
import { type CliRun, lines, runCliChild } from '../support/cli-child.js';
import {
  bucketDenying,
  describeS3,
  freshBucket,
  listAndFetch,
  s3Environment,
  s3Server,
  testClient,
} from '../support/s3.js';

describeS3('otel-s3 check on a real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  let cwd: string;
  const otelS3 = (args: string[], env: Record<string, string> = {}): Promise<CliRun> =>
    runCliChild(args, {
      cwd,
      env: { ...s3Environment(), AWS_REGION: s3Server?.region ?? 'us-east-1', ...env },
    });
  /** The table's rows on stdout, by step: [status and result, fix]. */
  const rowsOf = (stdout: string) =>
    Object.fromEntries(
      lines(stdout)
        .slice(1)
        .map((line) => {
          const [step, , result, fix] = line.split(/ {3,}/);
          return [step, [result, fix ?? '']];
        }),
    );

  beforeAll(async () => {
    client = testClient();
    bucket = await freshBucket(client, 'cli-check');
    cwd = await mkdtemp(join(tmpdir(), 'otel-s3-cli-check-'));
  });
  afterAll(async () => {
    client?.destroy();
    await rm(cwd, { recursive: true, force: true });
  });

  test('a configuration that works: every step ok, exit 0, nothing left behind', async () => {
    const { code, stdout, stderr } = await otelS3(['check', '--bucket', bucket, '--prefix', 'ok']);
    expect(code, stderr).toBe(0);
    const rows = rowsOf(stdout);
    expect(Object.keys(rows)).toEqual(['put', 'conditional put', 'list', 'get', 'delete']);
    expect(rows.put?.[0]).toMatch(
      /^ok: stored \d+ bytes at ok\/_otel_s3_check\/[0-9a-f-]{36}\.check$/,
    );
    // Ceph refuses the second write of the key: conditional writes work.
    expect(rows['conditional put']?.[0]).toBe(
      'ok: refused an overwrite (PreconditionFailed (HTTP 412))',
    );
    expect(rows.list?.[0]).toBe('ok: listed the object');
    expect(rows.get?.[0]).toBe('ok: read the object back, unchanged');
    expect(rows.delete?.[0]).toBe('ok: deleted the object');
    expect(stderr).toBe(
      `otel-s3: s3://${bucket}/ok/: the exporter can work; the reader can read; the compactor can run\n`,
    );
    expect(await listAndFetch(client, bucket, 'ok/')).toEqual([]);
  });

  test('a wrong secret: every row names the fix, exit 3', async () => {
    const { code, stdout, stderr } = await otelS3(
      ['check', '--bucket', bucket, '--prefix', 'bad'],
      {
        AWS_SECRET_ACCESS_KEY: 'Xq9-not-the-secret',
      },
    );
    expect(code, stderr).toBe(3);
    const rows = rowsOf(stdout);
    const denied = [
      'failed: SignatureDoesNotMatch (HTTP 403): the secret key does not match the access key id',
      `check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) and the endpoint (${s3Server?.endpoint})`,
    ];
    expect(rows.put).toEqual(denied);
    expect(rows['conditional put']).toEqual(['skipped: not tried: put failed', '']);
    expect(rows.list).toEqual(denied);
    expect(rows.get).toEqual(denied);
    expect(rows.delete).toEqual(denied);
    expect(stderr).toContain('the exporter cannot work: put failed');
    expect(stdout + stderr).not.toContain('Xq9-not-the-secret');
  });

  test('a policy that denies listing and deleting: the exporter can work (exit 0); the rows say what to grant', async () => {
    const { bucket: denied, lift } = await bucketDenying(client, 'cli-check-deny', [
      's3:ListBucket',
      's3:DeleteObject',
    ]);
    let report: CheckReport | undefined;
    try {
      const { code, stdout, stderr } = await otelS3([
        'check',
        '--bucket',
        denied,
        '--prefix',
        'p',
        '--format',
        'json',
      ]);
      expect(code, stderr).toBe(0);
      report = JSON.parse(stdout) as CheckReport;
      const byStep = Object.fromEntries(report.checks.map((c) => [c.check, c]));
      expect(byStep.put?.status).toBe('ok');
      expect(byStep.get?.status).toBe('ok');
      expect(byStep.list).toMatchObject({
        status: 'failed',
        neededBy: ['reader', 'compactor'],
        result:
          'AccessDenied (HTTP 403): the credentials lack permission on this bucket and prefix',
        fix: `grant s3:ListBucket on the bucket (it can be limited to the prefix with the s3:prefix condition), for s3://${denied}/p/`,
      });
      expect(byStep.delete).toMatchObject({
        status: 'failed',
        neededBy: ['compactor'],
        fix: `grant s3:DeleteObject on s3://${denied}/p/*`,
      });
      expect(report.can).toEqual({ exporter: true, reader: false, compactor: false });
      expect(report.leftBehind).toBe(true);
      expect(stderr).toContain(
        `otel-s3: left s3://${denied}/${report.key} behind: delete it by hand`,
      );
    } finally {
      await lift();
      if (report !== undefined) {
        await client.send(new DeleteObjectCommand({ Bucket: denied, Key: report.key }));
      }
    }
  });

  test('an endpoint nothing listens on: exit 4, the fix names the endpoint', async () => {
    const endpoint = 'http://127.0.0.1:1';
    const { code, stdout } = await otelS3(['check', '--bucket', bucket], {
      OTEL_EXPORTER_S3_ENDPOINT: endpoint,
    });
    expect(code).toBe(4);
    expect(rowsOf(stdout).put).toEqual([
      'failed: connect ECONNREFUSED 127.0.0.1:1',
      `check the endpoint (${endpoint}) and the network`,
    ]);
  });
});
