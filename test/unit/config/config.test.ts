import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, test } from 'vitest';
import { InvalidOptionError } from '../../../src/base/invalid-option.js';
import { configure } from '../../../src/config/environment.js';
import { DEFAULTS, type S3MetricExporterOptions } from '../../../src/config/options.js';
import { resolveConfig, resolveSources } from '../../../src/config/resolve.js';
import { normalizePrefix } from '../../../src/config/rules.js';
import { S3MetricExporter } from '../../../src/index.js';
import { defaultKeyTemplate, FORMAT_ROWS } from '../../../src/layout/formats.js';
import { KeyTemplate } from '../../../src/layout/key-template.js';
import { documentedOptions, documentedValue } from '../../support/documented-options.js';

const MAX_TIMER = 2 ** 31 - 1;

/** A key the resolved configuration renders, to see its prefix. */
const keyOf = (c: ReturnType<typeof resolveConfig>) =>
  c.keys.render({ time: new Date(0), attributes: {}, extension: '.json' });

/** Runs `fn`, asserts it threw an InvalidOptionError, and returns it. */
function invalid(fn: () => unknown): InvalidOptionError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError);
    return error as InvalidOptionError;
  }
  throw new Error('expected an InvalidOptionError, but nothing was thrown');
}

/** Options with a valid bucket plus `extra`; typed loosely so bad values can be passed. */
function opts(extra: Record<string, unknown>): S3MetricExporterOptions {
  return { bucket: 'metrics', ...extra } as never;
}

/**
 * Asserts that resolveConfig rejects `extra` with an InvalidOptionError whose `option` is
 * `option`, whose value is `value`, and whose message names the option, shows the value and
 * says what is expected (`expected` is a fragment of that explanation).
 */
function expectRejected(
  extra: Record<string, unknown>,
  option: string,
  shown: string,
  expected: string,
): InvalidOptionError {
  const error = invalid(() => resolveConfig(opts(extra)));
  expect(error.option).toBe(option);
  expect(error.message).toContain(`invalid option ${option}: ${shown} `);
  expect(error.message).toContain('(expected ');
  expect(error.message).toContain(expected);
  return error;
}

/** What a refused filePrefix is told: every part of the rule of docs/configuration.md. */
const FILE_PREFIX_RULE =
  '(expected at most 128 bytes without "/", "\\" or control characters, and not "." or "..")';

/** One test a row: expectRejected(extra, option, shown, expected), titled `title`. */
function rejectsEach(
  rows: [
    title: string,
    extra: Record<string, unknown>,
    option: string,
    shown: string,
    expected: string,
  ][],
): void {
  for (const [title, extra, option, shown, expected] of rows) {
    test(title, () => {
      expectRejected(extra, option, shown, expected);
    });
  }
}

describe('resolveConfig defaults', () => {
  test('fills every default in when only bucket is given', () => {
    const c = resolveConfig({ bucket: 'metrics' });
    expect(keyOf(c)).toMatch(
      /^year=1970\/month=01\/day=01\/hour=00\/minute=00\/metrics_[0-9a-f-]{36}\.json$/,
    );
    expect(c).toEqual({
      signal: 'metrics',
      bucket: 'metrics',
      prefix: '',
      region: undefined,
      endpoint: undefined,
      forcePathStyle: false,
      credentials: undefined,
      s3Client: undefined,
      format: 'otlp-json',
      compression: 'zstd',
      compressionLevel: 3,
      maxBatchBytes: 8 * 1024 * 1024,
      maxBatchAgeMillis: 60_000,
      maxBufferedBytes: 64 * 1024 * 1024,
      uploadConcurrency: 4,
      requestTimeoutMillis: 10_000,
      flushTimeoutMillis: 10_000,
      temporalityPreference: 'cumulative',
      conditionalWrites: true,
      startupCheck: true,
      requestChecksumCalculation: 'WHEN_SUPPORTED',
      retryInitialDelayMillis: 250,
      retryMaxDelayMillis: 30_000,
      spoolDir: undefined,
      maxSpoolBytes: 256 * 1024 * 1024,
      spoolTimeoutMillis: 5_000,
      journalSyncMillis: 1_000,
      spoolFileSystem: undefined,
      keys: expect.any(KeyTemplate),
      // Without a keyTemplate, a spool file may be in any format's default layout.
      spoolKeys: [
        expect.objectContaining({ text: c.keys.text }),
        expect.objectContaining({
          text: 'year=%Y/month=%m/day=%d/hour=%H/{filePrefix}metrics_{uuid}',
        }),
      ],
      partitionTime: 'upload',
      putObject: {},
      userAgent: undefined,
    });
  });

  test('DEFAULTS holds the default values docs/configuration.md documents', () => {
    // Read from the docs' option tables. The docs name the flat keys DEFAULTS uses for
    // compressionLevel and retry.* in their introduction.
    const fromDocs: Record<string, unknown> = {};
    const rows = documentedOptions();
    for (const { name, defaultText } of rows) {
      if (name === 'compressionLevel') {
        const [, zstd, gzip] = /^(\d+) \(zstd\), (\d+) \(gzip\)$/.exec(defaultText) ?? [];
        fromDocs.zstdLevel = Number(zstd);
        fromDocs.gzipLevel = Number(gzip);
        continue;
      }
      if (name === 'spoolFileSystem') continue; // `node:fs`: a module, not a value
      const value = documentedValue(defaultText);
      if (value === undefined) continue; // "(required)", "AWS S3", a default that depends ...
      const key = name.replace(/^retry\.(.)/, (_, c: string) => `retry${c.toUpperCase()}`);
      fromDocs[key] = value;
    }
    expect(DEFAULTS).toEqual(fromDocs);
    // The format-specific defaults the same tables give for Parquet.
    const row = (name: string) => rows.find((r) => r.name === name);
    const parquetAge = /; (\d+) for `'parquet'`$/.exec(row('maxBatchAgeMillis')?.defaultText ?? '');
    expect(FORMAT_ROWS.parquet.maxBatchAgeMillis).toBe(Number(parquetAge?.[1]));
    const parquetTemplate = /Parquet's default is `([^`]+)`/.exec(
      row('keyTemplate')?.meaning ?? '',
    );
    expect(defaultKeyTemplate('parquet', 'metrics')).toBe(parquetTemplate?.[1]);
  });

  test('keeps valid explicit values', () => {
    // Options whose resolved name and value are the option's own.
    const same = {
      bucket: 'b',
      region: 'eu-west-1',
      format: 'otlp-proto',
      compression: 'gzip',
      compressionLevel: 9,
      maxBatchBytes: 1,
      maxBufferedBytes: 1,
      maxBatchAgeMillis: MAX_TIMER,
      uploadConcurrency: 64,
      requestTimeoutMillis: 1,
      flushTimeoutMillis: 1,
      temporalityPreference: 'lowmemory',
      conditionalWrites: false,
    } as const;
    const c = resolveConfig({
      ...same,
      prefix: 'prod/checkout',
      filePrefix: 'host1_',
      retry: { initialDelayMillis: 1, maxDelayMillis: 1 },
    });
    expect(keyOf(c)).toMatch(/^prod\/checkout\/year=.*\/host1_metrics_/);
    expect(c).toMatchObject({ ...same, retryInitialDelayMillis: 1, retryMaxDelayMillis: 1 });
  });

  test("maxBatchAgeMillis defaults to the format's: 60 s for OTLP, 10 min for Parquet", () => {
    expect(resolveConfig({ bucket: 'b' }).maxBatchAgeMillis).toBe(60_000);
    expect(resolveConfig({ bucket: 'b', format: 'otlp-proto' }).maxBatchAgeMillis).toBe(60_000);
    expect(resolveConfig({ bucket: 'b', format: 'parquet' }).maxBatchAgeMillis).toBe(600_000);
    expect(
      resolveConfig({ bucket: 'b', format: 'parquet', maxBatchAgeMillis: 5_000 }).maxBatchAgeMillis,
    ).toBe(5_000);
  });

  test('compressionLevel defaults to 6 for gzip and 3 for zstd', () => {
    expect(resolveConfig({ bucket: 'b', compression: 'gzip' }).compressionLevel).toBe(6);
    expect(resolveConfig({ bucket: 'b', compression: 'zstd' }).compressionLevel).toBe(3);
  });

  test('forcePathStyle defaults to true when an endpoint is set and false otherwise', () => {
    expect(resolveConfig({ bucket: 'b', endpoint: 'http://127.0.0.1:9000' }).forcePathStyle).toBe(
      true,
    );
    expect(resolveConfig({ bucket: 'b' }).forcePathStyle).toBe(false);
  });

  test('an explicit forcePathStyle wins over the endpoint-based default', () => {
    expect(
      resolveConfig({ bucket: 'b', endpoint: 'http://127.0.0.1:9000', forcePathStyle: false })
        .forcePathStyle,
    ).toBe(false);
    expect(resolveConfig({ bucket: 'b', forcePathStyle: true }).forcePathStyle).toBe(true);
  });

  test('requestChecksumCalculation defaults to WHEN_REQUIRED with an endpoint, WHEN_SUPPORTED without', () => {
    expect(
      resolveConfig({ bucket: 'b', endpoint: 'https://s3.example.com' }).requestChecksumCalculation,
    ).toBe('WHEN_REQUIRED');
    expect(resolveConfig({ bucket: 'b' }).requestChecksumCalculation).toBe('WHEN_SUPPORTED');
  });

  test('an explicit requestChecksumCalculation wins over the endpoint-based default', () => {
    expect(
      resolveConfig({
        bucket: 'b',
        endpoint: 'http://127.0.0.1:9000',
        requestChecksumCalculation: 'WHEN_SUPPORTED',
      }).requestChecksumCalculation,
    ).toBe('WHEN_SUPPORTED');
    expect(
      resolveConfig({ bucket: 'b', requestChecksumCalculation: 'WHEN_REQUIRED' })
        .requestChecksumCalculation,
    ).toBe('WHEN_REQUIRED');
  });

  test('retry.maxDelayMillis defaults to retry.initialDelayMillis when that exceeds 30000', () => {
    const c = resolveConfig({ bucket: 'b', retry: { initialDelayMillis: 45_000 } });
    expect(c.retryInitialDelayMillis).toBe(45_000);
    expect(c.retryMaxDelayMillis).toBe(45_000);
  });

  test('maxSpoolBytes defaults to maxBatchBytes when that exceeds 256 MiB', () => {
    const MiB = 1024 * 1024;
    const options = { bucket: 'b', maxBatchBytes: 512 * MiB, maxBufferedBytes: 1024 * MiB };
    expect(resolveConfig(options).maxSpoolBytes).toBe(512 * MiB);
    expect(resolveConfig({ ...options, maxBatchBytes: 8 * MiB }).maxSpoolBytes).toBe(256 * MiB);
  });
});

describe('InvalidOptionError', () => {
  test('is a TypeError carrying option and value, with a message naming both', () => {
    const error = new InvalidOptionError('maxBatchBytes', -1, 'a positive integer');
    expect(error).toBeInstanceOf(TypeError);
    expect(error.name).toBe('InvalidOptionError');
    expect(error.option).toBe('maxBatchBytes');
    expect(error.value).toBe(-1);
    expect(error.message).toBe(
      'otel-s3-exporter: invalid option maxBatchBytes: -1 (expected a positive integer)',
    );
  });

  test('quotes string values in the message', () => {
    expect(new InvalidOptionError('format', 'xml', 'json').message).toContain('format: "xml" (');
  });
});

describe('resolveConfig rejects bad options', () => {
  test('rejects a missing bucket', () => {
    const error = invalid(() => resolveConfig({} as never));
    expect(error.option).toBe('bucket');
    expect(error.message).toContain('invalid option bucket: undefined (expected ');
    expect(error.message).toContain('non-empty string');
  });

  rejectsEach([
    ['rejects an empty bucket', { bucket: '' }, 'bucket', '""', 'non-empty string'],
    [
      'rejects a bucket containing "/"',
      { bucket: 'a/b' },
      'bucket',
      '"a/b"',
      'without "/" or spaces',
    ],
    [
      'rejects a bucket containing spaces',
      { bucket: 'my bucket' },
      'bucket',
      '"my bucket"',
      'without "/" or spaces',
    ],
    [
      'rejects an unknown compression and lists the allowed ones',
      { compression: 'brotli' },
      'compression',
      '"brotli"',
      "'zstd', 'gzip', 'none'",
    ],
    [
      'rejects an unknown format and lists the allowed ones',
      { format: 'csv' },
      'format',
      '"csv"',
      "'otlp-json', 'otlp-proto'",
    ],
  ]);

  test('rejects a non-object options argument', () => {
    const error = invalid(() => resolveConfig(null as never));
    expect(error.option).toBe('options');
  });

  rejectsEach([
    [
      'rejects an unknown temporalityPreference and lists the allowed ones',
      { temporalityPreference: 'DELTA' },
      'temporalityPreference',
      '"DELTA"',
      "'cumulative', 'delta', 'lowmemory'",
    ],
    [
      'rejects an unknown requestChecksumCalculation',
      { requestChecksumCalculation: 'ALWAYS' },
      'requestChecksumCalculation',
      '"ALWAYS"',
      "'WHEN_SUPPORTED', 'WHEN_REQUIRED'",
    ],
  ]);

  const badMillis: Array<[string, unknown, string]> = [
    ['negative', -1, '-1'],
    ['zero', 0, '0'],
    ['non-integer', 1.5, '1.5'],
    ['NaN', Number.NaN, 'NaN'],
    ['Infinity', Number.POSITIVE_INFINITY, 'Infinity'],
    ['above 2^31-1', 2 ** 31, '2147483648'],
    ['a numeric string', '1000', '"1000"'],
  ];
  for (const option of ['maxBatchAgeMillis', 'requestTimeoutMillis', 'flushTimeoutMillis']) {
    for (const [label, value, shown] of badMillis) {
      test(`rejects a ${label} ${option}`, () => {
        expectRejected(
          { [option]: value },
          option,
          shown,
          'an integer of milliseconds from 1 to 2147483647',
        );
      });
    }
    test(`accepts ${option} at the bounds 1 and 2^31-1`, () => {
      expect(resolveConfig(opts({ [option]: 1 }))[option as 'flushTimeoutMillis']).toBe(1);
      expect(resolveConfig(opts({ [option]: MAX_TIMER }))[option as 'flushTimeoutMillis']).toBe(
        MAX_TIMER,
      );
    });
  }

  const badBytes: Array<[string, unknown, string]> = [
    ['negative', -1, '-1'],
    ['zero', 0, '0'],
    ['NaN', Number.NaN, 'NaN'],
    ['non-integer', 1024.5, '1024.5'],
  ];
  for (const option of ['maxBatchBytes', 'maxBufferedBytes']) {
    for (const [label, value, shown] of badBytes) {
      test(`rejects a ${label} ${option}`, () => {
        expectRejected({ [option]: value }, option, shown, 'an integer of bytes from 1 to');
      });
    }
  }

  test('rejects maxBufferedBytes below maxBatchBytes and says it must be at least maxBatchBytes', () => {
    expectRejected(
      { maxBatchBytes: 2048, maxBufferedBytes: 1024 },
      'maxBufferedBytes',
      '1024',
      'at least maxBatchBytes (2048)',
    );
  });

  test('blames maxBatchBytes when only it is set above the default maxBufferedBytes', () => {
    expectRejected(
      { maxBatchBytes: 128 * 1024 * 1024 },
      'maxBatchBytes',
      String(128 * 1024 * 1024),
      'at most maxBufferedBytes (default 67108864); raise maxBufferedBytes as well',
    );
  });

  test('accepts maxBufferedBytes equal to maxBatchBytes', () => {
    const c = resolveConfig({ bucket: 'b', maxBatchBytes: 4096, maxBufferedBytes: 4096 });
    expect(c.maxBufferedBytes).toBe(4096);
  });

  /** What S3 allows in an object tag (Tag, S3 API reference): ^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$. */
  const TAG_CHARACTERS = 'letters, digits, spaces and + - = . _ : / @';
  rejectsEach([
    ['rejects a tag key with "&"', { tags: { 'a&b': 'x' } }, 'tags', '{"a&b":"x"}', TAG_CHARACTERS],
    [
      'rejects a tag value with ","',
      { tags: { team: 'a,b' } },
      'tags',
      '{"team":"a,b"}',
      TAG_CHARACTERS,
    ],
    [
      'rejects a tag value with "#"',
      { tags: { team: 'a#1' } },
      'tags',
      '{"team":"a#1"}',
      TAG_CHARACTERS,
    ],
    [
      'rejects a tag value with a control character',
      { tags: { team: 'a\nb' } },
      'tags',
      '{"team":"a\\nb"}',
      TAG_CHARACTERS,
    ],
    [
      'rejects a tag value with a lone surrogate as an invalid option',
      { tags: { team: '\uD800' } },
      'tags',
      '{"team":"\\ud800"}',
      TAG_CHARACTERS,
    ],
    [
      'rejects a tag key starting with aws: (reserved by AWS)',
      { tags: { 'aws:team': 'x' } },
      'tags',
      '{"aws:team":"x"}',
      'no key starting with "aws:"',
    ],
    [
      'rejects 11 tags',
      { tags: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])) },
      'tags',
      JSON.stringify(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v']))),
      'at most 10 tags',
    ],
    [
      'rejects a tag key of 129 UTF-16 code units',
      { tags: { [`${'😀'.repeat(64)}a`]: 'v' } },
      'tags',
      JSON.stringify({ [`${'😀'.repeat(64)}a`]: 'v' }),
      'keys of 1 to 128',
    ],
  ]);

  test('accepts tags of every character S3 allows, at their lengths, in x-amz-tagging form', () => {
    const c = resolveConfig(
      opts({
        tags: {
          'équipe Ü': 'café 1+1=2',
          'a-b_c.d:e/f@g': '',
          ['k'.repeat(128)]: 'v'.repeat(256),
          日本: '٣',
        },
      }),
    );
    expect(c.putObject.Tagging).toBe(
      [
        '%C3%A9quipe%20%C3%9C=caf%C3%A9%201%2B1%3D2',
        'a-b_c.d%3Ae%2Ff%40g=',
        `${'k'.repeat(128)}=${'v'.repeat(256)}`,
        '%E6%97%A5%E6%9C%AC=%D9%A3',
      ].join('&'),
    );
  });

  rejectsEach([
    [
      'rejects metadata keys that differ only in case (S3 keeps them in lower case)',
      { metadata: { Service: 'a', service: 'b' } },
      'metadata',
      '{"Service":"a","service":"b"}',
      '"Service" and "service" would be one',
    ],
    [
      'rejects uploadConcurrency 0',
      { uploadConcurrency: 0 },
      'uploadConcurrency',
      '0',
      'from 1 to 64',
    ],
    [
      'rejects uploadConcurrency 65',
      { uploadConcurrency: 65 },
      'uploadConcurrency',
      '65',
      'from 1 to 64',
    ],
    [
      'rejects a non-boolean forcePathStyle',
      { forcePathStyle: 'yes' },
      'forcePathStyle',
      '"yes"',
      'true or false',
    ],
    [
      'rejects a non-boolean conditionalWrites',
      { conditionalWrites: 1 },
      'conditionalWrites',
      '1',
      'true or false',
    ],
    ['rejects a blank region', { region: ' ' }, 'region', '" "', 'a non-empty string'],
    ['rejects an s3Client without send()', { s3Client: {} }, 's3Client', '{}', 'an S3Client'],
    [
      'rejects a filePrefix containing "/"',
      { filePrefix: 'a/b' },
      'filePrefix',
      '"a/b"',
      'without "/"',
    ],
    // The whole rule, as docs/configuration.md states it: "." and ".." are refused too.
    [
      'rejects the filePrefix ".", naming the whole rule',
      { filePrefix: '.' },
      'filePrefix',
      '"."',
      FILE_PREFIX_RULE,
    ],
    [
      'rejects the filePrefix "..", naming the whole rule',
      { filePrefix: '..' },
      'filePrefix',
      '".."',
      FILE_PREFIX_RULE,
    ],
    // A lone surrogate has no UTF-8: accepted, every upload failed (no key can carry it).
    [
      'rejects a filePrefix with a lone surrogate',
      { filePrefix: 'a\uD800' },
      'filePrefix',
      '"a\\ud800"',
      'well-formed Unicode',
    ],
    [
      'rejects a prefix with a lone surrogate',
      { prefix: 'p/\uDC00x' },
      'prefix',
      '"p/\\udc00x"',
      'well-formed Unicode',
    ],
  ]);

  // A region the AWS SDK refuses ("Region not accepted") failed every upload at runtime, retried
  // as a client error until shutdown dropped the data; the SDK itself is the judge here.
  for (const region of ['eu-west-1 ', ' us-east-1', 'eu west 1', 'us_east_1', 'eu-west-1.', '-x']) {
    test(`rejects the region ${JSON.stringify(region)} that the AWS SDK refuses`, async () => {
      const sdk = new S3Client({ region });
      await expect(sdk.config.region()).rejects.toThrow(/Region not accepted/);
      sdk.destroy();
      expectRejected(
        { region },
        'region',
        JSON.stringify(region),
        'a region name of letters, digits and "-"',
      );
    });
  }

  test('accepts the regions of AWS and of S3-compatible servers the AWS SDK accepts', async () => {
    for (const region of ['us-east-1', 'eu-central-2', 'auto', 'default', 'garage', 'US-EAST-1']) {
      const sdk = new S3Client({ region });
      await expect(sdk.config.region()).resolves.toBe(region);
      sdk.destroy();
      expect(resolveConfig({ bucket: 'b', region }).region).toBe(region);
    }
  });

  for (const endpoint of ['not a url', 'ftp://x', 'localhost:9000']) {
    test(`rejects the malformed endpoint ${JSON.stringify(endpoint)}`, () => {
      expectRejected(
        { endpoint },
        'endpoint',
        JSON.stringify(endpoint),
        'an absolute http:// or https:// URL',
      );
    });
  }

  // A URL parser drops tabs and newlines anywhere and encodes a space in the path: the request
  // would go elsewhere than the text says.
  for (const endpoint of [
    'http://127.0.0.1:9000/a b',
    'http://127.0.0.1:90\n00',
    'http://127.0.0.1:9000/\tbase',
  ]) {
    test(`rejects the endpoint ${JSON.stringify(endpoint)} with whitespace inside`, () => {
      expectRejected(
        { endpoint },
        'endpoint',
        JSON.stringify(endpoint),
        'an absolute http:// or https:// URL without user info ("user:password@"), whitespace or control characters',
      );
    });
  }

  // Neither the exporter's own requests nor the AWS SDK's send an endpoint's query or fragment:
  // the request would go elsewhere than the text says.
  for (const endpoint of [
    'https://s3.example.com/?tenant=a',
    'http://127.0.0.1:9000/base?x',
    'http://127.0.0.1:9000#base',
  ]) {
    test(`rejects the endpoint ${JSON.stringify(endpoint)} with a query or fragment`, () => {
      expectRejected(
        { endpoint },
        'endpoint',
        JSON.stringify(endpoint),
        'and without a query ("?...") or fragment ("#...")',
      );
    });
  }

  // S3 endpoints never carry user info; a password in one would be shown wherever the endpoint
  // is (messages, logs). Refused, the password not shown in the refusal either.
  for (const [endpoint, shown] of [
    ['http://user:s3cr3t@127.0.0.1:9000', '"http://[redacted]@127.0.0.1:9000"'],
    ['https://AKIA:s3cr3t/+x@s3.example.com/', '"https://[redacted]@s3.example.com/"'],
    ['http://user@127.0.0.1:9000', '"http://[redacted]@127.0.0.1:9000"'],
    ['http://@127.0.0.1:9000', '"http://[redacted]@127.0.0.1:9000"'],
    // Trimmed before it is used: around spaces do not hide the password from the redaction.
    ['  http://user:s3cr3t@127.0.0.1:9000\n', '"  http://[redacted]@127.0.0.1:9000\\n"'],
    // A URL anywhere in the value (refused for its whitespace), each one's user info.
    ['s3 http://user:s3cr3t@127.0.0.1:9000', '"s3 http://[redacted]@127.0.0.1:9000"'],
    [
      'http://h:9000 https://AKIA:s3cr3t/+x@h2 http://user@h3',
      '"http://h:9000 https://[redacted]@h2 http://[redacted]@h3"',
    ],
  ]) {
    test(`rejects the endpoint ${JSON.stringify(endpoint)} with user info, not showing it`, () => {
      const error = expectRejected(
        { endpoint },
        'endpoint',
        shown as string,
        'an absolute http:// or https:// URL without user info ("user:password@"), whitespace or control characters',
      );
      expect([error.message.includes('s3cr3t'), error.message.includes('//user')]).toEqual([
        false,
        false,
      ]);
    });
  }

  test('an "@" in the path of an endpoint is not user info', () => {
    expect(resolveConfig({ bucket: 'b', endpoint: 'http://127.0.0.1:9000/a@b' }).endpoint).toBe(
      'http://127.0.0.1:9000/a@b',
    );
  });

  test('an endpoint has the spaces and newlines around it trimmed, as the request has', () => {
    const url = ' \thttp://127.0.0.1:9000\n ';
    // WHATWG URL strips them too: the request goes where the trimmed text says.
    expect(new URL(url).host).toBe('127.0.0.1:9000');
    expect(resolveConfig({ bucket: 'b', endpoint: url }).endpoint).toBe('http://127.0.0.1:9000');
  });

  test('accepts http and https endpoints and keeps them as given', () => {
    expect(resolveConfig({ bucket: 'b', endpoint: 'http://127.0.0.1:9000' }).endpoint).toBe(
      'http://127.0.0.1:9000',
    );
    expect(resolveConfig({ bucket: 'b', endpoint: 'https://s3.example.com' }).endpoint).toBe(
      'https://s3.example.com',
    );
  });
});

describe('compressionLevel range depends on compression', () => {
  test('zstd accepts 1 and 19', () => {
    expect(resolveConfig({ bucket: 'b', compressionLevel: 1 }).compressionLevel).toBe(1);
    expect(resolveConfig({ bucket: 'b', compressionLevel: 19 }).compressionLevel).toBe(19);
  });

  test('zstd rejects 0 and 20', () => {
    expectRejected({ compressionLevel: 0 }, 'compressionLevel', '0', 'from 1 to 19');
    expectRejected({ compressionLevel: 20 }, 'compressionLevel', '20', 'from 1 to 19');
  });

  test('gzip accepts 1 and 9', () => {
    expect(
      resolveConfig({ bucket: 'b', compression: 'gzip', compressionLevel: 1 }).compressionLevel,
    ).toBe(1);
    expect(
      resolveConfig({ bucket: 'b', compression: 'gzip', compressionLevel: 9 }).compressionLevel,
    ).toBe(9);
  });

  test('gzip rejects 10 (valid for zstd) and 0, naming the gzip range', () => {
    const error = expectRejected(
      { compression: 'gzip', compressionLevel: 10 },
      'compressionLevel',
      '10',
      'from 1 to 9',
    );
    expect(error.message).toContain('gzip');
    expectRejected({ compression: 'gzip', compressionLevel: 0 }, 'compressionLevel', '0', '1 to 9');
  });

  test("'none' takes any compression's level and ignores it, and says so of one out of range", () => {
    expect(
      resolveConfig({ bucket: 'b', compression: 'none', compressionLevel: 19 }).compression,
    ).toBe('none');
    const error = expectRejected(
      { compression: 'none', compressionLevel: 20 },
      'compressionLevel',
      '20',
      "an integer (a level of zstd or gzip, ignored with compression 'none') from 1 to 19",
    );
    expect(error.message).not.toContain('none level');
  });

  test('rejects a non-integer compressionLevel', () => {
    expectRejected({ compressionLevel: 2.5 }, 'compressionLevel', '2.5', 'an integer');
  });
});

describe('retry options', () => {
  test('rejects retry.initialDelayMillis 0, negative, NaN and non-integer', () => {
    for (const [value, shown] of [
      [0, '0'],
      [-5, '-5'],
      [Number.NaN, 'NaN'],
      [1.5, '1.5'],
    ] as const) {
      expectRejected(
        { retry: { initialDelayMillis: value } },
        'retry.initialDelayMillis',
        shown,
        'from 1 to 2147483647',
      );
    }
  });

  rejectsEach([
    [
      'rejects retry.initialDelayMillis above 2^31-1',
      { retry: { initialDelayMillis: 2 ** 31 } },
      'retry.initialDelayMillis',
      '2147483648',
      'from 1 to 2147483647',
    ],
    [
      'rejects retry.maxDelayMillis below the default initial delay',
      { retry: { maxDelayMillis: 100 } },
      'retry.maxDelayMillis',
      '100',
      'from 250 (retry.initialDelayMillis) to 2147483647',
    ],
  ]);

  test('rejects retry.maxDelayMillis below retry.initialDelayMillis', () => {
    const error = expectRejected(
      { retry: { initialDelayMillis: 1000, maxDelayMillis: 999 } },
      'retry.maxDelayMillis',
      '999',
      'from 1000 (retry.initialDelayMillis) to 2147483647',
    );
    expect(error.message).toContain('retry.initialDelayMillis');
  });

  test('rejects retry.maxDelayMillis above 2^31-1 and NaN', () => {
    expectRejected(
      { retry: { maxDelayMillis: 2 ** 31 } },
      'retry.maxDelayMillis',
      '2147483648',
      'to 2147483647',
    );
    expectRejected(
      { retry: { maxDelayMillis: Number.NaN } },
      'retry.maxDelayMillis',
      'NaN',
      'to 2147483647',
    );
  });

  test('rejects a retry option that is not an object', () => {
    expectRejected({ retry: 5 }, 'retry', '5', 'an object');
  });
});

describe('prefix', () => {
  test('strips leading and trailing slashes', () => {
    expect(normalizePrefix('/prod/checkout/')).toBe('prod/checkout');
    expect(normalizePrefix('///a///')).toBe('a');
    expect(keyOf(resolveConfig({ bucket: 'b', prefix: '/x/y/' }))).toMatch(/^x\/y\/year=/);
  });

  test('an S3 URL is refused, saying where its bucket and its prefix go', () => {
    expect(() => normalizePrefix('s3://logs-bucket/prod/app')).toThrow(
      'invalid option prefix: "s3://logs-bucket/prod/app" (expected a key prefix, not an S3 URL: the bucket ("logs-bucket") goes in the bucket option and the rest ("prod/app") is the prefix)',
    );
  });

  test('drops white space around it: the exporter and the reader agree on the keys', () => {
    expect(normalizePrefix('prod  ')).toBe('prod');
    expect(normalizePrefix(' /prod/checkout/ \n')).toBe('prod/checkout');
    expect(normalizePrefix('a b/c')).toBe('a b/c');
    // White space beside the slashes stripped is around the prefix too.
    expect(normalizePrefix('prod /')).toBe('prod');
    expect(normalizePrefix(' / prod / ')).toBe('prod');
    expect(keyOf(resolveConfig({ bucket: 'b', prefix: 'x  ' }))).toMatch(/^x\/year=/);
    // A value read whole from a file, newline and all, is the prefix it holds.
    const fromFile = configure({ bucket: 'b' }, { OTEL_EXPORTER_S3_PREFIX: 'logs-prod\n' });
    expect(keyOf(fromFile)).toMatch(/^logs-prod\/year=/);
  });

  test("allows '' and undefined, both normalized to ''", () => {
    expect(normalizePrefix('')).toBe('');
    expect(normalizePrefix(undefined)).toBe('');
    expect(keyOf(resolveConfig({ bucket: 'b', prefix: '' }))).toMatch(/^year=/);
  });

  test("normalizes a prefix made only of slashes ('/', '///') to ''", () => {
    // Stripping leading and trailing slashes leaves '', which is an allowed prefix.
    expect(normalizePrefix('/')).toBe('');
    expect(normalizePrefix('///')).toBe('');
  });

  test('keeps inner dots that are not whole segments', () => {
    expect(normalizePrefix('a..b/c.d/.e')).toBe('a..b/c.d/.e');
  });

  const rejected: Array<[string, string]> = [
    ['a ".." segment', '../escape'],
    ['an inner ".." segment', 'a/../b'],
    ['a trailing ".." segment', 'a/..'],
    ['a "." segment', './a'],
    ['an inner "." segment', 'a/./b'],
    ['"//"', 'a//b'],
    ['a backslash', 'a\\b'],
    ['a newline', 'a\nb'],
    ['a NUL', 'a\u0000b'],
    ['a DEL', 'a\u007fb'],
    ['a tab', 'a\tb'],
  ];
  for (const [label, prefix] of rejected) {
    test(`rejects a prefix with ${label}`, () => {
      const error = expectRejected(
        { prefix },
        'prefix',
        JSON.stringify(prefix),
        'a key prefix without control characters, backslashes, empty, "." or ".." segments',
      );
      expect(error.value).toBe(prefix);
    });
  }

  test('rejects a prefix longer than 512 bytes and accepts exactly 512', () => {
    expect(normalizePrefix('x'.repeat(512))).toBe('x'.repeat(512));
    // 171 three-byte characters = 513 bytes
    const error = invalid(() => normalizePrefix('€'.repeat(171)));
    expect(error.message).toContain('at most 512 bytes');
  });

  test('rejects a non-string prefix', () => {
    expectRejected({ prefix: 42 }, 'prefix', '42', 'a string');
  });

  test('uses the given option name in its errors', () => {
    expect(invalid(() => normalizePrefix('a/../b', 'archivePrefix')).option).toBe('archivePrefix');
  });
});

describe('new S3MetricExporter validates options at construction', () => {
  test('constructs with valid options and shuts down cleanly', async () => {
    const exporter = new S3MetricExporter({
      bucket: 'metrics',
      compression: 'none',
      endpoint: 'http://127.0.0.1:9',
    });
    await exporter.shutdown();
  });

  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a missing bucket', { bucket: undefined }, 'bucket'],
    ['a bucket with a space', { bucket: 'a b' }, 'bucket'],
    ['an unknown compression', { compression: 'lz4' }, 'compression'],
    ['an unknown format', { format: 'csv' }, 'format'],
    ['an unknown temporalityPreference', { temporalityPreference: 'x' }, 'temporalityPreference'],
    ['a zero maxBatchAgeMillis', { maxBatchAgeMillis: 0 }, 'maxBatchAgeMillis'],
    [
      'an Infinity requestTimeoutMillis',
      { requestTimeoutMillis: Infinity },
      'requestTimeoutMillis',
    ],
    ['a NaN flushTimeoutMillis', { flushTimeoutMillis: Number.NaN }, 'flushTimeoutMillis'],
    ['a negative maxBatchBytes', { maxBatchBytes: -1 }, 'maxBatchBytes'],
    [
      'maxBufferedBytes < maxBatchBytes',
      { maxBufferedBytes: 10, maxBatchBytes: 20 },
      'maxBufferedBytes',
    ],
    ['uploadConcurrency 65', { uploadConcurrency: 65 }, 'uploadConcurrency'],
    ['a malformed endpoint', { endpoint: 'localhost:9000' }, 'endpoint'],
    ['a ".." prefix', { prefix: 'a/../b' }, 'prefix'],
    ['a gzip level of 10', { compression: 'gzip', compressionLevel: 10 }, 'compressionLevel'],
    [
      'a bad retry.initialDelayMillis',
      { retry: { initialDelayMillis: 0 } },
      'retry.initialDelayMillis',
    ],
  ];
  for (const [label, extra, option] of cases) {
    test(`throws InvalidOptionError for ${label}, like resolveConfig`, () => {
      const options = { bucket: 'metrics', compression: 'none', ...extra } as never;
      const fromConstructor = invalid(() => new S3MetricExporter(options));
      const fromResolve = invalid(() => resolveConfig(options));
      expect(fromConstructor.option).toBe(option);
      expect(fromConstructor.message).toBe(fromResolve.message);
    });
  }
});

describe("keyTemplate names its signal's objects", () => {
  const resolve = (signal: 'metrics' | 'traces' | 'logs', keyTemplate: string) =>
    resolveSources({ options: { bucket: 'b', keyTemplate }, signal });
  test('a template whose object name says another signal, or nothing for spans and log records, is refused', () => {
    // Before: spans stored as metrics_…, which a metrics compaction read as no points and deleted.
    expect(() => resolve('traces', '{service.name}/%Y/%m/%d/metrics_{uuid}')).toThrow(
      /keyTemplate.*an object name that says traces .*this template's name says metrics.*OTEL_EXPORTER_S3_TRACES_KEY_TEMPLATE/,
    );
    expect(() => resolve('logs', '%Y/%m/%d/{service.name}/{uuid}')).toThrow(InvalidOptionError);
    expect(() => resolve('metrics', '%Y/%m/%d/logs_{uuid}')).toThrow(/says logs/);
    // Its own word (with a filePrefix before it), or none for metrics (as ever), is taken.
    expect(
      resolve('traces', '{service.name}/%Y/%m/%d/{filePrefix}traces_{uuid}').keys,
    ).toBeDefined();
    expect(resolve('logs', '%Y/%m/%d/logs_{uuid}').keys).toBeDefined();
    expect(resolve('metrics', '{service.name}/%Y/%m/%d/{uuid}').keys).toBeDefined();
  });

  test('from the environment for every signal, a metrics template leaves the others their default layout, said once each', () => {
    const warned: string[] = [];
    const config = resolveSources({
      options: { bucket: 'b' },
      signal: 'traces',
      environment: new Map([
        [
          'keyTemplate',
          {
            value: '{service.name}/%Y/%m/%d/metrics_{uuid}',
            variable: 'OTEL_EXPORTER_S3_KEY_TEMPLATE',
          },
        ],
      ]),
      warn: (e) => warned.push(e.detail),
    });
    expect(warned).toEqual([expect.stringMatching(/OTEL_EXPORTER_S3_KEY_TEMPLATE.*says traces/)]);
    expect(
      config.keys.render({
        time: new Date(0),
        attributes: {},
        extension: '.json',
        id: '00000000-0000-7000-8000-000000000000',
      }),
    ).toMatch(/traces_/);
  });
});

describe('a value from the environment that makes one in code invalid is the one blamed', () => {
  const resolveWith = (
    options: S3MetricExporterOptions,
    env: Record<string, [string, unknown]>,
  ) => {
    const warned: string[] = [];
    const config = resolveSources({
      options: { bucket: 'b', ...options },
      environment: new Map(
        Object.entries(env).map(([option, [variable, value]]) => [option, { variable, value }]),
      ),
      warn: (e) => warned.push(e.detail),
    });
    return { config, warned };
  };
  test('compression, retry.initialDelayMillis and maxBatchBytes from the environment give way', () => {
    // Before: each threw, though each call was valid alone and its environment valid too.
    const level = resolveWith(
      { compressionLevel: 15 },
      { compression: ['OTEL_EXPORTER_S3_COMPRESSION', 'gzip'] },
    );
    expect([level.config.compression, level.config.compressionLevel]).toEqual(['zstd', 15]);
    expect(level.warned).toEqual([
      expect.stringMatching(/OTEL_EXPORTER_S3_COMPRESSION.*compressionLevel 15/),
    ]);
    const retry = resolveWith(
      { retry: { maxDelayMillis: 1_000 } },
      { 'retry.initialDelayMillis': ['OTEL_EXPORTER_S3_RETRY_INITIAL_DELAY', 60_000] },
    );
    expect([retry.config.retryInitialDelayMillis, retry.config.retryMaxDelayMillis]).toEqual([
      250, 1_000,
    ]);
    expect(retry.warned).toEqual([expect.stringMatching(/OTEL_EXPORTER_S3_RETRY_INITIAL_DELAY/)]);
    const spool = resolveWith(
      { maxSpoolBytes: 10_000_000 },
      { maxBatchBytes: ['OTEL_EXPORTER_S3_MAX_BATCH_BYTES', 20_000_000] },
    );
    expect([spool.config.maxBatchBytes, spool.config.maxSpoolBytes]).toEqual([
      8 * 1024 * 1024,
      10_000_000,
    ]);
    expect(spool.warned).toEqual([expect.stringMatching(/OTEL_EXPORTER_S3_MAX_BATCH_BYTES/)]);
  });
  test('both in code: still refused', () => {
    expect(() =>
      resolveSources({ options: { bucket: 'b', compression: 'gzip', compressionLevel: 15 } }),
    ).toThrow(InvalidOptionError);
    expect(() =>
      resolveSources({
        options: { bucket: 'b', retry: { initialDelayMillis: 60_000, maxDelayMillis: 1_000 } },
      }),
    ).toThrow(InvalidOptionError);
  });
});

describe('userAgent with s3Client', () => {
  // Before: taken and ignored: the caller's client sends its own user agent, so the word the
  // option adds never reached a request.
  const client = new S3Client({ region: 'us-east-1' });
  test('in code, both: refused, naming userAgent, its value and how to set it instead', () => {
    const error = invalid(() => resolveConfig(opts({ s3Client: client, userAgent: 'acme/1' })));
    expect(error.option).toBe('userAgent');
    expect(error.value).toBe('acme/1');
    expect(error.message).toMatch(/userAgent: "acme\/1" \(expected no s3Client.*customUserAgent/);
  });
  test('from the environment with s3Client in code: warned, naming the variable, and not taken', () => {
    const warned: string[] = [];
    const config = resolveSources({
      options: { bucket: 'b', s3Client: client },
      environment: new Map([
        ['userAgent', { variable: 'OTEL_EXPORTER_S3_USER_AGENT', value: 'acme/1' }],
      ]),
      warn: (e) => warned.push(e.detail),
    });
    expect(config.userAgent).toBeUndefined();
    expect(warned).toEqual([
      expect.stringMatching(/OTEL_EXPORTER_S3_USER_AGENT \(option userAgent\): "acme\/1"/),
    ]);
  });
  test('without s3Client: taken', () => {
    expect(resolveConfig(opts({ userAgent: 'acme/1' })).userAgent).toBe('acme/1');
  });
});
