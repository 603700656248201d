import { describe, expect, test, vi } from 'vitest';
import { InvalidOptionError } from '../../../src/base/invalid-option.js';
import { configure } from '../../../src/config/environment.js';
import { OPTION_NAMES } from '../../../src/config/option-table.js';
import { resolveConfig } from '../../../src/config/resolve.js';
import { S3LogRecordExporter, S3MetricExporter, S3SpanExporter } from '../../../src/index.js';
import { documentedOptions } from '../../support/documented-options.js';
import { thrown as thrownBy } from '../../support/thrown.js';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const TOKEN = 'IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN';
const KEY_ID = 'AKIAIOSFODNN7EXAMPLE';

const thrown = (fn: () => unknown) => thrownBy(fn, InvalidOptionError);

function expectNoSecret(error: InvalidOptionError): void {
  for (const text of [
    error.message,
    error.detail,
    String(error),
    error.stack ?? '',
    JSON.stringify(error.value) ?? '',
    String(error.value),
  ]) {
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(KEY_ID);
  }
}

describe('misspelled options', () => {
  test('an unknown option name throws with the name it was probably meant to be', () => {
    const error = thrown(() =>
      resolveConfig({ bucket: 'b', endPoint: 'http://127.0.0.1:9000' } as never),
    );
    expect(error.option).toBe('endPoint');
    expect(error.message).toBe('otel-s3-exporter: unknown option endPoint; did you mean endpoint?');
    expect(
      thrown(() => resolveConfig({ bucket: 'b', flushTimeoutMilis: 2000 } as never)).message,
    ).toContain('unknown option flushTimeoutMilis; did you mean flushTimeoutMillis?');
  });

  test('unknown retry options are caught too', () => {
    expect(
      thrown(() => resolveConfig({ bucket: 'b', retry: { initialDelay: 5 } } as never)).message,
    ).toContain('unknown option retry.initialDelay; did you mean retry.initialDelayMillis?');
  });

  test('a name like none of the options gets no suggestion', () => {
    const error = thrown(() => resolveConfig({ bucket: 'b', xyzzy: 1 } as never));
    expect(error.message).toBe('otel-s3-exporter: unknown option xyzzy');
  });

  test('the constructor throws it before anything starts', () => {
    expect(() => new S3MetricExporter({ bucket: 'b', compresion: 'gzip' } as never)).toThrow(
      /unknown option compresion; did you mean compression\?/,
    );
  });

  test("an option of the metric exporter given to another signal's says whose it is", () => {
    expect(
      thrown(() => new S3SpanExporter({ bucket: 'b', temporalityPreference: 'delta' } as never))
        .message,
    ).toBe(
      'otel-s3-exporter: unknown option temporalityPreference for the span exporter (S3SpanExporter): it is an option of the metric exporter (S3MetricExporter) only',
    );
    expect(
      thrown(
        () => new S3LogRecordExporter({ bucket: 'b', temporalityPreference: 'delta' } as never),
      ).message,
    ).toMatch(/log record exporter .*an option of the metric exporter \(S3MetricExporter\) only$/);
  });

  test('an option set to undefined is no mistake (spread configuration objects)', () => {
    expect(() => resolveConfig({ bucket: 'b', endpoint: undefined })).not.toThrow();
  });

  test('every option name docs/configuration.md documents is known', () => {
    const names = documentedOptions().map((o) => o.name);
    expect(names.length).toBeGreaterThan(30);
    for (const name of names) {
      // retry.initialDelayMillis is the option initialDelayMillis inside retry.
      const [outer, inner] = name.split('.') as [string, string | undefined];
      const bad = Symbol('bad');
      const options = { bucket: 'b', [outer]: inner === undefined ? bad : { [inner]: bad } };
      const error = (() => {
        try {
          resolveConfig(options as never);
        } catch (e) {
          return e as Error;
        }
        return undefined;
      })();
      expect(error?.message ?? '', name).not.toMatch(/unknown option/);
    }
  });
});

describe('credentials', () => {
  test('a string is rejected at construction, and not echoed', () => {
    const error = thrown(() =>
      resolveConfig({ bucket: 'b', credentials: `${KEY_ID}:${SECRET}` as never }),
    );
    expect(error.option).toBe('credentials');
    expect(error.message).toContain('accessKeyId, secretAccessKey');
    expectNoSecret(error);
  });

  test('an object missing the secret is rejected; the key names are shown, not the values', () => {
    const error = thrown(() =>
      resolveConfig({ bucket: 'b', credentials: { accessKeyId: KEY_ID } as never }),
    );
    expect(error.message).toContain('accessKeyId');
    expectNoSecret(error);
  });

  test('static credentials and provider functions are accepted', () => {
    const creds = { accessKeyId: KEY_ID, secretAccessKey: SECRET };
    expect(resolveConfig({ bucket: 'b', credentials: creds }).credentials).toBe(creds);
    const provider = async () => creds;
    expect(resolveConfig({ bucket: 'b', credentials: provider }).credentials).toBe(provider);
  });
});

describe('no secret in any option error', () => {
  const secretObject = {
    accessKeyId: KEY_ID,
    secretAccessKey: SECRET,
    sessionToken: TOKEN,
    nested: { password: SECRET, list: [{ token: TOKEN }] },
    credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET, sessionToken: TOKEN },
    count: 1,
  };
  const secretUrl = `https://${KEY_ID}:${SECRET}@s3.example.com:bad`;

  test('the issue example: s3Client holding credentials', () => {
    const error = thrown(() =>
      resolveConfig({
        bucket: 'b',
        s3Client: {
          credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET, sessionToken: TOKEN },
        } as never,
      }),
    );
    expect(error.option).toBe('s3Client');
    expectNoSecret(error);
  });

  for (const name of [...OPTION_NAMES, 'retry.initialDelayMillis', 'retry.maxDelayMillis']) {
    test(`${name}: an invalid value with secret-looking fields is redacted`, () => {
      for (const bad of [secretObject, [secretObject], secretUrl]) {
        const options: Record<string, unknown> = { bucket: 'b' };
        if (name.startsWith('retry.')) options.retry = { [name.slice(6)]: bad };
        else options[name] = bad;
        let error: unknown;
        try {
          resolveConfig(options as never);
        } catch (e) {
          error = e;
        }
        // Some options take any object or string (spoolFileSystem, spoolDir, region...): no error, nothing to show.
        if (error === undefined) continue;
        expect(error).toBeInstanceOf(InvalidOptionError);
        expectNoSecret(error as InvalidOptionError);
      }
    });
  }

  test('misspelled option names never show their value', () => {
    expectNoSecret(
      thrown(() =>
        resolveConfig({ bucket: 'b', credential: { secretAccessKey: SECRET } } as never),
      ),
    );
  });

  test('an endpoint URL with a password, from code or the environment', () => {
    const url = `http://${KEY_ID}:${SECRET}@host:notaport`;
    expectNoSecret(thrown(() => resolveConfig({ bucket: 'b', endpoint: url })));
    // From the environment it throws too: without it, the telemetry would go to AWS S3.
    const error = thrown(() => configure({ bucket: 'b' }, { OTEL_EXPORTER_S3_ENDPOINT: url }));
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).variable).toBe('OTEL_EXPORTER_S3_ENDPOINT');
    expectNoSecret(error);
  });

  test('an endpoint variable refused throws, naming it: the default, AWS S3, is not where to send', () => {
    const warnings: string[] = [];
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error) => {
      warnings.push(String(warning));
    });
    try {
      for (const value of ['127.0.0.1:7480', 'ftp://x']) {
        expect(() => configure({ bucket: 'b' }, { OTEL_EXPORTER_S3_ENDPOINT: value })).toThrow(
          `invalid environment variable OTEL_EXPORTER_S3_ENDPOINT (option endpoint): ${JSON.stringify(value)}`,
        );
      }
      // The option in code wins over the variable, which is then not read.
      const fromCode = configure(
        { bucket: 'b', endpoint: 'http://rgw:7480' },
        { OTEL_EXPORTER_S3_ENDPOINT: 'ftp://x' },
      );
      expect(fromCode.endpoint).toBe('http://rgw:7480');
      expect(configure({ bucket: 'b' }, {}).endpoint).toBe(undefined);
    } finally {
      spy.mockRestore();
    }
    expect(warnings).toEqual([]);
  });
});
