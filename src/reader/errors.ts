import { type AccessFaultReason, accessFault, describeError, objectMissing } from '../s3/errors.js';

/** Why reading cannot go on at all: something only the person running it can fix. */
export type AccessProblem = AccessFaultReason | 'no-such-directory';

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

/** What the reader's user does about each access fault (the cause comes from s3-errors.ts). */
const READER_FIX: Readonly<Record<AccessFaultReason, string>> = {
  'access-denied':
    'grant s3:ListBucket and s3:GetObject on this bucket and prefix, or use other credentials',
  'account-disabled': 'contact the storage provider or its administrator, or use other credentials',
  'bad-credentials': `${CREDENTIALS}, and the endpoint`,
  'no-credentials': 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE',
  'no-such-bucket': 'check the bucket name, the endpoint and the region',
  'wrong-region': 'set the region to the bucket region',
  'invalid-bucket': 'check the bucket name',
  'quota-exceeded': 'raise the quota or free space in the bucket',
  'kms-key': "grant kms:Decrypt on the objects' SSE-KMS key, or use other credentials",
};

/** An S3 error as a fatal ReadAccessError when it is an access problem, else undefined. */
export function asAccessError(what: string, error: unknown): ReadAccessError | undefined {
  const fault = accessFault(error);
  if (fault === undefined) return undefined;
  const hint = `${fault.cause}: ${READER_FIX[fault.reason]}`;
  return new ReadAccessError(what, fault.reason, describeError(error), hint, error);
}

/**
 * A listed object that was not there when read (GetObject, or a range of it, found no such
 * key). A compaction deletes the Parquet objects an output replaces: a read that listed their
 * hour before the output existed misses them, so its counts are short. Counted with the
 * unreadable objects, never skipped in silence.
 */
export class ObjectGoneError extends Error {
  constructor(cause: unknown) {
    super(
      'deleted after it was listed (a compaction replaced it during this read?): read again for exact counts',
      { cause },
    );
    this.name = 'ObjectGoneError';
  }
}

/**
 * A ranged GET answered without a Content-Range (HTTP 200, the whole object): the server or a
 * proxy in front of it does not honour Range, which the reader needs for large Parquet objects.
 * A fetch failure: it is not the object's fault, and a server that honours Range reads it.
 */
export class RangeIgnoredError extends Error {
  constructor(
    start: number,
    end: number,
    got: { ContentLength?: number; $metadata: { httpStatusCode?: number } },
  ) {
    const status = got.$metadata.httpStatusCode ?? 'no status';
    const length = got.ContentLength === undefined ? '' : ` of ${got.ContentLength} bytes`;
    super(
      `asked for bytes ${start}-${end - 1}, the server ignored the Range header: it answered ${status} with no Content-Range and a body${length}; use a server (or proxy) that supports ranged GETs`,
    );
    this.name = 'RangeIgnoredError';
  }
}

/**
 * A ranged GET answered with a body longer than the range (a Content-Length over it, or more
 * bytes than it as they came): a fault of the server or a proxy, not the object's size, and no
 * limit of the reader's user. A fetch failure: a server that answers ranges exactly reads it.
 */
export class RangeOverrunError extends Error {
  constructor(
    start: number,
    end: number,
    got: { $metadata: { httpStatusCode?: number } },
    bodyBytes?: number,
  ) {
    const status = got.$metadata.httpStatusCode ?? 'no status';
    const body = bodyBytes === undefined ? 'more' : `${bodyBytes}`;
    super(
      `asked for bytes ${start}-${end - 1} (${end - start} bytes), the server answered ${status} with a body of ${body} bytes; use a server (or proxy) that answers ranged GETs exactly`,
    );
    this.name = 'RangeOverrunError';
  }
}

/** A failed read of a listed object as reported: ObjectGoneError when it is not there. */
export function readFailure(error: unknown): Error {
  if (objectMissing(error)) return new ObjectGoneError(error);
  return error instanceof Error ? error : new Error(String(error));
}
