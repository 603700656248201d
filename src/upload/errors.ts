import { parseRetryAfter } from './backoff.js';

/**
 * What to do after a failed PutObject. One place decides retryability:
 * - `exists`: 412 on a conditional write: an earlier attempt stored the object; success.
 * - `retry`: transient (network, timeout, throttling, 5xx); back off and retry the same key.
 * - `config`: a fault only an operator can fix (credentials, permissions, bucket, region);
 *   keep the data, report once, retry slowly.
 * - `conditional-unsupported`: the server rejects `If-None-Match`; retry without it.
 * - `fatal`: the server will never accept these bytes (e.g. 400 InvalidArgument, 413).
 */
export type Verdict =
  | { kind: 'exists' }
  | { kind: 'retry'; reason: string; retryAfterMillis?: number }
  | { kind: 'config'; reason: string; hint: string }
  | { kind: 'conditional-unsupported'; reason: string }
  | { kind: 'fatal'; reason: string };

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
]);

const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const RETRYABLE_CODES = new Set([
  'RequestTimeout',
  'RequestTimeoutException',
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeTooSkewed',
  // A concurrent conditional write of the same key (e.g. a timed-out attempt still running on
  // the server): the next attempt gets 412 (stored) or succeeds.
  'ConditionalRequestConflict',
  'OperationAborted',
]);

const CONFIG_FAULTS: Readonly<Record<string, string>> = {
  AccessDenied:
    'the credentials lack s3:PutObject on this bucket and prefix; grant it (uploads resume by themselves)',
  AllAccessDisabled: 'access to the bucket is disabled; check the bucket policy',
  InvalidAccessKeyId: 'the access key id is unknown to the server; check the credentials',
  SignatureDoesNotMatch: 'the secret key does not match the access key id; check the credentials',
  ExpiredToken: 'the session token has expired; refresh the credentials',
  InvalidToken: 'the session token is invalid; check the credentials',
  NoSuchBucket: 'the bucket does not exist; create it or fix the bucket option',
  PermanentRedirect: 'the bucket is in another region; set the region option to the bucket region',
  AuthorizationHeaderMalformed: 'the region is wrong for this bucket; set the region option',
  InvalidBucketName: 'the bucket name is invalid for this server; fix the bucket option',
  CredentialsProviderError:
    'no credentials were found; pass the credentials option or configure the AWS default provider chain',
};

interface ErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $response?: { statusCode?: unknown; headers?: Record<string, string | undefined> };
}

function shape(error: unknown): ErrorShape {
  return typeof error === 'object' && error !== null ? (error as ErrorShape) : {};
}

function networkCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 5; depth++) {
    const s = shape(e);
    if (typeof s.code === 'string' && NETWORK_CODES.has(s.code)) return s.code;
    if (typeof s.message === 'string' && /socket hang up/i.test(s.message)) return 'ECONNRESET';
    e = s.cause;
  }
  return undefined;
}

function statusOf(s: ErrorShape): number | undefined {
  const status = s.$metadata?.httpStatusCode ?? s.$response?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** Classifies a PutObject failure. `timedOut` says the request hit its own deadline. */
export function classifyUploadError(error: unknown, timedOut = false): Verdict {
  if (timedOut) return { kind: 'retry', reason: 'timeout' };
  const s = shape(error);
  const name = typeof s.name === 'string' ? s.name : '';
  const status = statusOf(s);

  if (status === 412 || name === 'PreconditionFailed') return { kind: 'exists' };
  if (status === undefined) {
    // No HTTP answer: the connection failed or a client-side deadline passed.
    if (networkCode(error) !== undefined) return { kind: 'retry', reason: 'network' };
    if (name === 'TimeoutError') return { kind: 'retry', reason: 'timeout' };
  }
  if (RETRYABLE_CODES.has(name) || (status !== undefined && RETRYABLE_STATUS.has(status))) {
    const reason = status === 429 || status === 503 || name === 'SlowDown' ? 'throttled' : 'server';
    const retryAfterMillis = parseRetryAfter(s.$response?.headers?.['retry-after']);
    return retryAfterMillis === undefined
      ? { kind: 'retry', reason }
      : { kind: 'retry', reason, retryAfterMillis };
  }
  const hint = Object.hasOwn(CONFIG_FAULTS, name) ? CONFIG_FAULTS[name] : undefined;
  if (hint !== undefined) return { kind: 'config', reason: configReason(name), hint };
  if (status === 403) {
    return { kind: 'config', reason: 'access-denied', hint: CONFIG_FAULTS.AccessDenied as string };
  }
  if (status === 301) {
    return {
      kind: 'config',
      reason: 'wrong-region',
      hint: CONFIG_FAULTS.PermanentRedirect as string,
    };
  }
  if (status === 501 || name === 'NotImplemented') {
    return { kind: 'conditional-unsupported', reason: 'not-implemented' };
  }
  if (status === undefined) {
    // No HTTP answer and not a known network code: an unexpected client-side failure
    // (e.g. a credential provider that failed). Retrying is the safe side.
    return { kind: 'retry', reason: 'client' };
  }
  return { kind: 'fatal', reason: `http-${status}` };
}

function configReason(name: string): string {
  switch (name) {
    case 'NoSuchBucket':
      return 'no-such-bucket';
    case 'PermanentRedirect':
    case 'AuthorizationHeaderMalformed':
      return 'wrong-region';
    case 'InvalidAccessKeyId':
    case 'SignatureDoesNotMatch':
    case 'ExpiredToken':
    case 'InvalidToken':
    case 'CredentialsProviderError':
      return 'bad-credentials';
    case 'InvalidBucketName':
      return 'invalid-bucket';
    default:
      return 'access-denied';
  }
}

/** A short description of an error for log lines: name, HTTP status, network code, message. */
export function describeError(error: unknown): string {
  const s = shape(error);
  const parts: string[] = [];
  if (typeof s.name === 'string' && s.name !== 'Error') parts.push(s.name);
  const status = statusOf(s);
  if (status !== undefined) parts.push(`HTTP ${status}`);
  const code = networkCode(error) ?? (typeof s.code === 'string' ? s.code : undefined);
  if (code !== undefined) parts.push(code);
  if (typeof s.message === 'string' && s.message !== '') parts.push(s.message);
  return parts.join(': ') || String(error);
}
