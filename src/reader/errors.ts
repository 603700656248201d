/** Why reading cannot go on at all: something only the person running it can fix. */
export type AccessProblem =
  | 'access-denied'
  | 'bad-credentials'
  | 'no-credentials'
  | 'no-such-bucket'
  | 'wrong-region'
  | 'invalid-bucket'
  | 'no-such-directory';

/**
 * A fatal read error: bad or missing credentials, missing permission, a missing bucket or
 * directory, the wrong region. The message says what failed and what to fix; `reason` is for
 * code. Reading stops, because every other object would fail the same way.
 */
export class ReadAccessError extends Error {
  readonly reason: AccessProblem;
  /** What to fix, e.g. "check the credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE)". */
  readonly hint: string;
  constructor(what: string, reason: AccessProblem, detail: string, hint: string, cause?: unknown) {
    super(`${what}: ${detail}; ${hint}`, { cause });
    this.name = 'ReadAccessError';
    this.reason = reason;
    this.hint = hint;
  }
}

const CREDENTIALS =
  'check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)';

const BY_NAME: Readonly<Record<string, { reason: AccessProblem; hint: string }>> = {
  InvalidAccessKeyId: {
    reason: 'bad-credentials',
    hint: `the access key id is unknown to the server: ${CREDENTIALS}, and the endpoint`,
  },
  SignatureDoesNotMatch: {
    reason: 'bad-credentials',
    hint: `the secret key does not match the access key id: ${CREDENTIALS}`,
  },
  ExpiredToken: { reason: 'bad-credentials', hint: 'the session token has expired; refresh it' },
  InvalidToken: { reason: 'bad-credentials', hint: `the session token is invalid: ${CREDENTIALS}` },
  CredentialsProviderError: {
    reason: 'no-credentials',
    hint: 'no credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE',
  },
  AccessDenied: {
    reason: 'access-denied',
    hint: 'the credentials lack s3:ListBucket or s3:GetObject on this bucket and prefix; grant them or use other credentials',
  },
  AllAccessDisabled: {
    reason: 'access-denied',
    hint: 'access to the bucket is disabled; check the bucket policy',
  },
  NoSuchBucket: {
    reason: 'no-such-bucket',
    hint: 'the bucket does not exist: check the bucket name, the endpoint and the region',
  },
  PermanentRedirect: {
    reason: 'wrong-region',
    hint: 'the bucket is in another region: set the region to the bucket region',
  },
  AuthorizationHeaderMalformed: {
    reason: 'wrong-region',
    hint: 'the region is wrong for this bucket: set the region to the bucket region',
  },
  InvalidBucketName: {
    reason: 'invalid-bucket',
    hint: 'the bucket name is invalid for this server: check the bucket name',
  },
};

interface ErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

/** The access problem an S3 error is, or undefined when it is something else. */
export function accessProblem(error: unknown): { reason: AccessProblem; hint: string } | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { name, $metadata } = error as ErrorShape;
  const known =
    typeof name === 'string' && Object.hasOwn(BY_NAME, name) ? BY_NAME[name] : undefined;
  if (known !== undefined) return known;
  const status = $metadata?.httpStatusCode;
  if (status === 403) return BY_NAME.AccessDenied;
  if (status === 301) return BY_NAME.PermanentRedirect;
  return undefined;
}

/** An S3 error as a fatal ReadAccessError when it is an access problem, else undefined. */
export function asAccessError(what: string, error: unknown): ReadAccessError | undefined {
  const problem = accessProblem(error);
  if (problem === undefined) return undefined;
  return new ReadAccessError(what, problem.reason, describeError(error), problem.hint, error);
}

/**
 * One line about an error: `NoSuchKey (HTTP 404): The specified key does not exist.`, or a
 * network code and message. Leaves out the SDK's `UnknownError` placeholder message (servers
 * that send no error body, and every HEAD reply).
 */
export function describeError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { name, code, message, $metadata } = error as ErrorShape;
  const status = $metadata?.httpStatusCode;
  const parts: string[] = [];
  let head = typeof name === 'string' && name !== 'Error' ? name : '';
  if (typeof status === 'number')
    head = head === '' ? `HTTP ${status}` : `${head} (HTTP ${status})`;
  else if (typeof code === 'string' && code !== head) head = head === '' ? code : `${head} ${code}`;
  if (head !== '') parts.push(head);
  if (
    typeof message === 'string' &&
    message !== '' &&
    message !== 'UnknownError' &&
    message !== name
  ) {
    parts.push(message);
  }
  return parts.join(': ') || String(error);
}
