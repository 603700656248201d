import { parseHttpDate, parseRetryAfter } from './backoff.js';
import { endpointSwitchesOn, endpointUrlVariable } from './client-settings.js';
import {
  type AccessFault,
  type AccessFaultReason,
  accessFault,
  causes,
  clockSkewCorrected,
  errorCode,
  errorShape,
  httpStatus,
  TLS_PORT_ANSWER,
  withoutS3Code,
} from './errors.js';

/**
 * What a conditional PutObject (`If-None-Match: *`) refused says about its key, for the exporter
 * and the compactor alike:
 * - `exists`: 412 PreconditionFailed: an object has the key.
 * - `conflict`: 409 ConditionalRequestConflict: another write (or delete) of the key was in
 *   flight; this one stored nothing, and S3 says to retry. (A bare 409 is no such answer:
 *   OperationAborted, BucketAlreadyExists, ... share the status.)
 */
export type ConditionalRefusal = 'exists' | 'conflict';

/** The refusal a failed conditional PutObject carries, if any (see ConditionalRefusal). */
export function conditionalRefusal(error: unknown): ConditionalRefusal | undefined {
  const { name } = errorShape(error);
  if (httpStatus(error) === 412 || name === 'PreconditionFailed') return 'exists';
  if (name === 'ConditionalRequestConflict') return 'conflict';
  return undefined;
}

/** The configuration faults about the endpoint itself: what answers there is not the S3 API as given. */
export const ENDPOINT_FAULTS: ReadonlySet<string> = new Set(['no-tls', 'needs-tls', 'not-s3']);

/**
 * What to do after a failed PutObject. One place decides retryability:
 * - `exists`: 412 on a conditional write: an earlier attempt stored the object; success.
 * - `retry`: transient (network, timeout, throttling, 5xx, a body damaged on its way); back off
 *   and retry the same key, bytes and headers. A 409 conflict too: the exporter's keys are its own, so the write in flight is an earlier
 *   attempt of this one, and the retry is answered 412 (stored) or stores it.
 * - `config`: a fault only an operator can fix (credentials, permissions, bucket, region, an
 *   endpoint the AWS SDK's rules cannot make, one that is no S3 API); keep the data, report once,
 *   retry slowly.
 * - `fatal`: the server will never accept these bytes (e.g. 400 InvalidArgument, 413).
 * A 501 or 400 to a conditional write may be about the `If-None-Match` header itself; the
 * uploader finds out by trying once without it (see headerMayBeTheCause).
 */
export type Verdict =
  | { kind: 'exists' }
  | { kind: 'retry'; reason: string; retryAfterMillis?: number }
  | { kind: 'config'; reason: string; hint: string }
  | { kind: 'fatal'; reason: string };

/**
 * Why a failed attempt is tried again: a verdict to retry, or `probe`, the uploader's own
 * decision to try the same bytes once without If-None-Match, to learn whether the header was
 * the cause (see headerMayBeTheCause).
 */
export type RetryVerdict =
  | Extract<Verdict, { kind: 'retry' | 'config' }>
  | { kind: 'probe'; reason: string };

/** Network failures before a request could be sent: no connection was made, nothing was written. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
]);

/** Every network failure: those before sending, and a connection lost or timed out after. */
const NETWORK_CODES = new Set([
  ...NOT_SENT_CODES,
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
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
  // Cloudflare R2 (400): the request's signing time is too old (a skewed clock, a slow request).
  'ExpiredRequest',
  'OperationAborted',
  // 307: S3 redirects requests to a new bucket while its DNS name spreads (minutes to hours).
  'TemporaryRedirect',
  // MinIO (400): a backend it relays to (a remote tier, a replication target) is unreachable.
  'XMinioBackendDown',
]);

/**
 * Answers that the body arrived damaged (S3's error codes): it did not match its signed SHA-256,
 * its checksum or its Content-MD5, or it was shorter than its Content-Length. The bytes were
 * right when sent, so the same request may pass next time, and the answer says nothing about
 * If-None-Match. InvalidDigest is not one: it says the digest value is malformed, and a retry
 * would send the same value again.
 */
const DAMAGED_BODY_CODES = new Set([
  'BadDigest',
  'XAmzContentSHA256Mismatch',
  'XAmzContentChecksumMismatch', // MinIO's answer to an x-amz-checksum-* that does not match
  'IncompleteBody',
]);

/** The server says the body it received is not the one sent (see DAMAGED_BODY_CODES). */
function bodyArrivedDamaged(error: unknown): boolean {
  const { name } = errorShape(error);
  return typeof name === 'string' && DAMAGED_BODY_CODES.has(name);
}

/**
 * The server refuses the body for its size: S3's (and Ceph RGW's) 400 EntityTooLarge, or a 413
 * from a proxy's body limit. The same bytes will never pass, with or without If-None-Match.
 */
function tooLarge(error: unknown): boolean {
  return errorShape(error).name === 'EntityTooLarge' || httpStatus(error) === 413;
}

/** What the exporter's operator does about each access fault. */
const EXPORTER_FIX: Readonly<Record<AccessFaultReason, string>> = {
  'access-denied': 'grant s3:PutObject on this bucket and prefix (uploads resume by themselves)',
  'account-disabled':
    'contact the storage provider or its administrator (uploads resume by themselves)',
  'bad-credentials': 'check the credentials',
  'no-credentials': 'pass the credentials option or configure the AWS default provider chain',
  'no-such-bucket': 'create it or fix the bucket option',
  'wrong-region': 'set the region option to the bucket region',
  'invalid-bucket': 'fix the bucket option',
  'quota-exceeded': 'raise the quota or free space in the bucket (uploads resume by themselves)',
  'kms-key':
    "check the sseKmsKeyId option (the key exists, is enabled, is in the bucket's region) and grant kms:GenerateDataKey on it (uploads resume by themselves)",
};

/** The network error in an error's chain of causes (or an AggregateError's errors), if any. */
function networkError(error: unknown): { code: string; message: string } | undefined {
  for (const s of causes(error)) {
    // An AggregateError of connect() to each address of a name: the first that says where.
    const each = (s as { errors?: unknown }).errors;
    const inner = Array.isArray(each) ? each.map(networkError).find((e) => e?.message) : undefined;
    if (inner !== undefined) return inner;
    if (typeof s.code === 'string' && NETWORK_CODES.has(s.code))
      return { code: s.code, message: typeof s.message === 'string' ? s.message : '' };
    if (typeof s.message === 'string' && /socket hang up/i.test(s.message))
      return { code: 'ECONNRESET', message: s.message };
  }
  return undefined;
}

/**
 * A failed PutObject that may have stored its object all the same: it got no answer (its
 * deadline passed, or the connection was lost after it was made), so the write may have landed.
 * Not so for an HTTP answer, a connection never made (refused, no DNS answer, no route), or a
 * failure before sending (no credentials).
 */
export function mayHaveLanded(error: unknown, timedOut: boolean): boolean {
  if (timedOut) return true;
  if (httpStatus(error) !== undefined) return false;
  const network = networkError(error);
  return network !== undefined && !NOT_SENT_CODES.has(network.code);
}

/**
 * What failed on the network, as Node.js words it (`connect ECONNREFUSED 127.0.0.1:7999`,
 * `getaddrinfo ENOTFOUND host`), or undefined when the error is not a network failure.
 */
export function networkCause(error: unknown): string | undefined {
  const found = networkError(error);
  if (found === undefined) return undefined;
  return found.message.includes(found.code)
    ? found.message
    : `${found.code} ${found.message}`.trim();
}

function configVerdict(fault: AccessFault): Verdict {
  return {
    kind: 'config',
    reason: fault.reason,
    hint: `${fault.cause}; ${EXPORTER_FIX[fault.reason]}`,
  };
}

/**
 * The AWS SDK's endpoint rules refused the settings before any request (AWS_USE_FIPS_ENDPOINT
 * in aws-cn: "Partition does not support FIPS"): what to change is a setting, not the server.
 */
function endpointRulesVerdict(env: Readonly<Record<string, string | undefined>>): Verdict {
  const on = endpointSwitchesOn(env);
  const hint =
    on.length === 0
      ? "the AWS SDK has no endpoint for this region and bucket with its FIPS and dual-stack settings (the s3Client's own, or use_fips_endpoint and use_dualstack_endpoint of the AWS config file); change them or set the endpoint option"
      : `the AWS SDK has no endpoint for ${on.join(' and ')} with this region and bucket; unset ${on.map((v) => v.slice(0, -5)).join(' and ')} (or set ${on.length === 1 ? 'it' : 'them'} to false), or set the endpoint option`;
  return { kind: 'config', reason: 'no-endpoint', hint };
}

/**
 * A TLS server's 400 to plain HTTP (TLS_PORT_ANSWER): in the message this package's own requests
 * keep, or in the body text the AWS SDK keeps when it cannot parse the answer.
 */
export function tlsPortAnswer(error: unknown): boolean {
  const { message, $responseBodyText } = errorShape(error);
  return [message, $responseBodyText].some((t) => typeof t === 'string' && TLS_PORT_ANSWER.test(t));
}

/**
 * A TLS handshake answered by a server that does not speak TLS (OpenSSL's "wrong version
 * number", "packet length too long", "http request"): an https:// endpoint on a plain HTTP port.
 */
export function notTls(error: unknown): boolean {
  for (const s of causes(error)) {
    if (s.code === 'ERR_SSL_WRONG_VERSION_NUMBER') return true;
    if (
      s.code === 'EPROTO' &&
      typeof s.message === 'string' &&
      /wrong version number|packet length too long|http request/i.test(s.message)
    )
      return true;
  }
  return false;
}

/**
 * An AWS SDK endpoint variable that is not a URL (the SDK throws ERR_INVALID_URL before sending):
 * a setting to fix. Its value is shown unless it may hold user info.
 */
function badEndpointVariableVerdict(
  env: Readonly<Record<string, string | undefined>>,
): Verdict | undefined {
  const variable = endpointUrlVariable(env);
  if (variable === undefined) return undefined;
  const shown = variable.value.includes('@') ? '' : ` (${variable.value})`;
  return {
    kind: 'config',
    reason: 'no-endpoint',
    hint: `${variable.name}${shown} is not a URL; fix it (http:// or https://), unset it, or set the endpoint option`,
  };
}

/**
 * Classifies a PutObject failure. `timedOut` says the request hit its own deadline; `env` is
 * what the AWS SDK read its endpoint switches from.
 */
export function classifyUploadError(
  error: unknown,
  timedOut = false,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Verdict {
  if (timedOut) return { kind: 'retry', reason: 'timeout' };
  const s = errorShape(error);
  const name = typeof s.name === 'string' ? s.name : '';
  const status = httpStatus(error);
  const refusal = conditionalRefusal(error);

  if (refusal === 'exists') return { kind: 'exists' };
  if (status === undefined) {
    // No HTTP answer: the connection failed or a client-side deadline passed.
    if (notTls(error)) {
      const hint =
        'the server does not answer in TLS; if it serves plain HTTP, give the endpoint as http://';
      return { kind: 'config', reason: 'no-tls', hint };
    }
    if (networkError(error) !== undefined) return { kind: 'retry', reason: 'network' };
    if (name === 'TimeoutError') return { kind: 'retry', reason: 'timeout' };
  }
  if (bodyArrivedDamaged(error)) return { kind: 'retry', reason: 'damaged-body' };
  const fault = accessFault(error);
  // Full storage is the same fault whatever the status: older MinIO sent XMinioStorageFull as a
  // 500, which is otherwise retried at once as a server fault.
  if (fault?.reason === 'quota-exceeded') return configVerdict(fault);
  if (
    refusal === 'conflict' ||
    RETRYABLE_CODES.has(name) ||
    clockSkewCorrected(error) ||
    /throttl/i.test(name) || // KMS.ThrottlingException, as S3 passes it on
    (status !== undefined && RETRYABLE_STATUS.has(status))
  ) {
    const reason =
      status === 429 || status === 503 || name === 'SlowDown' || /throttl/i.test(name)
        ? 'throttled'
        : 'server';
    // An HTTP-date Retry-After is on the server's clock: read it against the answer's Date, not
    // a local clock that may be minutes off (the skew S3 refuses with RequestTimeTooSkewed).
    const headers = s.$response?.headers;
    const serverNow = parseHttpDate(headers?.date);
    const retryAfterMillis = parseRetryAfter(headers?.['retry-after'], serverNow ?? Date.now());
    return retryAfterMillis === undefined
      ? { kind: 'retry', reason }
      : { kind: 'retry', reason, retryAfterMillis };
  }
  if (fault !== undefined) return configVerdict(fault);
  if (status === 400 && tlsPortAnswer(error)) {
    const hint = 'the server answers only in TLS; give the endpoint as https://';
    return { kind: 'config', reason: 'needs-tls', hint };
  }
  if (tooLarge(error)) return { kind: 'fatal', reason: 'entity-too-large' };
  if (status === 501 || name === 'NotImplemented')
    return { kind: 'fatal', reason: 'not-implemented' };
  // No such path or no PUT there, and no S3 error code: what answers is no S3 API (a web server,
  // a console's port, a proxy's route). The endpoint is wrong, not the bytes.
  if ((status === 404 || status === 405) && withoutS3Code(error)) {
    const hint =
      'no S3 API answers at this endpoint (a web server, a console or a proxy does); check its host, port and path';
    return { kind: 'config', reason: 'not-s3', hint };
  }
  if (status === undefined && name === 'EndpointError') return endpointRulesVerdict(env);
  if (status === undefined && errorCode(error) === 'ERR_INVALID_URL') {
    const bad = badEndpointVariableVerdict(env);
    if (bad !== undefined) return bad;
  }
  if (status === undefined) {
    // No HTTP answer and not a known network code: an unexpected client-side failure
    // (e.g. a credential provider that failed). Retrying is the safe side.
    return { kind: 'retry', reason: 'client' };
  }
  return { kind: 'fatal', reason: `http-${status}` };
}

/**
 * True for answers a server may give to a header it does not support (501 NotImplemented; 400
 * from servers that reject unknown conditions): only a retry without the header can tell. A 400
 * that is not fatal names its own cause (a damaged body, an access fault such as a quota or a
 * token to refresh, a backend down), and one saying the body is too large is about the bytes:
 * never the header.
 */
export function headerMayBeTheCause(error: unknown): boolean {
  if (classifyUploadError(error).kind !== 'fatal' || tooLarge(error)) return false;
  const status = httpStatus(error);
  const { name } = errorShape(error);
  return status === 501 || status === 400 || name === 'NotImplemented';
}
