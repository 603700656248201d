/**
 * What an S3 error is, in one place for the exporter and the reader: its shape, a one-line
 * description, and whether it is an access fault that only an operator can fix.
 */

/** The faults of configuration: credentials, permissions, bucket, region. */
export type AccessFaultReason =
  | 'access-denied'
  | 'account-disabled'
  | 'bad-credentials'
  | 'no-credentials'
  | 'no-such-bucket'
  | 'wrong-region'
  | 'invalid-bucket'
  | 'kms-key'
  | 'quota-exceeded';

export interface AccessFault {
  reason: AccessFaultReason;
  /** What is wrong, e.g. "the bucket does not exist"; each caller adds what to do about it. */
  cause: string;
}

const BY_NAME: Readonly<Record<string, AccessFault>> = {
  AccessDenied: {
    reason: 'access-denied',
    cause: 'the credentials lack permission on this bucket and prefix',
  },
  // The account or bucket is refused as a whole, which no grant of a permission can change.
  AllAccessDisabled: {
    reason: 'account-disabled',
    cause: 'all access to the bucket has been disabled by the storage provider',
  },
  AccountProblem: {
    reason: 'account-disabled',
    cause: 'the storage provider reports a problem with the account',
  },
  // Ceph RGW's (403) answer for a suspended user.
  UserSuspended: { reason: 'account-disabled', cause: 'the user is suspended' },
  // Cloudflare R2's (403) answer for an account without an R2 subscription.
  NotEntitled: {
    reason: 'account-disabled',
    cause: 'the account is not entitled to this service (no subscription)',
  },
  InvalidAccessKeyId: {
    reason: 'bad-credentials',
    cause: 'the access key id is unknown to the server',
  },
  SignatureDoesNotMatch: {
    reason: 'bad-credentials',
    cause: 'the secret key does not match the access key id',
  },
  ExpiredToken: { reason: 'bad-credentials', cause: 'the session token has expired' },
  InvalidToken: { reason: 'bad-credentials', cause: 'the session token is invalid' },
  TokenRefreshRequired: {
    reason: 'bad-credentials',
    cause: 'the session token must be refreshed',
  },
  // Cloudflare R2's (401) answer to missing or invalid credentials.
  Unauthorized: {
    reason: 'bad-credentials',
    cause: 'the server did not accept the credentials (missing or invalid)',
  },
  CredentialsProviderError: { reason: 'no-credentials', cause: 'no credentials were found' },
  NoSuchBucket: { reason: 'no-such-bucket', cause: 'the bucket does not exist' },
  PermanentRedirect: { reason: 'wrong-region', cause: 'the bucket is in another region' },
  AuthorizationHeaderMalformed: {
    reason: 'wrong-region',
    cause: 'the region is wrong for this bucket',
  },
  // S3's (400) answer for a bucket in an opt-in region asked at another region's endpoint.
  IllegalLocationConstraintException: {
    reason: 'wrong-region',
    cause: 'the region is wrong for this bucket',
  },
  // Ceph RGW's (403) answer to a write past a bucket or user quota: not a permission.
  QuotaExceeded: {
    reason: 'quota-exceeded',
    cause: 'the bucket or its owner is over its storage quota',
  },
  // MinIO's (400) answer to a write past a hard bucket quota: not a fault of these bytes.
  XMinioAdminBucketQuotaExceeded: {
    reason: 'quota-exceeded',
    cause: 'the bucket is over its quota',
  },
  // MinIO's (507) answer when its drives are below their minimum free space.
  XMinioStorageFull: {
    reason: 'quota-exceeded',
    cause: "the server's storage is full (its drives are below their minimum free space)",
  },
  InvalidBucketName: {
    reason: 'invalid-bucket',
    cause: 'the bucket name is invalid for this server',
  },
};

/** How Ceph RGW's message about an SSE-KMS key it cannot retrieve starts. */
const CEPH_KMS_KEY_MESSAGE = 'Failed to retrieve the actual key, kms-keyid:';

/**
 * The name of the error a request fails with when its credentials did not come before its
 * deadline (the provider hangs): no request was sent.
 */
export const CREDENTIALS_TIMEOUT = 'CredentialsProviderTimeout';

/** The parts of an AWS SDK (or Node.js network) error this project reads. */
export interface S3ErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  $metadata?: { httpStatusCode?: unknown; clockSkewCorrected?: unknown };
  $response?: { statusCode?: unknown; headers?: Record<string, string | undefined> };
  /** The body the AWS SDK could not parse as S3's answer (it keeps it for the caller). */
  $responseBodyText?: unknown;
}

export function errorShape(error: unknown): S3ErrorShape {
  return typeof error === 'object' && error !== null ? (error as S3ErrorShape) : {};
}

export function httpStatus(error: unknown): number | undefined {
  const s = errorShape(error);
  const status = s.$metadata?.httpStatusCode ?? s.$response?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** The error and its chain of causes, at most five deep. */
export function* causes(error: unknown): Generator<S3ErrorShape> {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e !== undefined; depth++) {
    const s = errorShape(e);
    yield s;
    e = s.cause;
  }
}

/** The first errno-style `code` on the error or its chain of causes (e.g. ECONNRESET). */
export function errorCode(error: unknown): string | undefined {
  for (const s of causes(error)) if (typeof s.code === 'string') return s.code;
  return undefined;
}

/** The access fault an error is (by S3 error code, else by status 401, 403, 301), or undefined. */
export function accessFault(error: unknown): AccessFault | undefined {
  const fault = accessFaultOf(error);
  // S3 names the bucket's region in a header (a PermanentRedirect's message does not), or in an
  // IllegalLocationConstraintException's message: "The ap-east-1 location constraint is ...".
  const { $response, message } = errorShape(error);
  const region =
    $response?.headers?.['x-amz-bucket-region'] ||
    (typeof message === 'string'
      ? /^The ([a-z]+(?:-[a-z]+)+-\d+) location constraint/.exec(message)?.[1]
      : undefined);
  if (fault?.reason === 'wrong-region' && typeof region === 'string' && region !== '')
    return { reason: fault.reason, cause: `the bucket is in region ${region}` };
  return fault;
}

function accessFaultOf(error: unknown): AccessFault | undefined {
  const { name, message } = errorShape(error);
  // Ceph RGW answers a PutObject whose SSE-KMS key its KMS cannot give with 403 InvalidAccessKeyId
  // (or another code) and this message: the key, not the credentials, is wrong.
  if (typeof message === 'string' && message.startsWith(CEPH_KMS_KEY_MESSAGE))
    return {
      reason: 'kms-key',
      cause: 'the SSE-KMS key cannot be used (the server cannot retrieve it)',
    };
  if (typeof name === 'string' && Object.hasOwn(BY_NAME, name)) return BY_NAME[name];
  // S3 passes KMS's own faults of an SSE-KMS key on (KMS.NotFoundException, KMS.DisabledException,
  // ...; HTTP 400): the key, not the bytes, is wrong. KMS's throttling is retried by its status.
  if (typeof name === 'string' && name.startsWith('KMS.') && !/throttl/i.test(name))
    return { reason: 'kms-key', cause: `the SSE-KMS key cannot be used (${name})` };
  const status = httpStatus(error);
  if (status === 401) return BY_NAME.Unauthorized;
  if (status === 403) return BY_NAME.AccessDenied;
  if (status === 301) return BY_NAME.PermanentRedirect;
  return undefined;
}

/**
 * True when the server refused the credentials themselves (a `bad-credentials` fault: unknown
 * key, wrong secret, expired or invalid token): they are worth asking their provider for again,
 * as a secret fixed at its source is only seen that way.
 */
export function credentialsRefused(error: unknown): boolean {
  return accessFault(error)?.reason === 'bad-credentials';
}

/**
 * True when the answer's Date showed the request signed with a clock outside the server's
 * window, and the clock offset was corrected from it: the AWS SDK's `$metadata.clockSkewCorrected`,
 * which the signed writer sets too. Whatever the refusal says (some servers answer 403
 * SignatureDoesNotMatch, not RequestTimeTooSkewed), the skew is its likely cause, and a retry
 * signed in the server's time tells.
 */
export function clockSkewCorrected(error: unknown): boolean {
  return errorShape(error).$metadata?.clockSkewCorrected === true;
}

/** True when the request's credentials did not come before its deadline (see CREDENTIALS_TIMEOUT). */
export function credentialsTimedOut(error: unknown): boolean {
  return errorShape(error).name === CREDENTIALS_TIMEOUT;
}

/**
 * True when a read failed because the object is not there (NoSuchKey, a bare 404, a missing
 * file): deleted since it was listed, say. A missing bucket is an access fault, not this.
 */
export function objectMissing(error: unknown): boolean {
  if (accessFault(error) !== undefined) return false;
  const { name } = errorShape(error);
  if (name === 'NoSuchKey' || name === 'NotFound' || httpStatus(error) === 404) return true;
  return errorCode(error) === 'ENOENT';
}

/**
 * One line about an error: `NoSuchKey (HTTP 404): The specified key does not exist.`, or a
 * network code and message. Leaves out the SDK's `UnknownError` placeholder message (servers
 * that send no error body, and every HEAD reply).
 */
export function describeError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { name, message } = errorShape(error);
  const status = httpStatus(error);
  const code = errorCode(error);
  const parts: string[] = [];
  let head = typeof name === 'string' && name !== 'Error' ? name : '';
  if (status !== undefined) head = head === '' ? `HTTP ${status}` : `${head} (HTTP ${status})`;
  // A file system error's message starts with its code ("ENOSPC: no space left on device, write").
  const inMessage = typeof message === 'string' && message.startsWith(`${code}: `);
  if (code !== undefined && code !== name && !(inMessage && head === ''))
    head = head === '' ? code : `${head} ${code}`;
  if (head !== '') parts.push(head);
  if (
    typeof message === 'string' &&
    message !== '' &&
    message !== 'UnknownError' &&
    message !== name
  ) {
    parts.push(sdkUnparsed(error, message) ?? withoutOpenSslDetail(message));
  }
  return parts.join(': ') || String(error);
}

/**
 * The names an error has when the answer carried no S3 error code: the AWS SDK's and this
 * package's placeholders (`UnknownError`; `NotFound` for a bare 404), or a plain Error where the
 * SDK could not parse the body.
 */
const NO_CODE_NAMES = new Set(['UnknownError', 'NotFound', 'Error']);

/**
 * True when an HTTP answer carried no S3 error code. Every S3 server names the error of a
 * refused PutObject; a web server, a console or a proxy's route does not.
 */
export function withoutS3Code(error: unknown): boolean {
  const { name } = errorShape(error);
  return httpStatus(error) !== undefined && (typeof name !== 'string' || NO_CODE_NAMES.has(name));
}

/**
 * What a TLS server answers to plain HTTP, in a body that is no S3 error: Go's (MinIO's) line,
 * nginx's page, Apache's. Quoted in the error's message (notS3Answer); verdict.ts makes it a
 * configuration fault. Here, not beside the body's parser: the compactor loads the verdict
 * without the XML parser.
 */
export const TLS_PORT_ANSWER =
  /HTTP request to an HTTPS server|plain HTTP request was sent to HTTPS port|speaking plain HTTP to an SSL-enabled server port/i;

/**
 * A body that is no S3 error, as messages quote it: tags dropped, one line, at most 120
 * characters (`not an S3 answer: "502 Bad Gateway nginx"`). Undefined for a body of no text.
 */
export function notS3Answer(text: string): string | undefined {
  const line = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (line === '') return undefined;
  return `not an S3 answer: "${line.length > 120 ? `${line.slice(0, 119)}…` : line}"`;
}

/**
 * An answer the AWS SDK could not parse as S3's (a proxy's page, a TLS port's 400): what it
 * said, tags dropped and cut to a line, in place of the SDK's "XML parse error ...
 * Deserialization error: ... inspect the hidden field {error}.$response".
 */
function sdkUnparsed(error: unknown, message: string): string | undefined {
  const text = errorShape(error).$responseBodyText;
  if (typeof text !== 'string' || !message.includes('Deserialization error')) return undefined;
  return notS3Answer(text);
}

/**
 * OpenSSL's error line in a TLS failure's message (`write EPROTO 40CD…:error:0A00010B:SSL
 * routines:tls_validate_record_header:wrong version number:../deps/…/tlsany_meth.c:77:` and a
 * newline) cut to its reason: `write EPROTO (TLS: wrong version number)`.
 */
function withoutOpenSslDetail(message: string): string {
  const m = /^(.*?)\s*[0-9A-F]+:error:[0-9A-F]+:[^:]*routines:[^:]*:([^:]+):[\s\S]*$/.exec(message);
  return m === null ? message : `${m[1]} (TLS: ${m[2]})`;
}
