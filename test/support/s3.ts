import { gunzipSync } from 'node:zlib';
import {
  CreateBucketCommand,
  DeleteBucketPolicyCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutBucketPolicyCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, inject, type TestContext } from 'vitest';
import { decodeOtlpProto, type OtlpObject } from '../../src/encoding/otlp-proto-decode.js';
import type { MessageName } from '../../src/encoding/otlp-schema.js';
import type { S3MetricExporterOptions } from '../../src/index.js';
import { dataPointRows } from '../../src/signals/metrics/rows.js';
import { type Fault, FaultProxy } from './fault-proxy.js';
import { type Canonical, decodeJsonExact, decodeProtobuf } from './otlp-reference.js';
import { recordedRequest } from './recorded-request.js';
import type { S3ServerInfo } from './s3-server.js';
import { zstdDecompress } from './zstd.js';

const provided = inject('s3Server');

/** The run's S3 server, or undefined with `skipReason` saying why there is none. */
export const s3Server: S3ServerInfo | undefined = 'unavailable' in provided ? undefined : provided;
export const skipReason = 'unavailable' in provided ? provided.unavailable : '';

/** A describe() that needs the S3 server: skipped without one (global setup fails the run in CI). */
export const describeS3: typeof describe.skip = s3Server ? describe : describe.skip;

function server(): S3ServerInfo {
  if (s3Server === undefined) throw new Error(`no S3 server: ${skipReason}`);
  return s3Server;
}

/**
 * The environment a user sets to reach this server: AWS credentials and the exporter's (and
 * CLI's) endpoint variable. Callers add the region their test is about.
 */
export function s3Environment(endpoint = server().endpoint): Record<string, string> {
  const s = server();
  return {
    AWS_ACCESS_KEY_ID: s.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s.secretAccessKey,
    OTEL_EXPORTER_S3_ENDPOINT: endpoint,
  };
}

/**
 * What a user of the CLI (or of the exporter's environment variables) sets to reach `prefix` of
 * `bucket` on this server: s3Environment(), the region and the bucket and prefix variables.
 */
export function cliEnvironment(bucket: string, prefix: string): Record<string, string> {
  return {
    ...s3Environment(),
    AWS_REGION: server().region,
    OTEL_EXPORTER_S3_BUCKET: bucket,
    OTEL_EXPORTER_S3_PREFIX: prefix,
  };
}

/** A plain S3 client for reading back and setting up, independent of the exporter's. */
export function testClient(): S3Client {
  const s = server();
  return new S3Client({
    endpoint: s.endpoint,
    region: s.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Connection options for an exporter aimed at the test server. */
export function connection(): Pick<
  S3MetricExporterOptions,
  'endpoint' | 'region' | 'credentials' | 'forcePathStyle'
> {
  const s = server();
  return {
    endpoint: s.endpoint,
    region: s.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
  };
}

let bucketSeq = 0;
/** Creates a bucket no other test uses. */
export async function freshBucket(client: S3Client, label: string): Promise<string> {
  const name = `t-${label}-${Date.now().toString(36)}-${process.pid}-${++bucketSeq}`
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 63);
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/**
 * A fresh bucket whose policy denies `actions` to everyone, on the bucket and on its objects;
 * `lift()` removes the policy (do it in a finally, before cleaning up what was stored).
 */
export async function bucketDenying(
  client: S3Client,
  label: string,
  actions: string[],
): Promise<{ bucket: string; lift: () => Promise<void> }> {
  const bucket = await freshBucket(client, label);
  await client.send(
    new PutBucketPolicyCommand({
      Bucket: bucket,
      Policy: JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Deny',
            Principal: '*',
            Action: actions,
            Resource: [`arn:aws:s3:::${bucket}`, `arn:aws:s3:::${bucket}/*`],
          },
        ],
      }),
    }),
  );
  const lift = async () => {
    await client.send(new DeleteBucketPolicyCommand({ Bucket: bucket }));
  };
  return { bucket, lift };
}

/** A describeS3 block's S3: a test client, a bucket of its own and, if asked for, a fault proxy. */
export interface S3Fixture {
  client: S3Client;
  bucket: string;
}

/**
 * Makes a describeS3 block's S3 before its tests (a test client and a fresh bucket named after
 * `label`; with `fault`, a fault proxy in front of the server, set to it) and closes it after
 * them; `use` gets them once made: `withS3('faults', (s) => ({ client, bucket } = s))`. Call it
 * before the block's own beforeAll, which can then use them (its afterAll runs before this one's).
 */
export function withS3(label: string, use: (s3: S3Fixture) => void): void;
export function withS3(
  label: string,
  fault: Fault,
  use: (s3: S3Fixture & { proxy: FaultProxy }) => void,
): void;
export function withS3(
  label: string,
  ...args: [(s3: S3Fixture) => void] | [Fault, (s3: S3Fixture & { proxy: FaultProxy }) => void]
): void {
  let client: S3Client | undefined;
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    client = testClient();
    const bucket = await freshBucket(client, label);
    if (args.length === 1) return args[0]({ client, bucket });
    proxy = await FaultProxy.start(server().endpoint);
    await proxy.set(args[0]);
    args[1]({ client, bucket, proxy });
  });
  afterAll(async () => {
    await proxy?.close();
    client?.destroy();
  });
}

/**
 * A fault proxy in front of the server for one test, set to `fault`, closed when the test ends
 * (pass the test context's `onTestFinished`, as tests that run concurrently must). Tests that
 * each have their own proxy can run at once: no test sees another's fault or requests.
 */
export async function proxyForTest(
  onTestFinished: TestContext['onTestFinished'],
  fault: Fault = { kind: 'pass' },
): Promise<FaultProxy> {
  const proxy = await FaultProxy.start(server().endpoint);
  onTestFinished(() => proxy.close());
  await proxy.set(fault);
  return proxy;
}

export interface StoredObject {
  key: string;
  size: number;
  bytes: Buffer;
}

/** Every object under `prefix`, fetched with plain ListObjectsV2 / GetObject calls. */
export async function listAndFetch(
  client: S3Client,
  bucket: string,
  prefix = '',
): Promise<StoredObject[]> {
  const out: StoredObject[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const entry of page.Contents ?? []) {
      if (entry.Key === undefined) continue;
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: entry.Key }));
      const bytes = Buffer.from(
        await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
      );
      out.push({ key: entry.Key, size: entry.Size ?? bytes.length, bytes });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return out;
}

/**
 * The sequence numbers (the `collection.seq` gauge of sequencedService) of every collection
 * stored under `prefix`, sorted, and the keys of the objects that hold them.
 */
export async function storedSequence(
  client: S3Client,
  bucket: string,
  prefix: string,
): Promise<{ seqs: number[]; keys: string[] }> {
  const objects = await listAndFetch(client, bucket, `${prefix}/`);
  const seqs = objects
    .flatMap((o) => dataPointRows(decodeStored(o)))
    .filter((r) => r.metric === 'collection.seq')
    .map((r) => r.value ?? -1)
    .sort((a, b) => a - b);
  return { seqs, keys: objects.map((o) => o.key).sort() };
}

/** A stored object's bytes with its compression (`.zst`, `.gz`) removed by standard decoders. */
export function decompressed(object: StoredObject): Buffer {
  if (object.key.endsWith('.zst')) return zstdDecompress(object.bytes);
  if (object.key.endsWith('.gz')) return gunzipSync(object.bytes);
  return object.bytes;
}

/**
 * Decodes a stored object with standard decoders only: libzstd (node:zlib, or zstd-napi on Node
 * 20) or zlib for the bytes, JSON.parse for JSON (which must be exactly one line), the protobuf
 * decoder for protobuf, as `message` (a metrics request unless told).
 */
export function decodeStored(
  object: StoredObject,
  message: MessageName = 'ExportMetricsServiceRequest',
): OtlpObject {
  const raw = decompressed(object);
  if (isProtobuf(object)) return decodeOtlpProto(raw, message);
  return JSON.parse(oneJsonLine(object, raw)) as OtlpObject;
}

const isProtobuf = (object: StoredObject) => /\.binpb(\.|$)/.test(object.key);

/** A JSON object's text, which must be exactly one line ending in a newline. */
function oneJsonLine(object: StoredObject, raw: Buffer): string {
  const text = raw.toString('utf8');
  if (!text.endsWith('\n') || text.indexOf('\n') !== text.length - 1) {
    throw new Error(`${object.key}: expected exactly one JSON line terminated by a newline`);
  }
  return text;
}

/**
 * A stored OTLP object read with decoders independent of src/: standard decompression, then the
 * official-proto reference decoder for protobuf, or its strict OTLP/JSON mapping for one JSON line.
 */
export function decodeStoredReference(object: StoredObject): Canonical {
  const raw = decompressed(object);
  if (isProtobuf(object)) return decodeProtobuf(raw);
  return decodeJsonExact(oneJsonLine(object, raw));
}

/**
 * The objects hold, one request each, exactly the collections the SDK handed over (in order),
 * as the official serializer writes them: every value, time, attribute and name.
 */
export function expectStoredAsRecorded(objects: StoredObject[], recorded: ResourceMetrics[]): void {
  expect(objects.map(decodeStoredReference)).toEqual(recorded.map(recordedRequest));
}
