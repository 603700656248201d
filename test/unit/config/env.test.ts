import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, test, vi } from 'vitest';
import {
  configure,
  ENVIRONMENT_VARIABLES,
  optionsFromEnvironment,
  unknownVariables,
} from '../../../src/config/environment.js';
import { spawnTs } from '../../support/child.js';

const valid: Record<string, [string, unknown]> = {
  OTEL_EXPORTER_S3_BUCKET: ['env-bucket', 'env-bucket'],
  OTEL_EXPORTER_S3_PREFIX: ['/prod/checkout/', '/prod/checkout/'],
  OTEL_EXPORTER_S3_FILE_PREFIX: ['host1_', 'host1_'],
  OTEL_EXPORTER_S3_REGION: ['eu-west-1', 'eu-west-1'],
  OTEL_EXPORTER_S3_ENDPOINT: ['http://127.0.0.1:9000', 'http://127.0.0.1:9000'],
  OTEL_EXPORTER_S3_FORCE_PATH_STYLE: ['FALSE', false],
  OTEL_EXPORTER_S3_FORMAT: ['otlp-proto', 'otlp-proto'],
  OTEL_EXPORTER_S3_COMPRESSION: ['gzip', 'gzip'],
  OTEL_EXPORTER_S3_COMPRESSION_LEVEL: ['2', 2],
  OTEL_EXPORTER_S3_MAX_BATCH_BYTES: ['1048576', 1048576],
  OTEL_EXPORTER_S3_MAX_BATCH_AGE: ['5000', 5000],
  OTEL_EXPORTER_S3_MAX_BUFFERED_BYTES: ['33554432', 33554432],
  OTEL_EXPORTER_S3_UPLOAD_CONCURRENCY: ['8', 8],
  OTEL_EXPORTER_S3_TIMEOUT: ['3000', 3000],
  OTEL_EXPORTER_S3_FLUSH_TIMEOUT: ['4000', 4000],
  OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: ['DELTA', 'delta'],
  OTEL_EXPORTER_S3_CONDITIONAL_WRITES: ['false', false],
  OTEL_EXPORTER_S3_STARTUP_CHECK: ['false', false],
  OTEL_EXPORTER_S3_CHECKSUM: ['when_supported', 'WHEN_SUPPORTED'],
  OTEL_EXPORTER_S3_RETRY_INITIAL_DELAY: ['100', 100],
  OTEL_EXPORTER_S3_RETRY_MAX_DELAY: ['9000', 9000],
  OTEL_EXPORTER_S3_SPOOL_DIR: ['/var/spool/otel-s3', '/var/spool/otel-s3'],
  OTEL_EXPORTER_S3_MAX_SPOOL_BYTES: ['67108864', 67108864],
  OTEL_EXPORTER_S3_SPOOL_TIMEOUT: ['2500', 2500],
  OTEL_EXPORTER_S3_JOURNAL_SYNC_INTERVAL: ['250', 250],
  OTEL_EXPORTER_S3_KEY_TEMPLATE: [
    '{service.name}/%Y/%m/%d/metrics_{uuid}',
    '{service.name}/%Y/%m/%d/metrics_{uuid}',
  ],
  OTEL_EXPORTER_S3_PARTITION_TIME: ['data', 'data'],
  OTEL_EXPORTER_S3_PARTITION_TIME_ZONE: ['local', 'local'],
  OTEL_EXPORTER_S3_SSE: ['aws:kms', 'aws:kms'],
  OTEL_EXPORTER_S3_SSE_KMS_KEY_ID: ['alias/metrics', 'alias/metrics'],
  OTEL_EXPORTER_S3_STORAGE_CLASS: ['standard_ia', 'STANDARD_IA'],
  OTEL_EXPORTER_S3_TAGS: ['env=prod, team=platform%2Bobs', { env: 'prod', team: 'platform+obs' }],
  OTEL_EXPORTER_S3_METADATA: ['service=checkout', { service: 'checkout' }],
  OTEL_EXPORTER_S3_USER_AGENT: ['acme-metrics/1.0', 'acme-metrics/1.0'],
};

describe('environment variables', () => {
  test('every variable in the table has a tested value', () => {
    expect(ENVIRONMENT_VARIABLES.map(([v]) => v).sort()).toEqual(Object.keys(valid).sort());
  });

  for (const [variable, option] of ENVIRONMENT_VARIABLES) {
    test(`${variable} sets ${option}`, () => {
      const [raw, expected] = valid[variable] as [string, unknown];
      const env = {
        OTEL_EXPORTER_S3_BUCKET: 'b',
        OTEL_EXPORTER_S3_SSE: 'aws:kms',
        [variable]: raw,
      };
      const parsed = optionsFromEnvironment(env).options as Record<string, unknown>;
      const [head, tail] = option.split('.') as [string, string | undefined];
      const value =
        tail === undefined ? parsed[head] : (parsed[head] as Record<string, unknown>)[tail];
      expect(value).toEqual(expected);
      // And the whole configuration resolves with it.
      expect(() => configure({}, env)).not.toThrow();
    });
  }

  test('S3 feature variables reach the PutObject fields and the key template', () => {
    const config = configure(
      {},
      {
        OTEL_EXPORTER_S3_BUCKET: 'b',
        OTEL_EXPORTER_S3_SSE: 'aws:kms',
        OTEL_EXPORTER_S3_SSE_KMS_KEY_ID: 'alias/metrics',
        OTEL_EXPORTER_S3_STORAGE_CLASS: 'INTELLIGENT_TIERING',
        OTEL_EXPORTER_S3_TAGS: 'env=prod,team=a b',
        OTEL_EXPORTER_S3_METADATA: 'service=checkout',
        OTEL_EXPORTER_S3_KEY_TEMPLATE: '{service.name}/%Y/metrics_{uuid}',
      },
    );
    expect(config.putObject).toEqual({
      ServerSideEncryption: 'aws:kms',
      SSEKMSKeyId: 'alias/metrics',
      StorageClass: 'INTELLIGENT_TIERING',
      Tagging: 'env=prod&team=a%20b',
      Metadata: { service: 'checkout' },
    });
    expect(config.keys.attributeNames).toEqual(['service.name']);
  });

  test('constructor options win over the environment', () => {
    const config = configure(
      { bucket: 'from-options', compression: 'none', retry: { maxDelayMillis: 777 } },
      {
        OTEL_EXPORTER_S3_BUCKET: 'from-env',
        OTEL_EXPORTER_S3_COMPRESSION: 'gzip',
        OTEL_EXPORTER_S3_RETRY_MAX_DELAY: '9000',
        OTEL_EXPORTER_S3_RETRY_INITIAL_DELAY: '5',
      },
    );
    expect(config.bucket).toBe('from-options');
    expect(config.compression).toBe('none');
    expect(config.retryMaxDelayMillis).toBe(777);
    expect(config.retryInitialDelayMillis).toBe(5);
  });

  test('empty values count as unset', () => {
    expect(
      optionsFromEnvironment({ OTEL_EXPORTER_S3_BUCKET: '', OTEL_EXPORTER_S3_TIMEOUT: '  ' })
        .options,
    ).toEqual({});
  });

  /** configure() with `env`, returning the configuration and the process warnings it emitted. */
  function configureCapturing(env: Record<string, string>, options = {}) {
    const warnings: { message: string; code: string | undefined }[] = [];
    const spy = vi
      .spyOn(process, 'emitWarning')
      .mockImplementation((warning: string | Error, opts?: unknown) => {
        const code =
          typeof opts === 'object' && opts !== null ? (opts as { code?: string }).code : undefined;
        warnings.push({ message: String(warning), code });
      });
    try {
      return { config: configure(options, env), warnings };
    } finally {
      spy.mockRestore();
    }
  }

  test('a value refused for another option warns with the value used in its place', () => {
    // retry.maxDelayMillis' default is raised to retry.initialDelayMillis: not the documented one.
    const { config, warnings } = configureCapturing({
      OTEL_EXPORTER_S3_BUCKET: 'b',
      OTEL_EXPORTER_S3_RETRY_INITIAL_DELAY: '60000',
      OTEL_EXPORTER_S3_RETRY_MAX_DELAY: '1000',
      OTEL_EXPORTER_S3_COMPRESSION_LEVEL: '99',
    });
    expect([config.retryMaxDelayMillis, config.compressionLevel]).toEqual([60_000, 3]);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/COMPRESSION_LEVEL .*: 99 .*; using the default \(3\) instead$/),
      expect.stringMatching(/RETRY_MAX_DELAY .*: 1000 .*; using the default \(60000\) instead$/),
    ]);
  });

  test('a batch size refused for a smaller bound in code warns with the size used, the bound', () => {
    const { config, warnings } = configureCapturing(
      { OTEL_EXPORTER_S3_BUCKET: 'b', OTEL_EXPORTER_S3_MAX_BATCH_BYTES: String(6 * 1024 * 1024) },
      { maxBufferedBytes: 4 * 1024 * 1024 },
    );
    expect([config.maxBatchBytes, config.maxBufferedBytes]).toEqual([4194304, 4194304]);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(
        /MAX_BATCH_BYTES .*: 6291456 .*; using the default \(4194304\) instead$/,
      ),
    ]);
  });

  test('a value that does not parse warns, naming the variable, the value and what is allowed, and the default is used', () => {
    const cases: [string, string, RegExp, (c: ReturnType<typeof configure>) => unknown, unknown][] =
      [
        [
          'OTEL_EXPORTER_S3_MAX_BATCH_BYTES',
          '8MB',
          /invalid environment variable OTEL_EXPORTER_S3_MAX_BATCH_BYTES \(option maxBatchBytes\): "8MB" \(expected a non-negative integer of bytes, e\.g\. 8388608 for 8 MiB\); using the default instead/,
          (c) => c.maxBatchBytes,
          8 * 1024 * 1024,
        ],
        [
          'OTEL_EXPORTER_S3_MAX_BATCH_AGE',
          '5s',
          /OTEL_EXPORTER_S3_MAX_BATCH_AGE \(option maxBatchAgeMillis\): "5s" \(expected a non-negative integer of milliseconds, e\.g\. 5000 for 5 s\)/,
          (c) => c.maxBatchAgeMillis,
          60_000,
        ],
        [
          'OTEL_EXPORTER_S3_FORCE_PATH_STYLE',
          'yes',
          /OTEL_EXPORTER_S3_FORCE_PATH_STYLE .*"yes" \(expected true or false\)/,
          (c) => c.forcePathStyle,
          false,
        ],
        [
          'OTEL_EXPORTER_S3_COMPRESSION',
          'lz4',
          /OTEL_EXPORTER_S3_COMPRESSION .*"lz4" \(expected one of 'zstd', 'gzip', 'none'\)/,
          (c) => c.compression,
          'zstd',
        ],
      ];
    for (const [variable, raw, message, read, fallback] of cases) {
      const { config, warnings } = configureCapturing({
        OTEL_EXPORTER_S3_BUCKET: 'b',
        [variable]: raw,
      });
      expect(read(config)).toEqual(fallback);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.message).toMatch(message);
      expect(warnings[0]?.code).toBe('OTEL_S3_INVALID_ENV');
    }
  });

  test('a parsed value out of range also warns with the variable, and the default is used', () => {
    const cases: [string, string, RegExp, (c: ReturnType<typeof configure>) => unknown, unknown][] =
      [
        [
          'OTEL_EXPORTER_S3_MAX_BATCH_AGE',
          '0',
          /invalid environment variable OTEL_EXPORTER_S3_MAX_BATCH_AGE \(option maxBatchAgeMillis\): 0/,
          (c) => c.maxBatchAgeMillis,
          60_000,
        ],
        [
          'OTEL_EXPORTER_S3_RETRY_MAX_DELAY',
          '0',
          /OTEL_EXPORTER_S3_RETRY_MAX_DELAY \(option retry.maxDelayMillis\)/,
          (c) => c.retryMaxDelayMillis,
          30_000,
        ],
        [
          'OTEL_EXPORTER_S3_PREFIX',
          'a/../b',
          /OTEL_EXPORTER_S3_PREFIX \(option prefix\)/,
          (c) =>
            c.keys.render({ time: new Date(0), attributes: {}, extension: '' }).startsWith('year='),
          true,
        ],
        [
          'OTEL_EXPORTER_S3_MAX_BATCH_BYTES',
          String(512 * 1024 * 1024),
          /OTEL_EXPORTER_S3_MAX_BATCH_BYTES \(option maxBatchBytes\): 536870912 \(expected at most maxBufferedBytes \(default 67108864\)/,
          (c) => c.maxBatchBytes,
          8 * 1024 * 1024,
        ],
      ];
    for (const [variable, raw, message, read, fallback] of cases) {
      const { config, warnings } = configureCapturing({
        OTEL_EXPORTER_S3_BUCKET: 'b',
        [variable]: raw,
      });
      expect(read(config)).toEqual(fallback);
      expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(message)]);
    }
  });

  // A region the AWS SDK refuses failed every upload later ("Region not accepted"), with no
  // word at construction when it came from AWS_REGION or AWS_DEFAULT_REGION.
  test('a region the AWS SDK refuses, from any variable, warns with the variable and the default is used', () => {
    const allowed = '(expected a region name of letters, digits and "-" (not first or last)';
    const cases: [Record<string, string>, string, string | undefined][] = [
      [
        { OTEL_EXPORTER_S3_REGION: 'eu west 1' },
        'OTEL_EXPORTER_S3_REGION (option region): "eu west 1"',
        undefined,
      ],
      [{ AWS_REGION: 'eu-west-1 ' }, 'AWS_REGION (option region): "eu-west-1 "', 'us-east-1'],
      [
        { AWS_DEFAULT_REGION: 'us_east_1' },
        'AWS_DEFAULT_REGION (option region): "us_east_1"',
        'us-east-1',
      ],
      // As the AWS SDK's chain: a bad AWS_REGION is said, and AWS_DEFAULT_REGION is next.
      [
        { AWS_REGION: 'eu west 1', AWS_DEFAULT_REGION: 'eu-west-2' },
        'AWS_REGION (option region): "eu west 1"',
        'eu-west-2',
      ],
    ];
    for (const [env, named, region] of cases) {
      const { config, warnings } = configureCapturing({ OTEL_EXPORTER_S3_BUCKET: 'b', ...env });
      expect(config.region).toBe(region);
      expect(warnings).toEqual([
        {
          message: `otel-s3-exporter: invalid environment variable ${named} ${allowed}, e.g. "eu-west-1" or "auto"); using the default instead`,
          code: 'OTEL_S3_INVALID_ENV',
        },
      ]);
    }
    // A good one, or one the options or OTEL_EXPORTER_S3_REGION override, is not said.
    for (const env of [
      { AWS_REGION: 'eu-west-1' },
      { AWS_REGION: 'eu west 1', OTEL_EXPORTER_S3_REGION: 'eu-west-1' },
    ] as Record<string, string>[]) {
      const { config, warnings } = configureCapturing({ OTEL_EXPORTER_S3_BUCKET: 'b', ...env });
      expect(warnings).toEqual([]);
      expect(config.region).toBe(env.OTEL_EXPORTER_S3_REGION);
    }
    expect(
      configureCapturing({ AWS_REGION: 'eu west 9' }, { bucket: 'b', region: 'auto' }),
    ).toMatchObject({
      config: { region: 'auto' },
      warnings: [],
    });
    // Nor with the caller's own client, which reads no region of ours.
    const client = new S3Client({ region: 'us-east-1' });
    expect(
      configureCapturing({ AWS_REGION: 'eu west 8' }, { bucket: 'b', s3Client: client }),
    ).toMatchObject({ config: { region: undefined }, warnings: [] });
    client.destroy();
  });

  // The AWS SDK reads AWS_USE_FIPS_ENDPOINT and AWS_USE_DUALSTACK_ENDPOINT as "true" or "false"
  // only: any other value ("TRUE", "1") it passes over without a word, and uploads went to the
  // standard endpoint when FIPS was asked for.
  test('an AWS endpoint switch the AWS SDK ignores warns, naming the variable and the value', async () => {
    const saved = process.env.AWS_USE_FIPS_ENDPOINT;
    process.env.AWS_USE_FIPS_ENDPOINT = 'TRUE';
    const client = new S3Client({ region: 'us-east-1' });
    try {
      // The SDK's own reading: not FIPS.
      expect(await client.config.useFipsEndpoint()).toBe(false);
    } finally {
      client.destroy();
      if (saved === undefined) delete process.env.AWS_USE_FIPS_ENDPOINT;
      else process.env.AWS_USE_FIPS_ENDPOINT = saved;
    }
    const ignored = (variable: string, value: string, setting: string) =>
      `otel-s3-exporter: invalid environment variable ${variable}: ${JSON.stringify(value)} (expected "true" or "false", in lower case); the AWS SDK ignores it and takes ${setting} of the AWS config file, else false`;
    const fips = configureCapturing({
      OTEL_EXPORTER_S3_BUCKET: 'b',
      AWS_USE_FIPS_ENDPOINT: 'TRUE',
    });
    expect(fips.warnings).toEqual([
      {
        message: ignored('AWS_USE_FIPS_ENDPOINT', 'TRUE', 'use_fips_endpoint'),
        code: 'OTEL_S3_INVALID_ENV',
      },
    ]);
    const dual = configureCapturing({
      OTEL_EXPORTER_S3_BUCKET: 'b',
      AWS_USE_DUALSTACK_ENDPOINT: '1',
    });
    expect(dual.warnings).toEqual([
      {
        message: ignored('AWS_USE_DUALSTACK_ENDPOINT', '1', 'use_dualstack_endpoint'),
        code: 'OTEL_S3_INVALID_ENV',
      },
    ]);
    // The values the SDK reads, and unset ones (empty is unset), are not said.
    for (const value of ['true', 'false', '']) {
      const env = { AWS_USE_FIPS_ENDPOINT: value, AWS_USE_DUALSTACK_ENDPOINT: value };
      expect(configureCapturing({ OTEL_EXPORTER_S3_BUCKET: 'b', ...env }).warnings).toEqual([]);
    }
    // Nor with the caller's own client, whose settings are the caller's.
    const own = new S3Client({ region: 'us-east-1' });
    expect(
      configureCapturing({ AWS_USE_FIPS_ENDPOINT: 'yes' }, { bucket: 'b', s3Client: own }).warnings,
    ).toEqual([]);
    own.destroy();
  });

  test('a bad environment value never stops the exporter from being built', () => {
    const { warnings } = configureCapturing({
      OTEL_EXPORTER_S3_BUCKET: 'b',
      OTEL_EXPORTER_S3_UPLOAD_CONCURRENCY: '0',
      OTEL_EXPORTER_S3_KEY_TEMPLATE: 'no-uuid',
      OTEL_EXPORTER_S3_TAGS: 'novalue',
    });
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/OTEL_EXPORTER_S3_TAGS/),
      expect.stringMatching(/OTEL_EXPORTER_S3_UPLOAD_CONCURRENCY/),
      expect.stringMatching(/OTEL_EXPORTER_S3_KEY_TEMPLATE/),
    ]);
  });

  test('an unknown OTEL_EXPORTER_S3_* name warns with the name it probably means, once per process', () => {
    const env = {
      OTEL_EXPORTER_S3_BUCKET: 'b',
      OTEL_EXPORTER_S3_ENDPIONT: 'http://127.0.0.1:9000',
      OTEL_EXPORTER_S3_SPOOLDIR: '/var/spool',
      OTEL_EXPORTER_S3_SOMETHING_ELSE: 'x',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', // another exporter's: not ours
    };
    const first = configureCapturing(env);
    // The typo is ignored (the default, AWS, stays), but not silently.
    expect(first.config.endpoint).toBeUndefined();
    expect(first.warnings).toEqual([
      {
        message:
          'otel-s3-exporter: unknown environment variable OTEL_EXPORTER_S3_ENDPIONT (did you mean OTEL_EXPORTER_S3_ENDPOINT?); it is ignored',
        code: 'OTEL_S3_INVALID_ENV',
      },
      {
        message:
          'otel-s3-exporter: unknown environment variable OTEL_EXPORTER_S3_SPOOLDIR (did you mean OTEL_EXPORTER_S3_SPOOL_DIR?); it is ignored',
        code: 'OTEL_S3_INVALID_ENV',
      },
      {
        message:
          'otel-s3-exporter: unknown environment variable OTEL_EXPORTER_S3_SOMETHING_ELSE; it is ignored',
        code: 'OTEL_S3_INVALID_ENV',
      },
    ]);
    // A second exporter in the same process: said once is enough.
    expect(configureCapturing(env).warnings).toEqual([]);
    const another = configureCapturing({ ...env, OTEL_EXPORTER_S3_REGOIN: 'eu-west-1' });
    expect(another.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining('OTEL_EXPORTER_S3_REGOIN (did you mean OTEL_EXPORTER_S3_REGION?)'),
    ]);
  });

  test('an unknown OTEL_EXPORTER_S3_* name set to empty or blank text is unset: no warning', () => {
    const env = {
      OTEL_EXPORTER_S3_BUCKET: 'b',
      OTEL_EXPORTER_S3_ENDPIONT_EMPTY: '',
      OTEL_EXPORTER_S3_ENDPIONT_BLANK: '  ',
      OTEL_EXPORTER_S3_TIMEOUT: '',
    };
    expect(configureCapturing(env).warnings).toEqual([]);
    expect(unknownVariables(env)).toEqual([]);
  });

  test('a key given twice in a map variable warns, naming the key, and the default is used', () => {
    for (const [variable, raw, key] of [
      ['OTEL_EXPORTER_S3_TAGS', 'env=prod,team=a, env=staging', 'env'],
      ['OTEL_EXPORTER_S3_METADATA', 'service=checkout,service =cart', 'service'],
    ] as const) {
      const { config, warnings } = configureCapturing({
        OTEL_EXPORTER_S3_BUCKET: 'b',
        [variable]: raw,
      });
      expect(warnings).toEqual([
        {
          message: `otel-s3-exporter: invalid environment variable ${variable} (option ${variable.endsWith('TAGS') ? 'tags' : 'metadata'}): ${JSON.stringify(raw)} (expected comma-separated key=value pairs, each key once: "${key}" is given twice); using the default instead`,
          code: 'OTEL_S3_INVALID_ENV',
        },
      ]);
      expect(config.putObject).toEqual({});
    }
  });

  test('a map key named like an Object.prototype property is kept as a key', () => {
    const { options } = optionsFromEnvironment({
      OTEL_EXPORTER_S3_TAGS: '__proto__=x,constructor=y',
    });
    expect(Object.entries(options.tags ?? {})).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
  });

  test('OTEL_EXPORTER_S3_ENDPOINT with a trailing newline (a file read whole) is trimmed', () => {
    const env = { OTEL_EXPORTER_S3_BUCKET: 'b', OTEL_EXPORTER_S3_ENDPOINT: 'http://rgw:7480\n' };
    const { config, warnings } = configureCapturing(env);
    expect(warnings).toEqual([]);
    expect(config.endpoint).toBe('http://rgw:7480');
  });

  test('a maxSpoolBytes variable below maxBatchBytes warns, and the default used holds a batch', () => {
    const MiB = 1024 * 1024;
    const options = { maxBatchBytes: 512 * MiB, maxBufferedBytes: 1024 * MiB };
    const env = { OTEL_EXPORTER_S3_BUCKET: 'b', OTEL_EXPORTER_S3_MAX_SPOOL_BYTES: '1000' };
    const { config, warnings } = configureCapturing(env, options);
    expect(warnings.map((w) => w.message)).toEqual([
      expect.stringMatching(/OTEL_EXPORTER_S3_MAX_SPOOL_BYTES \(option maxSpoolBytes\): 1000/),
    ]);
    expect(config.maxSpoolBytes).toBe(512 * MiB);
  });

  test('a bad value is warned once per process; another value of the variable is warned again', () => {
    const env = { OTEL_EXPORTER_S3_BUCKET: 'b', OTEL_EXPORTER_S3_UPLOAD_CONCURRENCY: 'many' };
    const said = (e: Record<string, string>) =>
      configureCapturing(e).warnings.map((w) => w.message);
    expect(said(env)).toEqual([expect.stringMatching(/UPLOAD_CONCURRENCY.*"many"/)]);
    expect(said(env)).toEqual([]);
    expect(said({ ...env, OTEL_EXPORTER_S3_UPLOAD_CONCURRENCY: 'lots' })).toEqual([
      expect.stringMatching(/UPLOAD_CONCURRENCY.*"lots"/),
    ]);
  });

  test('one value refused by two signals for their own reasons is said for each', () => {
    const template = '{service.name}/%Y/%m/%d/metrics_{uuid}';
    const env = { OTEL_EXPORTER_S3_BUCKET: 'b', OTEL_EXPORTER_S3_KEY_TEMPLATE: template };
    const warned: string[] = [];
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation((w: string | Error) => {
      warned.push(String(w));
    });
    try {
      for (const signal of ['traces', 'logs', 'traces'] as const) configure({}, env, signal);
    } finally {
      spy.mockRestore();
    }
    // Each signal's reason once: before, the logs exporter's went unsaid (same variable, value).
    expect(warned).toEqual([
      expect.stringMatching(/KEY_TEMPLATE.*says traces/),
      expect.stringMatching(/KEY_TEMPLATE.*says logs/),
    ]);
  });

  test('a near miss of a variable outside our prefix suggests that variable, whole', () => {
    const env = { OTEL_EXPORTER_S3_BUCKET: 'b', OTEL_EXPORTER_S3_TEMPORALITY_PREFERENCE: 'delta' };
    expect(configureCapturing(env).warnings.map((w) => w.message)).toEqual([
      'otel-s3-exporter: unknown environment variable OTEL_EXPORTER_S3_TEMPORALITY_PREFERENCE (did you mean OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE?); it is ignored',
    ]);
  });

  test('without a logger the misspelled name reaches stderr, once for two exporters', async () => {
    const child = spawnTs('test/support/children/unknown-env.ts', {
      OTEL_EXPORTER_S3_BUCKET: 'metrics',
      OTEL_EXPORTER_S3_ENDPIONT: 'http://127.0.0.1:9000',
      OTEL_LOG_LEVEL: undefined,
      NODE_OPTIONS: undefined,
    });
    const exit = await child.exited;
    expect([exit.code, child.lines]).toEqual([0, ['{"built":2}']]);
    const said = child
      .stderr()
      .split('\n')
      .filter((line) => line.includes('OTEL_EXPORTER_S3_ENDPIONT'));
    expect(said).toEqual([
      expect.stringMatching(
        /^\(node:\d+\) \[OTEL_S3_INVALID_ENV\] OtelS3ExporterWarning: otel-s3-exporter: unknown environment variable OTEL_EXPORTER_S3_ENDPIONT \(did you mean OTEL_EXPORTER_S3_ENDPOINT\?\); it is ignored$/,
      ),
    ]);
  }, 30_000);

  test('an invalid bucket variable still throws: there is no default to fall back to', () => {
    expect(() => configure({}, { OTEL_EXPORTER_S3_BUCKET: 'a b' })).toThrow(
      /invalid environment variable OTEL_EXPORTER_S3_BUCKET \(option bucket\): "a b"/,
    );
  });

  test('a bad value the caller passed is reported as the option, even when the variable is set too', () => {
    expect(() =>
      configure({ bucket: 'b', maxBatchAgeMillis: -1 }, { OTEL_EXPORTER_S3_MAX_BATCH_AGE: '100' }),
    ).toThrow(/invalid option maxBatchAgeMillis: -1/);
  });

  test('without a bucket anywhere, the error says where to set it', () => {
    expect(() => configure({}, {})).toThrow(
      /invalid option bucket: undefined .*OTEL_EXPORTER_S3_BUCKET/,
    );
  });
});

describe('a variable for one signal', () => {
  test("OTEL_EXPORTER_S3_<SIGNAL>_* wins over OTEL_EXPORTER_S3_* for that signal's exporter only", () => {
    const env = {
      OTEL_EXPORTER_S3_BUCKET: 'telemetry',
      OTEL_EXPORTER_S3_FORMAT: 'otlp-proto',
      OTEL_EXPORTER_S3_TRACES_FORMAT: 'otlp-json',
      OTEL_EXPORTER_S3_LOGS_PREFIX: 'logs-here',
      OTEL_EXPORTER_S3_SPOOL_DIR: '/var/spool/otel-s3',
    };
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const metrics = configure({}, env, 'metrics');
      const traces = configure({}, env, 'traces');
      const logs = configure({}, env, 'logs');
      expect([metrics.format, traces.format, logs.format]).toEqual([
        'otlp-proto',
        'otlp-json',
        'otlp-proto',
      ]);
      expect(logs.keys.render({ time: new Date(0), attributes: {}, extension: '', id: 'x' })).toBe(
        'logs-here/year=1970/month=01/day=01/hour=00/minute=00/logs_x',
      );
      expect(
        traces.keys.render({ time: new Date(0), attributes: {}, extension: '', id: 'x' }),
      ).toBe('year=1970/month=01/day=01/hour=00/minute=00/traces_x');
      // Each signal's spool under the one directory: metrics where it always was.
      expect([metrics.spoolDir, traces.spoolDir, logs.spoolDir]).toEqual([
        '/var/spool/otel-s3',
        '/var/spool/otel-s3/traces',
        '/var/spool/otel-s3/logs',
      ]);
      // A signal's variable is a known name: no warning about it.
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  test("a bad signal's variable warns and the variable for all is used, as the OTLP exporters do", () => {
    const env = {
      OTEL_EXPORTER_S3_BUCKET: 'telemetry',
      OTEL_EXPORTER_S3_COMPRESSION: 'gzip',
      OTEL_EXPORTER_S3_TRACES_COMPRESSION: 'bogus',
      OTEL_EXPORTER_S3_COMPRESSION_LEVEL: '5',
      OTEL_EXPORTER_S3_TRACES_COMPRESSION_LEVEL: '99',
    };
    const warned: string[] = [];
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation((w: string | Error) => {
      warned.push(String(w));
    });
    try {
      const traces = configure({}, env, 'traces');
      // Parsed but refused by its rule (gzip takes 1 to 9) is the same: the variable for all.
      expect([traces.compression, traces.compressionLevel]).toEqual(['gzip', 5]);
    } finally {
      spy.mockRestore();
    }
    expect(warned).toEqual([
      "otel-s3-exporter: invalid environment variable OTEL_EXPORTER_S3_TRACES_COMPRESSION (option compression): \"bogus\" (expected one of 'zstd', 'gzip', 'none'); using OTEL_EXPORTER_S3_COMPRESSION instead",
      expect.stringMatching(
        /^otel-s3-exporter: invalid environment variable OTEL_EXPORTER_S3_TRACES_COMPRESSION_LEVEL \(option compressionLevel\): 99 \(expected .*\); using OTEL_EXPORTER_S3_COMPRESSION_LEVEL instead$/,
      ),
    ]);
  });

  test('an option of another signal is an unknown option', () => {
    expect(() => configure({ bucket: 'b', temporalityPreference: 'delta' }, {}, 'traces')).toThrow(
      /unknown option temporalityPreference/,
    );
  });
});
