/**
 * A host clock minutes off, against a real S3 server (Ceph RGW refuses a signing time more than
 * 15 minutes from its own with 403 RequestTimeTooSkewed): the exporter's signed writer learns the
 * server's time from the refusal's Date header, the refusal is a transient (retried at once, not a
 * configuration fault), and the retry of the same key and bytes is stored.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterEach, expect, test, vi } from 'vitest';
import { objectAddress } from '../../src/s3/object-address.js';
import type { PutRequest } from '../../src/s3/object-writer.js';
import { SignedObjectWriter } from '../../src/s3/signed-writer.js';
import { classifyUploadError } from '../../src/s3/verdict.js';
import { connection, describeS3, withS3 } from '../support/s3.js';

describeS3('a skewed host clock on a real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  withS3('clock-skew', (s) => ({ client, bucket } = s));
  afterEach(() => vi.restoreAllMocks());

  const writer = () => {
    const c = connection();
    return new SignedObjectWriter({
      address: objectAddress({
        bucket,
        region: c.region as string,
        endpoint: c.endpoint as string,
        forcePathStyle: true,
      }),
      region: c.region as string,
      credentials: c.credentials,
      userAgent: undefined,
      connectTimeoutMillis: 2_000,
      fields: {},
    });
  };

  test.each([
    ['an hour behind', -3_600_000],
    ['20 minutes ahead', 20 * 60_000],
    ['a day ahead', 86_400_000],
  ])('%s: refused once as RequestTimeTooSkewed (transient), then stored', async (_, off) => {
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + off);
    const w = writer();
    const key = `skew/${off}.json`;
    const request = (): PutRequest => ({
      key,
      body: Buffer.from(`{"off":${off}}`),
      contentType: 'application/json',
      ifNoneMatch: true,
      crc32: undefined,
      sha256: undefined,
      signal: AbortSignal.timeout(10_000),
    });
    try {
      const refused = await w.put(request()).catch((e: unknown) => e);
      expect(refused).toMatchObject({
        name: 'RequestTimeTooSkewed',
        $metadata: { httpStatusCode: 403 },
      });
      expect(classifyUploadError(refused)).toEqual({ kind: 'retry', reason: 'server' });
      await w.put(request()); // the same key and bytes, signed in the server's time
    } finally {
      w.destroy();
      vi.restoreAllMocks();
    }
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect(await got.Body?.transformToString()).toBe(`{"off":${off}}`);
  });
});
