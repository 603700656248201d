import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { diag } from '@opentelemetry/api';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { type ProcessWarning, recordProcessWarnings } from '../../support/diag-capture.js';
import { firstUploadFailure } from '../../support/first-upload-failure.js';

// AWS_USE_FIPS_ENDPOINT=true in a partition without FIPS endpoints (aws-cn), no endpoint: the
// uploads go through the AWS SDK, whose endpoint rules throw before sending. That is a fault of
// configuration, as a missing bucket is: heard at once, naming the variable and the fix, not
// retried as a client fault with no alert.

const warnings: ProcessWarning[] = [];
const credentials = { accessKeyId: 'id', secretAccessKey: 'secret' };

beforeEach(() => {
  diag.disable();
  warnings.length = 0;
  recordProcessWarnings(warnings);
  vi.stubEnv('AWS_USE_FIPS_ENDPOINT', 'true');
  vi.stubEnv('AWS_USE_DUALSTACK_ENDPOINT', '');
  vi.stubEnv('AWS_ENDPOINT_URL', '');
  vi.stubEnv('AWS_ENDPOINT_URL_S3', '');
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

test('the AWS SDK has no FIPS endpoint in cn-north-1 and says so before sending', async () => {
  const bare = new S3Client({ region: 'cn-north-1', credentials });
  try {
    await expect(
      bare.send(new PutObjectCommand({ Bucket: 'metrics', Key: 'k', Body: 'x' })),
    ).rejects.toThrow(
      expect.objectContaining({
        name: 'EndpointError',
        message: 'Partition does not support FIPS',
      }),
    );
  } finally {
    bare.destroy();
  }
});

for (const startupCheck of [false, true]) {
  test(`uploads with AWS_USE_FIPS_ENDPOINT=true in cn-north-1: a configuration fault (startupCheck ${startupCheck})`, async () => {
    const { stats, alerts } = await firstUploadFailure(
      { region: 'cn-north-1', credentials, startupCheck },
      warnings,
      'OTEL_S3_NO_ENDPOINT',
    );
    expect(stats.uploadFailures).toEqual({ 'no-endpoint': 1 });
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(
      /failed \(EndpointError: Partition does not support FIPS\): the AWS SDK has no endpoint for AWS_USE_FIPS_ENDPOINT=true with this region and bucket; unset AWS_USE_FIPS_ENDPOINT \(or set it to false\), or set the endpoint option\. Data is kept within maxBufferedBytes and retried about every \d+ s$/,
    );
  });
}

test("the caller's s3Client that the AWS SDK has no endpoint for: the alert names its settings", async () => {
  vi.stubEnv('AWS_USE_FIPS_ENDPOINT', '');
  const s3Client = new S3Client({ region: 'cn-north-1', useFipsEndpoint: true, credentials });
  try {
    const { stats, alerts } = await firstUploadFailure(
      { s3Client, startupCheck: false },
      warnings,
      'OTEL_S3_NO_ENDPOINT',
    );
    expect(stats.uploadFailures).toEqual({ 'no-endpoint': 1 });
    expect(alerts).toEqual([
      expect.stringContaining(
        "failed (EndpointError: Partition does not support FIPS): the AWS SDK has no endpoint for this region and bucket with its FIPS and dual-stack settings (the s3Client's own, or use_fips_endpoint and use_dualstack_endpoint of the AWS config file); change them or set the endpoint option. Data is kept",
      ),
    ]);
  } finally {
    s3Client.destroy();
  }
});

// AWS_ENDPOINT_URL that is not a URL: the AWS SDK throws before sending (a TypeError,
// ERR_INVALID_URL). Only the operator can fix it: retried as a client fault it raised no alert
// and every batch was dropped at shutdown with "Invalid URL" alone.
for (const variable of ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_S3']) {
  test(`uploads with ${variable}=notaurl: a configuration fault that names the variable`, async () => {
    vi.stubEnv('AWS_USE_FIPS_ENDPOINT', '');
    vi.stubEnv(variable, 'notaurl');
    const bare = new S3Client({ region: 'us-east-1', credentials });
    try {
      await expect(
        bare.send(new PutObjectCommand({ Bucket: 'metrics', Key: 'k', Body: 'x' })),
      ).rejects.toThrow(expect.objectContaining({ code: 'ERR_INVALID_URL' }));
    } finally {
      bare.destroy();
    }
    const { stats, alerts } = await firstUploadFailure(
      { region: 'us-east-1', credentials, startupCheck: false },
      warnings,
      'OTEL_S3_NO_ENDPOINT',
    );
    expect(stats.uploadFailures).toEqual({ 'no-endpoint': 1 });
    expect(alerts).toEqual([
      expect.stringContaining(
        `: ${variable} (notaurl) is not a URL; fix it (http:// or https://), unset it, or set the endpoint option. Data is kept`,
      ),
    ]);
  });
}
