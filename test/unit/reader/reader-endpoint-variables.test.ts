import { afterEach, expect, test, vi } from 'vitest';
import { InvalidOptionError } from '../../../src/base/invalid-option.js';
import { s3Source } from '../../../src/reader/s3-source.js';

// Without an endpoint, the AWS SDK sends to the URL of AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL.
// A listing that got no answer from it was hinted "is the endpoint (AWS S3) right and the server
// reachable?": `otel-s3 ls` blamed AWS S3 for a local port nobody listens on.

afterEach(() => {
  vi.unstubAllEnvs();
});

/** The error of the first page of `s3://b-1/` listed without an endpoint, with `env` set. */
async function listingError(env: Record<string, string>): Promise<string> {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const source = s3Source('b-1', {
    region: 'us-east-1',
    credentials: { accessKeyId: 'k', secretAccessKey: 's' },
  });
  try {
    await source.list('', undefined, new AbortController().signal)[Symbol.asyncIterator]().next();
    return 'listed';
  } catch (error) {
    return (error as Error).message;
  } finally {
    source.close();
  }
}

test.each([
  ['AWS_ENDPOINT_URL_S3', { AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:1' }],
  ['AWS_ENDPOINT_URL', { AWS_ENDPOINT_URL: 'http://127.0.0.1:1' }],
])(
  '%s on a port nobody listens on: the hint names that URL and the variable',
  async (variable, env) => {
    // Port 1 on the loopback: nothing listens, the connection is refused at once.
    const message = await listingError(env);
    expect(message).toMatch(/^cannot list s3:\/\/b-1\/: ECONNREFUSED: /);
    expect(message).toMatch(
      new RegExp(
        `; is the endpoint http://127\\.0\\.0\\.1:1 \\(${variable}\\) right and the server reachable\\?$`,
      ),
    );
  },
);

test('AWS_ENDPOINT_URL that is no URL: refused when the source is made, naming the variable', () => {
  vi.stubEnv('AWS_ENDPOINT_URL', 'notaurl');
  expect(() =>
    s3Source('b-1', {
      region: 'us-east-1',
      credentials: { accessKeyId: 'k', secretAccessKey: 's' },
    }),
  ).toThrow(
    new InvalidOptionError(
      'endpoint',
      'notaurl',
      'an absolute http:// or https:// URL, e.g. "http://127.0.0.1:9000"',
      'AWS_ENDPOINT_URL',
    ),
  );
  // With the endpoint option, the SDK does not read the variable: nothing to refuse.
  const source = s3Source('b-1', {
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:1',
    credentials: { accessKeyId: 'k', secretAccessKey: 's' },
  });
  source.close();
});
