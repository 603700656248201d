import { constants } from 'node:buffer';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { InvalidOptionError } from '../base/invalid-option.js';
import { CONTROL_CHARS, LONE_SURROGATE, WELL_FORMED } from '../base/text.js';

/**
 * Validators of single values: each returns the value (typed) or throws an InvalidOptionError
 * that names the option, shows the value and says what is allowed. Shared by the exporter,
 * the reader and the CLI; where a value came from is added by the caller.
 */

/** setTimeout clamps anything larger to 1 ms, so no timing option may exceed it. */
const MAX_TIMER_MILLIS = 2 ** 31 - 1;
/** S3 keys are at most 1024 bytes; keep room for the partition path and the file name. */
const MAX_PREFIX_BYTES = 512;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

export function oneOf<T extends string>(option: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value))
    return value as T;
  throw new InvalidOptionError(option, value, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`);
}

export function integer(
  option: string,
  value: unknown,
  min: number,
  max: number,
  unit: string,
  minSource = '',
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const from = minSource === '' ? `${min}` : `${min} (${minSource})`;
    throw new InvalidOptionError(option, value, `an integer ${unit} from ${from} to ${max}`);
  }
  return value;
}

export const millis = (option: string, value: unknown, min = 1, minSource = ''): number =>
  integer(option, value, min, MAX_TIMER_MILLIS, 'of milliseconds', minSource);

export const bytes = (option: string, value: unknown, min = 1): number =>
  integer(option, value, min, Number.MAX_SAFE_INTEGER, 'of bytes');

export function bool(option: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new InvalidOptionError(option, value, 'true or false');
  return value;
}

/** An object (not null, not an array); what it holds is checked by its consumer. */
export function object(option: string, value: unknown, expected: string): object {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidOptionError(option, value, expected);
  return value;
}

export function nonEmptyString(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidOptionError(option, value, 'a non-empty string');
  }
  return value;
}

/**
 * A region as the AWS SDK accepts it (a DNS label: letters, digits and "-", neither first nor
 * last). The SDK refuses any other at every request, and the exporter's own signed requests put
 * it in their signature scope, where S3 refuses it too: caught here, not at the first upload.
 */
export function region(option: string, value: unknown): string {
  const name = nonEmptyString(option, value);
  if (!/^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/.test(name)) {
    throw new InvalidOptionError(
      option,
      value,
      'a region name of letters, digits and "-" (not first or last), e.g. "eu-west-1" or "auto"',
    );
  }
  return name;
}

/**
 * Normalizes a key prefix; rejects anything that could escape it or produce an odd key. White
 * space around it is dropped (a value read from a file ends in a newline; "prod " and "prod /"
 * were meant as "prod"), as its slashes are: the exporter, the reader and otel-s3 then agree on
 * its keys.
 */
export function normalizePrefix(value: unknown, option = 'prefix'): string {
  if (value === undefined || value === '') return '';
  if (typeof value !== 'string') throw new InvalidOptionError(option, value, 'a string');
  const trimmed = value.replace(/^[\s/]+|[\s/]+$/g, '');
  if (trimmed === '') return '';
  const url = /^s3:\/\/([^/]*)\/?(.*)$/i.exec(trimmed);
  if (url !== null) {
    const [, bucket = '', rest = ''] = url;
    throw new InvalidOptionError(
      option,
      value,
      `a key prefix, not an S3 URL: the bucket ("${bucket}") goes in the bucket option and the rest ("${rest}") is the prefix`,
    );
  }
  if (LONE_SURROGATE.test(trimmed)) throw new InvalidOptionError(option, value, WELL_FORMED);
  const why = 'a key prefix without control characters, backslashes, empty, "." or ".." segments';
  if (CONTROL_CHARS.test(trimmed) || trimmed.includes('\\')) {
    throw new InvalidOptionError(option, value, why);
  }
  for (const segment of trimmed.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new InvalidOptionError(option, value, why);
    }
  }
  if (Buffer.byteLength(trimmed) > MAX_PREFIX_BYTES) {
    throw new InvalidOptionError(option, value, `at most ${MAX_PREFIX_BYTES} bytes`);
  }
  return trimmed;
}

export function filePrefix(option: string, value: unknown): string {
  if (value === '') return '';
  if (typeof value === 'string' && LONE_SURROGATE.test(value))
    throw new InvalidOptionError(option, value, WELL_FORMED);
  if (
    typeof value !== 'string' ||
    CONTROL_CHARS.test(value) ||
    /[/\\]/.test(value) ||
    value === '.' ||
    value === '..' ||
    Buffer.byteLength(value) > 128
  ) {
    throw new InvalidOptionError(
      option,
      value,
      'at most 128 bytes without "/", "\\" or control characters, and not "." or ".."',
    );
  }
  return value;
}

/** True for an absolute http:// or https:// URL: what an S3 endpoint must be. */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * An endpoint, trimmed: a URL parser ignores the whitespace around it, so the trimmed text is
 * where requests go (and what messages show). Whitespace or a control character inside is
 * refused: the parser would drop a tab or newline, or encode a space, and the request would go
 * elsewhere than the text says. So is user info (`user:password@` before the host, even
 * empty): an S3 endpoint never has it, and a password in it would be shown wherever the
 * endpoint is (the refusal shows the value with its user info redacted). So is a query or a
 * fragment: neither the exporter's own requests nor the AWS SDK's send them.
 */
export function endpoint(option: string, value: unknown): string {
  const url = typeof value === 'string' ? value.trim() : value;
  if (isHttpUrl(url) && !/[\s\p{Cc}]/u.test(url) && !USER_INFO.test(url) && !/[?#]/.test(url))
    return url;
  const expected =
    'an absolute http:// or https:// URL without user info ("user:password@"), whitespace or control characters, and without a query ("?...") or fragment ("#..."), e.g. "http://127.0.0.1:9000"';
  throw new InvalidOptionError(option, value, expected);
}

/** An "@" in a URL's authority: before the first "/", "?", "#" or "\\" after the scheme. */
const USER_INFO = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]*@/i;

/** True for a non-empty bucket name without "/" or whitespace. */
export function isBucketName(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !/[/\s]/.test(value);
}

export function bucket(option: string, value: unknown, expected: string): string {
  if (!isBucketName(value)) throw new InvalidOptionError(option, value, expected);
  return value;
}

export function s3Client(option: string, value: unknown): S3Client {
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof Reflect.get(value, 'send') !== 'function'
  )
    throw new InvalidOptionError(option, value, 'an S3Client from @aws-sdk/client-s3');
  return value as S3Client;
}

type Credentials = NonNullable<S3ClientConfig['credentials']>;

/** Static credentials ({ accessKeyId, secretAccessKey, sessionToken? }) or a provider function. */
export function credentials(option: string, value: unknown): Credentials {
  if (typeof value === 'function') return value as Credentials;
  const o = value as Record<string, unknown> | null;
  const isString = (v: unknown) => typeof v === 'string' && v !== '';
  if (
    typeof o === 'object' &&
    o !== null &&
    isString(o.accessKeyId) &&
    isString(o.secretAccessKey) &&
    (o.sessionToken === undefined || typeof o.sessionToken === 'string')
  ) {
    return o as unknown as Credentials;
  }
  throw new InvalidOptionError(
    option,
    value,
    '{ accessKeyId, secretAccessKey, sessionToken? } with non-empty strings, or a credential provider function (e.g. fromIni() from @aws-sdk/credential-providers)',
  );
}

export function printable(option: string, value: unknown, max: number): string {
  if (
    typeof value !== 'string' ||
    value === '' ||
    value.length > max ||
    !PRINTABLE_ASCII.test(value)
  ) {
    throw new InvalidOptionError(option, value, `printable ASCII text of 1 to ${max} characters`);
  }
  return value;
}

function stringRecord(option: string, value: unknown): Record<string, string> {
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    !Object.values(value).every((v) => typeof v === 'string')
  ) {
    throw new InvalidOptionError(option, value, 'an object of string values');
  }
  return value as Record<string, string>;
}

/** What S3 allows in a tag's key and value (Tag in the S3 API reference). */
const TAG_TEXT = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

/**
 * Object tags as S3 takes them in `x-amz-tagging`, checked as S3 checks them (lengths in UTF-16
 * code units, as S3 counts): a tag S3 refuses would fail every upload.
 */
export function tagging(option: string, value: unknown): string | undefined {
  const entries = Object.entries(stringRecord(option, value));
  if (entries.length === 0) return undefined;
  if (
    entries.length > 10 ||
    entries.some(
      ([k, v]) =>
        k === '' ||
        k.length > 128 ||
        v.length > 256 ||
        !TAG_TEXT.test(k) ||
        !TAG_TEXT.test(v) ||
        k.toLowerCase().startsWith('aws:'),
    )
  ) {
    throw new InvalidOptionError(
      option,
      value,
      'at most 10 tags, keys of 1 to 128 characters, values of up to 256, of letters, digits, spaces and + - = . _ : / @, no key starting with "aws:"',
    );
  }
  return entries.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

/** User metadata (`x-amz-meta-*`), as S3 accepts it. */
export function metadata(option: string, value: unknown): Record<string, string> | undefined {
  const record = stringRecord(option, value);
  const entries = Object.entries(record);
  if (entries.length === 0) return undefined;
  const size = entries.reduce((n, [k, v]) => n + k.length + v.length, 0);
  if (
    entries.some(([k, v]) => !/^[A-Za-z0-9_-]+$/.test(k) || !PRINTABLE_ASCII.test(v)) ||
    size > 2048
  ) {
    throw new InvalidOptionError(
      option,
      value,
      'keys of letters, digits, "-" and "_", printable ASCII values, at most 2 KB in all',
    );
  }
  // S3 keeps metadata keys in lower case: two that differ only in case would be one header.
  const seen = new Map<string, string>();
  for (const [k] of entries) {
    const other = seen.get(k.toLowerCase());
    if (other !== undefined)
      throw new InvalidOptionError(
        option,
        value,
        `keys that differ in more than case (S3 keeps them in lower case: "${other}" and "${k}" would be one)`,
      );
    seen.set(k.toLowerCase(), k);
  }
  return record;
}

/** A size limit: a whole number of bytes that fits in a Buffer; InvalidOptionError otherwise. */
export function sizeLimit(option: string, value: unknown): number {
  if (
    typeof value !== 'number' ||
    !Number.isSafeInteger(value) ||
    value < 1 ||
    value > constants.MAX_LENGTH
  ) {
    throw new InvalidOptionError(
      option,
      value,
      `a whole number of bytes from 1 to ${constants.MAX_LENGTH} (the largest Buffer)`,
    );
  }
  return value;
}
