import { S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { s3Source } from '../../../src/reader/s3-source.js';

// AWS_USE_FIPS_ENDPOINT=true in a partition without FIPS endpoints (aws-cn): the SDK's endpoint
// rules throw before any request. The reader's hint asked whether "the endpoint (AWS S3)" was
// right and the server reachable: no server was asked, and the variable is what to change.
test('an endpoint the AWS SDK cannot make: the hint names AWS_USE_FIPS_ENDPOINT, not the server', async () => {
  const saved = process.env.AWS_USE_FIPS_ENDPOINT;
  process.env.AWS_USE_FIPS_ENDPOINT = 'true';
  const credentials = { accessKeyId: 'k', secretAccessKey: 's' };
  const bare = new S3Client({ region: 'cn-north-1', credentials });
  const source = s3Source('b-1', { region: 'cn-north-1', credentials });
  try {
    // The SDK's own verdict, with no request made.
    const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
    await expect(bare.send(new ListObjectsV2Command({ Bucket: 'b-1' }))).rejects.toThrow(
      expect.objectContaining({
        name: 'EndpointError',
        message: 'Partition does not support FIPS',
      }),
    );
    const listing = source
      .list('', undefined, new AbortController().signal)
      [Symbol.asyncIterator]();
    await expect(listing.next()).rejects.toThrow(
      'cannot list s3://b-1/: EndpointError: Partition does not support FIPS; the AWS SDK has no endpoint for AWS_USE_FIPS_ENDPOINT=true with region cn-north-1 and this bucket: unset the variable (or set it to false), or give the endpoint',
    );
  } finally {
    bare.destroy();
    source.close();
    if (saved === undefined) delete process.env.AWS_USE_FIPS_ENDPOINT;
    else process.env.AWS_USE_FIPS_ENDPOINT = saved;
  }
});

test("the caller's client that the AWS SDK has no endpoint for: the hint names its settings", async () => {
  const client = new S3Client({
    region: 'cn-north-1',
    useFipsEndpoint: true,
    credentials: { accessKeyId: 'k', secretAccessKey: 's' },
  });
  const source = s3Source('b-1', { s3Client: client });
  try {
    const listing = source
      .list('', undefined, new AbortController().signal)
      [Symbol.asyncIterator]();
    await expect(listing.next()).rejects.toThrow(
      "cannot list s3://b-1/: EndpointError: Partition does not support FIPS; the AWS SDK has no endpoint for the client's region cn-north-1 and this bucket with its FIPS and dual-stack settings (the client's own, AWS_USE_FIPS_ENDPOINT, AWS_USE_DUALSTACK_ENDPOINT, or use_fips_endpoint and use_dualstack_endpoint of the AWS config file)",
    );
  } finally {
    source.close();
    client.destroy();
  }
});
