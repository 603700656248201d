import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { expect, test, vi } from 'vitest';
import { runCliInProcess } from '../../support/cli-child.js';

// otel-s3 says an AWS_USE_FIPS_ENDPOINT value the SDK ignores in its own words; the reader's
// client, which says it for the reader library, must not say it a second time as a process
// warning ("(node:…) [OTEL_S3_INVALID_ENV] …").
test('otel-s3 says an AWS endpoint switch the SDK ignores once, in its own words', async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(404, { 'content-type': 'application/xml' });
      res.end('<Error><Code>NoSuchBucket</Code><Message>no</Message></Error>');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const env = {
    AWS_ACCESS_KEY_ID: 'key',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'us-east-1',
    AWS_USE_FIPS_ENDPOINT: 'On',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const warnings: string[] = [];
  const spy = vi.spyOn(process, 'emitWarning').mockImplementation((warning) => {
    warnings.push(String(warning));
  });
  try {
    const args = ['ls', '--bucket', 'b-1', '--endpoint', `http://127.0.0.1:${port}`];
    const { code, stderr } = await runCliInProcess(args, { cwd: tmpdir(), env });
    expect(code).toBe(3);
    const said =
      'otel-s3: invalid environment variable AWS_USE_FIPS_ENDPOINT: "On" (expected "true" or "false", in lower case); the AWS SDK ignores it and takes use_fips_endpoint of the AWS config file, else false\n';
    expect(stderr.startsWith(said)).toBe(true);
    expect(warnings.filter((w) => w.includes('AWS_USE_FIPS_ENDPOINT'))).toEqual([]);
  } finally {
    spy.mockRestore();
    vi.unstubAllEnvs();
    server.close();
  }
});

// AWS_USE_FIPS_ENDPOINT=true in a region whose partition has no FIPS endpoints: the AWS SDK's
// endpoint rules refuse every request before sending it. A setting of the environment to fix,
// as a region the SDK refuses is: a usage error (2), not "any other failure" (4).
test.each(['ls', 'points', 'compact'])(
  'otel-s3 %s with AWS_USE_FIPS_ENDPOINT=true where there is no FIPS endpoint: exit code 2, naming the variable',
  async (command) => {
    const env = {
      AWS_ACCESS_KEY_ID: 'key',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_REGION: 'cn-north-1',
      AWS_USE_FIPS_ENDPOINT: 'true',
    };
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    try {
      const { code, stdout, stderr } = await runCliInProcess([command, '--bucket', 'b-1'], {
        cwd: tmpdir(),
        env,
      });
      expect([code, stdout]).toEqual([2, '']);
      expect(stderr).toContain(
        'EndpointError: Partition does not support FIPS; the AWS SDK has no endpoint for AWS_USE_FIPS_ENDPOINT=true with region cn-north-1 and this bucket: unset the variable (or set it to false), or give the endpoint\n',
      );
    } finally {
      vi.unstubAllEnvs();
    }
  },
);

// AWS_ENDPOINT_URL (or _S3) that is not a URL: the AWS SDK throws ERR_INVALID_URL before
// sending. A setting to fix, as a region the SDK refuses is: exit 2, naming the variable.
test.each([
  ['ls', 'AWS_ENDPOINT_URL'],
  ['compact', 'AWS_ENDPOINT_URL_S3'],
])('otel-s3 %s with %s=notaurl: exit code 2, naming the variable', async (command, variable) => {
  const env = {
    AWS_ACCESS_KEY_ID: 'key',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'us-east-1',
    [variable]: 'notaurl',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  try {
    const { code, stdout, stderr } = await runCliInProcess([command, '--bucket', 'b-1'], {
      cwd: tmpdir(),
      env,
    });
    expect([code, stdout]).toEqual([2, '']);
    expect(stderr).toContain(
      `invalid environment variable ${variable} (option endpoint): "notaurl"`,
    );
  } finally {
    vi.unstubAllEnvs();
  }
});
