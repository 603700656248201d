import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { STORAGE_CLASSES } from '../../../src/config/options.js';
import { resolveConfig } from '../../../src/config/resolve.js';
import { createReaderClient } from '../../../src/reader/s3-source.js';
import { endpointName, s3ClientConfig } from '../../../src/s3/client-settings.js';
import { createObjectWriter } from '../../../src/s3/create-writer.js';
import { objectAddress } from '../../../src/s3/object-address.js';
import { removeDir } from '../../support/temp-dir.js';

const AWS = {};
const CUSTOM = { endpoint: 'http://127.0.0.1:9000' };

describe('s3ClientConfig: the client defaults, decided once for the exporter and the reader', () => {
  test.each([
    [{}, 'us-east-1'],
    [{ AWS_DEFAULT_REGION: 'eu-west-3' }, 'eu-west-3'],
    [{ AWS_REGION: 'ap-south-1', AWS_DEFAULT_REGION: 'eu-west-3' }, 'ap-south-1'],
    [{ AWS_REGION: '', AWS_DEFAULT_REGION: 'eu-west-3' }, 'eu-west-3'],
  ])('region from %j: %s, unless one is given', (env, region) => {
    for (const role of [
      { role: 'reader' },
      { role: 'exporter', requestTimeoutMillis: 1 },
    ] as const) {
      expect(s3ClientConfig({}, role, env).region).toBe(region);
      expect(s3ClientConfig({ region: 'given' }, role, env).region).toBe('given');
    }
  });

  test('a custom endpoint: path style and checksums only when required, unless told otherwise', () => {
    expect(s3ClientConfig(CUSTOM, { role: 'reader' }, {})).toMatchObject({
      endpoint: CUSTOM.endpoint,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    expect(s3ClientConfig(AWS, { role: 'reader' }, {})).toMatchObject({
      forcePathStyle: false,
      requestChecksumCalculation: 'WHEN_SUPPORTED',
      responseChecksumValidation: 'WHEN_SUPPORTED',
    });
    const told = s3ClientConfig(
      { ...CUSTOM, forcePathStyle: false, requestChecksumCalculation: 'WHEN_SUPPORTED' },
      { role: 'reader' },
      {},
    );
    expect(told).toMatchObject({
      forcePathStyle: false,
      requestChecksumCalculation: 'WHEN_SUPPORTED',
    });
  });

  test('the exporter makes one attempt per send and bounds only the connect phase', () => {
    const config = s3ClientConfig(
      { userAgent: 'me/1' },
      { role: 'exporter', requestTimeoutMillis: 2_000 },
      {},
    );
    expect(config).toMatchObject({
      maxAttempts: 1,
      customUserAgent: 'me/1',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: 2_000 },
    });
    const slow = s3ClientConfig({}, { role: 'exporter', requestTimeoutMillis: 60_000 }, {});
    expect(slow.requestHandler).toEqual({ connectionTimeout: 5_000 });
  });

  test('the reader keeps the SDK retries, with connect and idle timeouts', () => {
    const config = s3ClientConfig({}, { role: 'reader' }, {});
    expect(config.maxAttempts).toBeUndefined();
    // Not requestTimeout, which the SDK only warns about (reader-black-hole.test.ts).
    expect(config.requestHandler).toEqual({ connectionTimeout: 5_000, socketTimeout: 60_000 });
  });

  test('the reader makes its client with them', async () => {
    const reader = createReaderClient({ ...CUSTOM, region: 'r1' });
    try {
      expect(await reader.client.config.region()).toBe('r1');
      expect(reader.client.config.forcePathStyle).toBe(true);
      expect(await reader.client.config.requestChecksumCalculation()).toBe('WHEN_REQUIRED');
      expect(await reader.client.config.maxAttempts()).toBe(3);
    } finally {
      reader.client.destroy();
    }
  });
});

// AWS_USE_FIPS_ENDPOINT=true and an explicit endpoint: the exporter's own requests go to the
// endpoint; the SDK's endpoint rules refuse the pair, so the reader (otel-s3 ls) failed where the
// exporter stored. An explicit endpoint is where requests go, as in botocore (the AWS CLI), which
// passes FIPS and dual-stack to the endpoint rules only without one.
describe('an explicit endpoint with AWS_USE_FIPS_ENDPOINT or AWS_USE_DUALSTACK_ENDPOINT', () => {
  const SWITCHES = ['AWS_USE_FIPS_ENDPOINT', 'AWS_USE_DUALSTACK_ENDPOINT'] as const;
  const credentials = { accessKeyId: 'k', secretAccessKey: 's' };
  /** The URL the client sends a ListObjectsV2 to, or the error of its endpoint rules. */
  const listUrl = async (client: S3Client, variable: string): Promise<string> => {
    const saved = process.env[variable];
    process.env[variable] = 'true';
    let url = '';
    client.middlewareStack.add(
      () => async (args) => {
        const request = args.request as {
          protocol: string;
          hostname: string;
          port?: number;
          path: string;
        };
        url = `${request.protocol}//${request.hostname}:${request.port}${request.path}`;
        throw new Error('not sent');
      },
      { step: 'finalizeRequest' },
    );
    try {
      await client.send(new ListObjectsV2Command({ Bucket: 'b-1' }));
    } catch (error) {
      if (url === '') return `${(error as Error).name}: ${(error as Error).message}`;
    } finally {
      client.destroy();
      if (saved === undefined) delete process.env[variable];
      else process.env[variable] = saved;
    }
    return url;
  };

  test.each(SWITCHES)('%s=true: the SDK alone refuses the pair', async (variable) => {
    const bare = new S3Client({
      region: 'us-east-1',
      endpoint: CUSTOM.endpoint,
      forcePathStyle: true,
    });
    expect(await listUrl(bare, variable)).toMatch(/^EndpointError: .*(FIPS|dual-stack)/);
  });

  test.each(SWITCHES)(
    '%s=true: the reader sends to the endpoint, as the exporter does',
    async (variable) => {
      const reader = createReaderClient({ ...CUSTOM, region: 'us-east-1', credentials });
      expect(await listUrl(reader.client, variable)).toBe('http://127.0.0.1:9000/b-1/');
      const config = s3ClientConfig(
        { ...CUSTOM, credentials },
        { role: 'exporter', requestTimeoutMillis: 1 },
        {},
      );
      expect(await listUrl(new S3Client(config), variable)).toBe('http://127.0.0.1:9000/b-1/');
      // The exporter's own requests: the same place.
      const address = objectAddress({
        bucket: 'b-1',
        region: 'us-east-1',
        endpoint: CUSTOM.endpoint,
        forcePathStyle: undefined,
      });
      expect(`${address.protocol}//${address.hostname}:${address.port}${address.basePath}`).toBe(
        'http://127.0.0.1:9000/b-1/',
      );
      // Without an endpoint the switch is the SDK's to apply.
      const aws = createReaderClient({ region: 'us-east-1', credentials });
      expect(await listUrl(aws.client, variable)).toMatch(
        variable === 'AWS_USE_FIPS_ENDPOINT'
          ? /^https:\/\/b-1\.s3-fips\./
          : /^https:\/\/b-1\.s3\.dualstack\./,
      );
    },
  );
});

// The exporter (configure) and otel-s3 warn about an AWS_USE_FIPS_ENDPOINT value the SDK
// ignores; the reader library said nothing, and read the standard endpoint.
test('createReaderClient warns about an AWS endpoint switch the AWS SDK ignores, once', async () => {
  const saved = process.env.AWS_USE_FIPS_ENDPOINT;
  process.env.AWS_USE_FIPS_ENDPOINT = 'Yes';
  const warnings: { message: string; code: string | undefined }[] = [];
  const spy = vi.spyOn(process, 'emitWarning').mockImplementation((warning, opts?: unknown) => {
    const code =
      typeof opts === 'object' && opts !== null ? (opts as { code?: string }).code : undefined;
    warnings.push({ message: String(warning), code });
  });
  const clients: S3Client[] = [];
  try {
    const reader = createReaderClient({ region: 'us-east-1' });
    clients.push(reader.client);
    // The SDK's own reading: not FIPS.
    expect(await reader.client.config.useFipsEndpoint()).toBe(false);
    clients.push(createReaderClient({ region: 'us-east-1' }).client);
    // The caller's own client: its settings are the caller's.
    const own = new S3Client({ region: 'us-east-1' });
    clients.push(own);
    createReaderClient({ s3Client: own });
    expect(warnings).toEqual([
      {
        message:
          'otel-s3-exporter: invalid environment variable AWS_USE_FIPS_ENDPOINT: "Yes" (expected "true" or "false", in lower case); the AWS SDK ignores it and takes use_fips_endpoint of the AWS config file, else false',
        code: 'OTEL_S3_INVALID_ENV',
      },
    ]);
  } finally {
    spy.mockRestore();
    for (const client of clients) client.destroy();
    if (saved === undefined) delete process.env.AWS_USE_FIPS_ENDPOINT;
    else process.env.AWS_USE_FIPS_ENDPOINT = saved;
  }
});

describe('createObjectWriter: which transport stores the objects', () => {
  const dir = mkdtempSync(join(tmpdir(), 'otel-s3-aws-config-'));
  afterAll(() => removeDir(dir));
  const noConfig = { AWS_CONFIG_FILE: join(dir, 'missing') };
  const transport = async (options: object, env: Record<string, string> = {}) => {
    const handle = createObjectWriter(resolveConfig({ bucket: 'b-1', ...options }), {
      ...noConfig,
      ...env,
    });
    const chosen = await handle.transport();
    handle.writer.destroy();
    return { transport: chosen, owned: handle.owned };
  };

  test("its own signed requests for a custom endpoint and for AWS's standard regions", async () => {
    expect(await transport(CUSTOM)).toEqual({ transport: 'signed', owned: true });
    expect(await transport({ region: 'eu-west-3' })).toEqual({ transport: 'signed', owned: true });
  });

  test("an SDK client where the endpoint rules matter, and the caller's client as given", async () => {
    expect(await transport({}, { AWS_USE_FIPS_ENDPOINT: 'true' })).toEqual({
      transport: 'sdk',
      owned: true,
    });
    expect((await transport({ bucket: 'logs--use1-az4--x-s3' })).transport).toBe('sdk');
    const client = createReaderClient({}).client;
    const given = await transport({ s3Client: client });
    client.destroy();
    expect(given).toEqual({ transport: 'sdk', owned: false });
  });

  test('the shared config file: an endpoint_url or FIPS in it sends uploads through the SDK', async () => {
    const file = join(dir, 'config');
    writeFileSync(
      file,
      '[default]\nregion = eu-west-1\n\n[profile other]\nendpoint_url = http://x\n',
    );
    expect((await transport({}, { AWS_CONFIG_FILE: file })).transport).toBe('sdk');
    const ignoring = { AWS_CONFIG_FILE: file, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' };
    expect((await transport({}, ignoring)).transport).toBe('signed');
    expect((await transport(CUSTOM, { AWS_CONFIG_FILE: file })).transport).toBe('signed');
    writeFileSync(file, '[default]\nuse_fips_endpoint = true\n');
    expect((await transport({}, ignoring)).transport).toBe('sdk');
    // An ignored endpoint_url before it does not hide it.
    writeFileSync(file, '[default]\nendpoint_url = http://x\nuse_fips_endpoint = true\n');
    expect((await transport({}, ignoring)).transport).toBe('sdk');
    writeFileSync(file, '[default]\nregion = eu-west-1\n');
    expect((await transport({}, { AWS_CONFIG_FILE: file })).transport).toBe('signed');
  });
});

test("storageClass accepts exactly the SDK's StorageClass values (listed so the SDK stays unloaded)", async () => {
  const { StorageClass } = await import('@aws-sdk/client-s3');
  expect([...STORAGE_CLASSES].sort()).toEqual(Object.values(StorageClass).sort());
});

/** Where the AWS SDK sends a PutObject with `env` as its process environment: its own reading. */
async function sdkOrigin(env: Record<string, string>): Promise<string> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const client = new S3Client({
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    let seen = '';
    const command = new PutObjectCommand({ Bucket: 'b-1', Key: 'k', Body: 'x' });
    command.middlewareStack.add(
      () => async (args) => {
        const r = args.request as { protocol: string; hostname: string; port?: number };
        seen = `${r.protocol}//${r.hostname}${r.port === undefined ? '' : `:${r.port}`}`;
        throw new Error('captured');
      },
      { step: 'finalizeRequest', priority: 'low', name: 'capture' },
    );
    await client.send(command).catch(() => undefined);
    client.destroy();
    return seen;
  } finally {
    for (const name of Object.keys(env)) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
}

describe('endpointName: where requests go, as messages name it', () => {
  test('the endpoint an AWS endpoint variable sets, without its user info', async () => {
    for (const variable of ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL']) {
      const env = { [variable]: 'http://user:pa55word@minio.internal:9000' };
      const origin = await sdkOrigin(env);
      expect(origin).toBe('http://minio.internal:9000');
      expect(endpointName({}, env)).toBe(`${origin} (${variable})`);
    }
  });

  test('AWS S3 in its region without them, or when they are ignored', () => {
    expect(endpointName({}, { AWS_REGION: 'eu-west-1' })).toBe('AWS S3 (eu-west-1)');
    const ignored = {
      AWS_REGION: 'eu-west-1',
      AWS_ENDPOINT_URL_S3: 'http://minio.internal:9000',
      AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true',
    };
    expect(endpointName({}, ignored)).toBe('AWS S3 (eu-west-1)');
    expect(endpointName(CUSTOM, ignored)).toBe(CUSTOM.endpoint);
  });
});
