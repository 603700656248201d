import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, test } from 'vitest';
import { s3ClientConfig } from '../../../src/s3/client-settings.js';
import {
  type AddressSettings,
  objectAddress,
  objectPath,
  sdkNeeded,
} from '../../../src/s3/object-address.js';

/** Where the AWS SDK itself sends this PutObject: its endpoint rules are the expected value. */
async function sdkUrl(settings: AddressSettings, key: string): Promise<string> {
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
    ...(settings.forcePathStyle === undefined ? {} : { forcePathStyle: settings.forcePathStyle }),
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  });
  const command = new PutObjectCommand({ Bucket: settings.bucket, Key: key, Body: 'x' });
  let seen = '';
  command.middlewareStack.add(
    () => async (args) => {
      const r = args.request as {
        protocol: string;
        hostname: string;
        port?: number;
        path: string;
      };
      seen = `${r.protocol}//${r.hostname}${r.port === undefined ? '' : `:${r.port}`}${r.path}`;
      throw new Error('captured');
    },
    { step: 'finalizeRequest', priority: 'low', name: 'capture' },
  );
  await client.send(command).catch(() => undefined);
  client.destroy();
  return seen;
}

function ourUrl(settings: AddressSettings, key: string): string {
  const a = objectAddress(settings);
  return `${a.protocol}//${a.hostname}${a.port === undefined ? '' : `:${a.port}`}${objectPath(a, key)}`;
}

const KEYS = [
  'metrics/year=2026/month=12/day=01/hour=22/minute=05/metrics_0193-abc.json.zst',
  "odd/a b+c&d'e(f)!*~@$,;:=?#[]é😀.bin",
  'trailing/',
];

const CASES: [string, AddressSettings][] = [
  [
    'AWS us-east-1',
    { bucket: 'my-bucket', region: 'us-east-1', endpoint: undefined, forcePathStyle: undefined },
  ],
  [
    'AWS eu-west-3',
    { bucket: 'my-bucket', region: 'eu-west-3', endpoint: undefined, forcePathStyle: undefined },
  ],
  [
    'AWS, path style',
    { bucket: 'my-bucket', region: 'eu-west-3', endpoint: undefined, forcePathStyle: true },
  ],
  [
    'AWS, dotted bucket',
    {
      bucket: 'my.bucket.name',
      region: 'ap-southeast-2',
      endpoint: undefined,
      forcePathStyle: undefined,
    },
  ],
  [
    'AWS GovCloud',
    {
      bucket: 'gov-bucket',
      region: 'us-gov-west-1',
      endpoint: undefined,
      forcePathStyle: undefined,
    },
  ],
  [
    'AWS China',
    { bucket: 'cn-bucket', region: 'cn-north-1', endpoint: undefined, forcePathStyle: undefined },
  ],
  [
    'custom endpoint, default (path style)',
    {
      bucket: 'metrics',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:7480',
      forcePathStyle: undefined,
    },
  ],
  [
    'custom endpoint with a base path',
    {
      bucket: 'metrics',
      region: 'us-east-1',
      endpoint: 'https://s3.example.com/base',
      forcePathStyle: true,
    },
  ],
  [
    'custom endpoint, virtual-hosted',
    {
      bucket: 'metrics',
      region: 'auto',
      endpoint: 'https://acct.r2.cloudflarestorage.com',
      forcePathStyle: false,
    },
  ],
  [
    'custom endpoint on a port, virtual-hosted',
    {
      bucket: 'metrics',
      region: 'us-east-1',
      endpoint: 'http://minio.local:9000',
      forcePathStyle: false,
    },
  ],
  [
    'AWS, a bucket with "--" (a valid DNS label)',
    { bucket: 'logs--prod', region: 'eu-west-1', endpoint: undefined, forcePathStyle: undefined },
  ],
  [
    'custom endpoint, virtual-hosted, a bucket with "--"',
    {
      bucket: 'logs--prod',
      region: 'auto',
      endpoint: 'https://oss.example.com',
      forcePathStyle: false,
    },
  ],
  [
    'IP endpoint, virtual-hosted asked',
    {
      bucket: 'metrics',
      region: 'us-east-1',
      endpoint: 'http://10.0.0.5:9000',
      forcePathStyle: false,
    },
  ],
];

describe('objectAddress: the URL of a PutObject, as the AWS SDK makes it', () => {
  test.each(CASES)('%s', async (_name, settings) => {
    expect(sdkNeeded(settings, {})).toBeUndefined();
    for (const key of KEYS) expect(ourUrl(settings, key)).toBe(await sdkUrl(settings, key));
  });
});

// The SDK clients (the reader's, the exporter's when it needs one) are made by s3ClientConfig;
// for a base path with a trailing slash, the SDK's virtual-hosted rule alone gives "/base//key".
test('an endpoint with a base path and a trailing slash: the SDK and the exporter agree', async () => {
  const endpoint = 'https://s3.example.com/base/';
  for (const forcePathStyle of [false, true]) {
    const settings = { bucket: 'metrics', region: 'us-east-1', endpoint, forcePathStyle };
    const client = s3ClientConfig(settings, { role: 'reader' });
    const sdk = { ...settings, endpoint: client.endpoint as string };
    for (const key of KEYS) expect(ourUrl(settings, key)).toBe(await sdkUrl(sdk, key));
  }
});

describe('sdkNeeded: what the exporter leaves to the SDK', () => {
  const aws: AddressSettings = {
    bucket: 'b-1',
    region: 'us-east-1',
    endpoint: undefined,
    forcePathStyle: undefined,
  };
  test.each([
    [{ ...aws, bucket: 'logs--use1-az4--x-s3' }, {}, 'S3 Express'],
    [aws, { AWS_USE_FIPS_ENDPOINT: 'true' }, 'AWS_USE_FIPS_ENDPOINT'],
    [aws, { AWS_USE_DUALSTACK_ENDPOINT: 'true' }, 'AWS_USE_DUALSTACK_ENDPOINT'],
    [aws, { AWS_ENDPOINT_URL_S3: 'http://x' }, 'AWS_ENDPOINT_URL_S3'],
    [{ ...aws, region: 'us-iso-east-1' }, {}, 'partitions'],
  ])('%j with %j: %s', (settings, env, reason) => {
    expect(sdkNeeded(settings, env)).toContain(reason);
  });

  test('an endpoint given in code wins over the variables', () => {
    expect(
      sdkNeeded({ ...aws, endpoint: 'http://127.0.0.1:9000' }, { AWS_ENDPOINT_URL_S3: 'http://x' }),
    ).toBeUndefined();
    expect(sdkNeeded(aws, { AWS_USE_FIPS_ENDPOINT: 'false' })).toBeUndefined();
  });
});
