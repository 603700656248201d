import { expect, test } from 'vitest';
import { InvalidOptionError } from '../../../src/base/invalid-option.js';

const error = new InvalidOptionError('endpoint', 'ftp://x', 'an http(s) URL');

test('in code, the option is named', () => {
  expect(error.detail).toBe('invalid option endpoint: "ftp://x" (expected an http(s) URL)');
  expect(error.origin).toBeUndefined();
});

test('from the environment, the variable is named as before', () => {
  const env = InvalidOptionError.fromVariable(error, 'OTEL_EXPORTER_S3_ENDPOINT');
  expect(env.detail).toBe(
    'invalid environment variable OTEL_EXPORTER_S3_ENDPOINT (option endpoint): "ftp://x" (expected an http(s) URL)',
  );
  expect([env.variable, env.origin]).toEqual([
    'OTEL_EXPORTER_S3_ENDPOINT',
    'environment variable OTEL_EXPORTER_S3_ENDPOINT',
  ]);
});

test('from anywhere else, the origin a tool gives is named', () => {
  const flag = InvalidOptionError.fromOrigin(error, 'flag --endpoint');
  expect(flag).toBeInstanceOf(InvalidOptionError);
  expect(flag.message).toBe(
    'otel-s3-exporter: invalid flag --endpoint (option endpoint): "ftp://x" (expected an http(s) URL)',
  );
  expect(flag).toMatchObject({
    option: 'endpoint',
    value: 'ftp://x',
    expected: 'an http(s) URL',
    origin: 'flag --endpoint',
    variable: undefined,
  });
});

test('a credential stays redacted wherever it came from', () => {
  const secret = 'https://AKIA:wJalrXUtnFEMI/K7MDENG@host';
  const moved = InvalidOptionError.fromOrigin(
    new InvalidOptionError('endpoint', secret, 'a URL'),
    '"endpoint" in ./.otel-s3.json',
  );
  expect(moved.message).not.toContain('wJalrXUtnFEMI');
  expect(moved.message).toContain('invalid "endpoint" in ./.otel-s3.json (option endpoint)');
});
