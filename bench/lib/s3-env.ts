/** The real S3 server of this run, from S3_ENDPOINT / S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY. */
import {
  type _Object,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';

export interface S3Env {
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export const S3_SKIP_REASON =
  'S3_ENDPOINT, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are not set (e.g. S3_ENDPOINT=http://127.0.0.1:7480 for the local Ceph RGW)';

export function s3Env(): S3Env | undefined {
  const env = process.env;
  if (!env.S3_ENDPOINT || !env.S3_ACCESS_KEY_ID || !env.S3_SECRET_ACCESS_KEY) return undefined;
  return {
    endpoint: env.S3_ENDPOINT,
    region: env.S3_REGION ?? 'us-east-1',
    credentials: { accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY },
  };
}

/** A plain client for setting up and reading back, independent of the exporter's. */
export function benchClient(s3: S3Env): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: s3.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Creates a bucket of its own for this run. */
export async function benchBucket(client: S3Client, label: string): Promise<string> {
  const name = `bench-${label}-${Date.now().toString(36)}-${process.pid}`
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 63);
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/**
 * Deletes a bench bucket and what the run stored in it: a full run writes over a gigabyte, which
 * would otherwise fill a small test server (the throwaway Ceph keeps objects in memory).
 */
export async function removeBenchBucket(client: S3Client, bucket: string): Promise<void> {
  const keys: string[] = [];
  for await (const o of listObjects(client, bucket)) if (o.Key !== undefined) keys.push(o.Key);
  // One DeleteObject per key (DeleteObjects needs a checksum some servers refuse), 16 at a time.
  for (let i = 0; i < keys.length; i += 16) {
    await Promise.all(
      keys
        .slice(i, i + 16)
        .map((Key) => client.send(new DeleteObjectCommand({ Bucket: bucket, Key }))),
    );
  }
  await client.send(new DeleteBucketCommand({ Bucket: bucket }));
}

/** Every object under `prefix`, page by page. */
export async function* listObjects(
  client: S3Client,
  bucket: string,
  prefix?: string,
): AsyncGenerator<_Object> {
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    yield* page.Contents ?? [];
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
}

/** The bytes of every object under `prefix`, as the server lists them. */
export async function listedBytes(
  client: S3Client,
  bucket: string,
  prefix?: string,
): Promise<number> {
  let total = 0;
  for await (const o of listObjects(client, bucket, prefix)) total += o.Size ?? 0;
  return total;
}
