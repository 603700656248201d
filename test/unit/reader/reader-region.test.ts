import { tmpdir } from 'node:os';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterEach, expect, test, vi } from 'vitest';
import { InvalidOptionError } from '../../../src/base/invalid-option.js';
import { createReaderClient } from '../../../src/reader/s3-source.js';
import { readMetrics } from '../../../src/reader.js';
import { runCliInProcess } from '../../support/cli-child.js';

// A region the AWS SDK refuses before any request ("Region not accepted"). The reader's listing
// said "; is the endpoint (AWS S3) right and the server reachable?": no server was asked. The
// exporter and otel-s3 refuse such a region option at construction; the reader's client now
// refuses it too, and a refused AWS_REGION or AWS_DEFAULT_REGION, naming the variable.

const credentials = { accessKeyId: 'k', secretAccessKey: 's' };
const ALLOWED =
  '(expected a region name of letters, digits and "-" (not first or last), e.g. "eu-west-1" or "auto")';

afterEach(() => {
  vi.unstubAllEnvs();
});

test('the AWS SDK refuses "bad region" before sending', async () => {
  const bare = new S3Client({ region: 'bad region', credentials });
  try {
    await expect(bare.send(new ListObjectsV2Command({ Bucket: 'b-1' }))).rejects.toThrow(
      'Region not accepted: region="bad region" is not a valid hostname component.',
    );
  } finally {
    bare.destroy();
  }
});

test('createReaderClient refuses a region the AWS SDK refuses, naming the option', () => {
  expect(() => createReaderClient({ region: 'bad region', credentials })).toThrow(
    InvalidOptionError,
  );
  expect(() => createReaderClient({ region: 'bad region', credentials })).toThrow(
    `otel-s3-exporter: invalid option region: "bad region" ${ALLOWED}`,
  );
});

test('readMetrics refuses AWS_REGION or AWS_DEFAULT_REGION that the AWS SDK refuses, naming it', async () => {
  for (const variable of ['AWS_REGION', 'AWS_DEFAULT_REGION']) {
    vi.stubEnv('AWS_REGION', '');
    vi.stubEnv('AWS_DEFAULT_REGION', '');
    vi.stubEnv(variable, 'bad region');
    const reading = readMetrics({ bucket: 'b-1', credentials })[Symbol.asyncIterator]();
    await expect(reading.next()).rejects.toThrow(
      `otel-s3-exporter: invalid environment variable ${variable} (option region): "bad region" ${ALLOWED}`,
    );
    vi.unstubAllEnvs();
  }
  // The region option wins over the variables, as for the SDK: no refusal.
  vi.stubEnv('AWS_REGION', 'bad region');
  const { client } = createReaderClient({ region: 'eu-west-1', credentials });
  client.destroy();
});

test('otel-s3 with AWS_REGION the AWS SDK refuses: a usage error naming the variable', async () => {
  const env = {
    AWS_ACCESS_KEY_ID: 'key',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_REGION: 'bad region',
  };
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  const { code, stderr } = await runCliInProcess(['ls', '--bucket', 'b-1'], {
    cwd: tmpdir(),
    env,
  });
  expect(stderr).toBe(
    `otel-s3: invalid environment variable AWS_REGION (option region): "bad region" ${ALLOWED}\n`,
  );
  expect(code).toBe(2);
});
