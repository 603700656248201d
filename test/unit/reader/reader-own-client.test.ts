import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { s3Source } from '../../../src/reader/s3-source.js';

// The caller's own s3Client: the reader neither made nor checked it. A listing that failed
// without an HTTP answer was hinted "is the endpoint (AWS S3) right and the server reachable?",
// whatever the client's region or endpoint was.

const credentials = { accessKeyId: 'k', secretAccessKey: 's' };

/** The error of the first page of `s3://b-1/` listed with `client`. */
async function listingError(client: S3Client): Promise<string> {
  const source = s3Source('b-1', { s3Client: client });
  try {
    await source.list('', undefined, new AbortController().signal)[Symbol.asyncIterator]().next();
    return 'listed';
  } catch (error) {
    return (error as Error).message;
  } finally {
    source.close();
  }
}

test('a client whose region the AWS SDK refuses: the message names that region, not the server', async () => {
  const client = new S3Client({ region: 'bad region', credentials, maxAttempts: 1 });
  try {
    // The SDK's own verdict: its region provider refuses the region, so no request is made.
    await expect(client.config.region()).rejects.toThrow(
      'Region not accepted: region="bad region" is not a valid hostname component.',
    );
    const sent = await client.send(new ListObjectsV2Command({ Bucket: 'b-1' })).catch((e) => e);
    expect([sent.message, sent.$metadata?.httpStatusCode]).toEqual([
      'Region not accepted: region="bad region" is not a valid hostname component.',
      undefined,
    ]);
    expect(await listingError(client)).toBe(
      'cannot list s3://b-1/: Region not accepted: region="bad region" is not a valid hostname component.; the s3Client given has region "bad region", which the AWS SDK refuses before sending any request: make the client with a region such as us-east-1',
    );
  } finally {
    client.destroy();
  }
});

test("a client with its own endpoint that nothing answers: the hint names the client's endpoint", async () => {
  // Port 1 on the loopback: nothing listens, the connection is refused at once.
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    forcePathStyle: true,
    credentials,
    maxAttempts: 1,
  });
  try {
    const message = await listingError(client);
    expect(message).toMatch(/^cannot list s3:\/\/b-1\/: /);
    expect(message).toMatch(
      /; is the endpoint \(http:\/\/127\.0\.0\.1:1\) of the s3Client given right and the server reachable\?$/,
    );
  } finally {
    client.destroy();
  }
});
