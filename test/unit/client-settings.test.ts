import { describe, expect, test } from 'vitest';
import { s3ClientConfig } from '../../src/config/client-settings.js';
import { resolveConfig } from '../../src/config.js';
import { createReaderClient } from '../../src/reader/s3-source.js';
import { createClient } from '../../src/upload/client.js';

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

  test('the reader keeps the SDK retries, with connect and request timeouts', () => {
    const config = s3ClientConfig({}, { role: 'reader' }, {});
    expect(config.maxAttempts).toBeUndefined();
    expect(config.requestHandler).toEqual({ connectionTimeout: 5_000, requestTimeout: 60_000 });
  });

  test('the clients the exporter and the reader make use it', async () => {
    const exporter = createClient(resolveConfig({ bucket: 'b', ...CUSTOM, region: 'r1' }));
    const reader = createReaderClient({ ...CUSTOM, region: 'r1' });
    try {
      for (const { client } of [exporter, reader]) {
        expect(await client.config.region()).toBe('r1');
        expect(client.config.forcePathStyle).toBe(true);
        expect(await client.config.requestChecksumCalculation()).toBe('WHEN_REQUIRED');
      }
      expect(await exporter.client.config.maxAttempts()).toBe(1);
      expect(await reader.client.config.maxAttempts()).toBe(3);
    } finally {
      exporter.client.destroy();
      reader.client.destroy();
    }
  });
});
