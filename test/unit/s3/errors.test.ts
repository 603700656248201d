import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { asAccessError } from '../../../src/reader/errors.js';
import { credentialsRefused, describeError } from '../../../src/s3/errors.js';
import { classifyUploadError, headerMayBeTheCause } from '../../../src/s3/verdict.js';
import { s3Error } from '../../support/s3-error.js';

/** A Node.js system error such as http.request emits. */
function nodeError(code: string, message = `connect ${code} 127.0.0.1:9000`): Error {
  return Object.assign(new Error(message), { code, errno: -1, syscall: 'connect' });
}

const NOT_S3 = {
  kind: 'config',
  reason: 'not-s3',
  hint: 'no S3 API answers at this endpoint (a web server, a console or a proxy does); check its host, port and path',
};

/** One test a row: classifyUploadError of s3Error(name, status) is `verdict`, exactly. */
function classifiedAs(
  rows: [title: string, name: string, status: number, verdict: object][],
): void {
  for (const [title, name, status, verdict] of rows) {
    test(title, () => {
      expect(classifyUploadError(s3Error(name, status))).toEqual(verdict);
    });
  }
}

describe('classifyUploadError: exists', () => {
  test('412 PreconditionFailed is exists', () => {
    expect(classifyUploadError(s3Error('PreconditionFailed', 412))).toEqual({ kind: 'exists' });
  });

  test('a 412 status alone is exists', () => {
    expect(classifyUploadError(s3Error('UnknownError', 412))).toEqual({ kind: 'exists' });
  });

  test('the PreconditionFailed name without a status is exists', () => {
    expect(classifyUploadError({ name: 'PreconditionFailed' })).toEqual({ kind: 'exists' });
  });
});

describe('classifyUploadError: retry', () => {
  classifiedAs([
    ['429 is retried as throttled', 'TooManyRequests', 429, { kind: 'retry', reason: 'throttled' }],
    [
      '500 InternalError is retried as server',
      'InternalError',
      500,
      { kind: 'retry', reason: 'server' },
    ],
    ['502 is retried as server', 'BadGateway', 502, { kind: 'retry', reason: 'server' }],
    // S3's answer while a new bucket's DNS name spreads: temporary, so not a reason to drop data.
    [
      '307 TemporaryRedirect is retried as server',
      'TemporaryRedirect',
      307,
      { kind: 'retry', reason: 'server' },
    ],
    [
      '400 RequestTimeout is retried as server',
      'RequestTimeout',
      400,
      { kind: 'retry', reason: 'server' },
    ],
    // MinIO's answers when it cannot keep up or is starting (cmd/api-errors.go): throttling, so
    // the grown backoff is kept as for S3's SlowDown.
    [
      '503 SlowDownWrite (MinIO) is throttled',
      'SlowDownWrite',
      503,
      { kind: 'retry', reason: 'throttled' },
    ],
    [
      '503 SlowDownRead (MinIO) is throttled',
      'SlowDownRead',
      503,
      { kind: 'retry', reason: 'throttled' },
    ],
    [
      '503 XMinioServerNotInitialized (MinIO) is throttled',
      'XMinioServerNotInitialized',
      503,
      { kind: 'retry', reason: 'throttled' },
    ],
    // MinIO's answer when a backend it relays to (a remote tier, a replication target) cannot be
    // reached: 400 XMinioBackendDown, "Remote backend is unreachable" (cmd/api-errors.go).
    [
      '400 XMinioBackendDown (MinIO) is retried as server',
      'XMinioBackendDown',
      400,
      { kind: 'retry', reason: 'server' },
    ],
  ]);

  describe('a 400 saying the body arrived damaged is retried, and is never about If-None-Match', () => {
    for (const name of [
      'BadDigest',
      'XAmzContentSHA256Mismatch',
      'XAmzContentChecksumMismatch',
      'IncompleteBody',
    ]) {
      test(name, () => {
        const error = s3Error(name, 400);
        expect(classifyUploadError(error)).toEqual({ kind: 'retry', reason: 'damaged-body' });
        expect(headerMayBeTheCause(error)).toBe(false);
      });
    }

    test('InvalidDigest (a malformed digest, sent again by a retry) is not one', () => {
      const error = s3Error('InvalidDigest', 400);
      expect(classifyUploadError(error)).toEqual({ kind: 'fatal', reason: 'http-400' });
      expect(headerMayBeTheCause(error)).toBe(true);
    });
  });

  test('503 SlowDown is throttled and takes retryAfterMillis from the Retry-After header', () => {
    const error = {
      name: 'SlowDown',
      message: 'Please reduce your request rate.',
      $metadata: { httpStatusCode: 503 },
      $response: { statusCode: 503, headers: { 'retry-after': '2' } },
    };
    expect(classifyUploadError(error)).toEqual({
      kind: 'retry',
      reason: 'throttled',
      retryAfterMillis: 2_000,
    });
  });

  test('503 SlowDown without Retry-After has no retryAfterMillis', () => {
    const verdict = classifyUploadError(s3Error('SlowDown', 503));
    expect(verdict).toEqual({ kind: 'retry', reason: 'throttled' });
    expect('retryAfterMillis' in verdict).toBe(false);
  });

  test('the SlowDown name without a status is throttled', () => {
    expect(classifyUploadError({ name: 'SlowDown' })).toEqual({
      kind: 'retry',
      reason: 'throttled',
    });
  });

  test('504 is retried as server, with Retry-After if the server sent one', () => {
    expect(classifyUploadError(s3Error('GatewayTimeout', 504))).toEqual({
      kind: 'retry',
      reason: 'server',
    });
    expect(
      classifyUploadError(s3Error('GatewayTimeout', 504, 'x', { 'retry-after': '1.5' })),
    ).toEqual({ kind: 'retry', reason: 'server', retryAfterMillis: 1_500 });
  });

  // An HTTP-date Retry-After is a time on the server's clock: read against the answer's own Date.
  // Against the local clock, a host an hour behind waited 10 minutes (the cap) for a 30 s
  // Retry-After, and one an hour ahead did not wait at all.
  test.each([
    ['an hour behind', 3_600_000],
    ['an hour ahead', -3_600_000],
    ['right', 0],
  ])('an HTTP-date Retry-After with the local clock %s: the delay the server meant', (_, off) => {
    const serverNow = Math.floor((Date.now() + off) / 1000) * 1000;
    const headers = {
      date: new Date(serverNow).toUTCString(),
      'retry-after': new Date(serverNow + 30_000).toUTCString(),
    };
    expect(classifyUploadError(s3Error('SlowDown', 503, 'x', headers))).toEqual({
      kind: 'retry',
      reason: 'throttled',
      retryAfterMillis: 30_000,
    });
  });

  test('an HTTP-date Retry-After without a readable Date is read against the local clock', () => {
    const at = new Date(Date.now() + 60_000).toUTCString();
    for (const date of [undefined, 'yesterday']) {
      const headers = { 'retry-after': at, ...(date === undefined ? {} : { date }) };
      const verdict = classifyUploadError(s3Error('SlowDown', 503, 'x', headers));
      expect(verdict).toMatchObject({ kind: 'retry', reason: 'throttled' });
      const millis = (verdict as { retryAfterMillis: number }).retryAfterMillis;
      expect(millis).toBeGreaterThan(55_000);
      expect(millis).toBeLessThanOrEqual(60_000);
    }
  });

  test('the status is read from $response when $metadata has none', () => {
    expect(classifyUploadError({ name: 'X', $response: { statusCode: 502, headers: {} } })).toEqual(
      { kind: 'retry', reason: 'server' },
    );
  });

  for (const code of [
    'ECONNRESET',
    'ECONNREFUSED',
    'EPIPE',
    'ETIMEDOUT',
    'EAI_AGAIN',
    'ENOTFOUND',
  ]) {
    test(`a Node ${code} error is retried as network`, () => {
      expect(classifyUploadError(nodeError(code))).toEqual({ kind: 'retry', reason: 'network' });
    });
  }

  test("a 'socket hang up' error without a code is retried as network", () => {
    expect(classifyUploadError(new Error('socket hang up'))).toEqual({
      kind: 'retry',
      reason: 'network',
    });
  });

  test('an error whose cause carries the network code is retried as network', () => {
    const error = new Error('fetch failed', { cause: nodeError('ECONNREFUSED') });
    expect(classifyUploadError(error)).toEqual({ kind: 'retry', reason: 'network' });
  });

  test('a network code three causes deep is still found', () => {
    const error = new Error('a', { cause: new Error('b', { cause: nodeError('EPIPE') }) });
    expect(classifyUploadError(error)).toEqual({ kind: 'retry', reason: 'network' });
  });

  test('an ETIMEDOUT error named TimeoutError (as the SDK http handler throws) is network', () => {
    // @smithy/node-http-handler rejects with Object.assign(new Error(msg),
    // { name: 'TimeoutError', code: 'ETIMEDOUT' }) on its request timeout.
    const error = Object.assign(new Error('a request has exceeded the configured requestTimeout'), {
      name: 'TimeoutError',
      code: 'ETIMEDOUT',
    });
    expect(classifyUploadError(error)).toEqual({ kind: 'retry', reason: 'network' });
  });

  test('a connection timeout from the SDK http handler (TimeoutError, no status) is not a server failure', () => {
    // @smithy/node-http-handler setConnectionTimeout rejects with { name: 'TimeoutError' } and no
    // HTTP status: the server never answered.
    const error = Object.assign(
      new Error('the request socket did not establish a connection with the server'),
      { name: 'TimeoutError' },
    );
    const verdict = classifyUploadError(error);
    expect(verdict.kind).toBe('retry');
    expect(verdict.kind === 'retry' ? verdict.reason : '').not.toBe('server');
  });

  test('timedOut=true is retried as timeout whatever the error', () => {
    const abort = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    expect(classifyUploadError(abort, true)).toEqual({ kind: 'retry', reason: 'timeout' });
    expect(classifyUploadError(s3Error('AccessDenied', 403), true)).toEqual({
      kind: 'retry',
      reason: 'timeout',
    });
  });

  test('an error with no status and no code is retried as client', () => {
    expect(classifyUploadError(new Error('something odd'))).toEqual({
      kind: 'retry',
      reason: 'client',
    });
  });

  test('non-object errors are retried as client', () => {
    expect(classifyUploadError('boom')).toEqual({ kind: 'retry', reason: 'client' });
    expect(classifyUploadError(undefined)).toEqual({ kind: 'retry', reason: 'client' });
    expect(classifyUploadError(null)).toEqual({ kind: 'retry', reason: 'client' });
  });

  test('409 ConditionalRequestConflict (a concurrent conditional write) is retried', () => {
    // AWS: "If a concurrent operation occurs during the upload S3 returns a 409
    // ConditionalRequestConflict response. On a 409 failure you should retry the upload."
    const verdict = classifyUploadError(s3Error('ConditionalRequestConflict', 409));
    expect(verdict.kind).toBe('retry');
  });

  test('403 RequestTimeTooSkewed is retried, not reported as access-denied', () => {
    // S3 answers a skewed clock with 403; RequestTimeTooSkewed is listed as retryable.
    const verdict = classifyUploadError(s3Error('RequestTimeTooSkewed', 403));
    expect(verdict.kind).toBe('retry');
  });

  // The AWS SDK marks an error whose answer's Date corrected its clock offset
  // ($metadata.clockSkewCorrected) and retries it as transient; so does the signed writer.
  test('403 SignatureDoesNotMatch that corrected the clock is retried, not bad credentials', () => {
    const error = s3Error('SignatureDoesNotMatch', 403) as Error & {
      $metadata: Record<string, unknown>;
    };
    error.$metadata.clockSkewCorrected = true;
    expect(classifyUploadError(error)).toEqual({ kind: 'retry', reason: 'server' });
  });

  // Cloudflare R2's answer to a request whose signing time is too old (its error codes page:
  // 10018, S3 code ExpiredRequest, HTTP 400): a skewed clock or a slow request, as
  // RequestTimeTooSkewed. It was dropped as a fatal http-400 (after a probe without If-None-Match).
  test('400 ExpiredRequest (R2) is retried, never fatal nor a cause to drop the header', () => {
    const error = s3Error('ExpiredRequest', 400, 'Request has expired');
    expect(classifyUploadError(error)).toEqual({ kind: 'retry', reason: 'server' });
    expect(headerMayBeTheCause(error)).toBe(false);
  });

  test("400 KMS.ThrottlingException (KMS's throttling, passed on by S3) is retry, throttled", () => {
    expect(classifyUploadError(s3Error('KMS.ThrottlingException', 400))).toMatchObject({
      kind: 'retry',
      reason: 'throttled',
    });
  });
});

describe('classifyUploadError: config', () => {
  const cases: Array<[string, number | undefined, string]> = [
    ['AccessDenied', 403, 'access-denied'],
    ['InvalidAccessKeyId', 403, 'bad-credentials'],
    ['SignatureDoesNotMatch', 403, 'bad-credentials'],
    ['ExpiredToken', 400, 'bad-credentials'],
    ['NoSuchBucket', 404, 'no-such-bucket'],
    ['PermanentRedirect', 301, 'wrong-region'],
    ['AuthorizationHeaderMalformed', 400, 'wrong-region'],
    ['InvalidBucketName', 400, 'invalid-bucket'],
    ['CredentialsProviderError', undefined, 'no-credentials'],
    // An SSE-KMS key that is missing or disabled: kept and retried until the key is fixed.
    ['KMS.NotFoundException', 400, 'kms-key'],
    ['KMS.DisabledException', 400, 'kms-key'],
  ];
  for (const [name, status, reason] of cases) {
    test(`${status ?? 'no status'} ${name} is config with reason ${reason} and a hint`, () => {
      const error =
        status === undefined
          ? Object.assign(new Error('Could not load credentials from any providers'), { name })
          : s3Error(name, status);
      const verdict = classifyUploadError(error);
      expect(verdict).toMatchObject({ kind: 'config', reason });
      expect(verdict.kind === 'config' && typeof verdict.hint === 'string').toBe(true);
      expect(verdict.kind === 'config' ? verdict.hint.length : 0).toBeGreaterThan(0);
    });
  }

  // Ceph RGW's answer to a PutObject with an SSE-KMS key id its KMS does not have, as recorded
  // from a real server: 403 InvalidAccessKeyId, the key named in the message. It was reported as
  // an unknown access key id ("check the credentials"), and the credentials were asked for again.
  test('403 InvalidAccessKeyId for an SSE-KMS key Ceph RGW cannot retrieve is config kms-key', () => {
    const error = s3Error(
      'InvalidAccessKeyId',
      403,
      'Failed to retrieve the actual key, kms-keyid: no-such-key-xyz',
    );
    const verdict = classifyUploadError(error);
    expect(verdict).toMatchObject({ kind: 'config', reason: 'kms-key' });
    expect(verdict.kind === 'config' ? verdict.hint : '').toContain('sseKmsKeyId');
    expect(verdict.kind === 'config' ? verdict.hint : '').not.toContain('credentials');
    expect(credentialsRefused(error)).toBe(false);
  });

  // Ceph RGW's answer to a PutObject past a bucket quota, as recorded from a real server: 403
  // QuotaExceeded with an empty message. It was reported as a missing s3:PutObject permission.
  test('403 QuotaExceeded is config quota-exceeded, with no word of permissions', () => {
    const error = s3Error('QuotaExceeded', 403, '');
    const verdict = classifyUploadError(error);
    expect(verdict).toMatchObject({ kind: 'config', reason: 'quota-exceeded' });
    const hint = verdict.kind === 'config' ? verdict.hint : '';
    expect(hint).toContain('quota');
    expect(hint).not.toMatch(/permission|s3:PutObject/);
  });

  // MinIO's answer to a PutObject past a hard bucket quota (cmd/api-errors.go,
  // ErrAdminBucketQuotaExceeded): 400 XMinioAdminBucketQuotaExceeded. It was dropped as a fatal
  // http-400 (after a probe without If-None-Match): every batch lost until the quota was raised.
  test('400 XMinioAdminBucketQuotaExceeded (MinIO) is config quota-exceeded, data kept', () => {
    const verdict = classifyUploadError(
      s3Error('XMinioAdminBucketQuotaExceeded', 400, 'Bucket quota exceeded'),
    );
    expect(verdict).toMatchObject({ kind: 'config', reason: 'quota-exceeded' });
    expect(verdict.kind === 'config' ? verdict.hint : '').toContain('quota');
  });

  // MinIO's answer when its drives are below their minimum free space (cmd/api-errors.go,
  // ErrStorageFull): 507 XMinioStorageFull. It was dropped as a fatal http-507: a full server
  // lost every batch instead of keeping them until space was freed.
  test('507 XMinioStorageFull (MinIO) is config quota-exceeded, data kept', () => {
    const message =
      'Storage backend has reached its minimum free drive threshold. Please delete a few objects to proceed.';
    const verdict = classifyUploadError(s3Error('XMinioStorageFull', 507, message));
    expect(verdict).toMatchObject({ kind: 'config', reason: 'quota-exceeded' });
    const hint = verdict.kind === 'config' ? verdict.hint : '';
    expect(hint).toContain('full');
    expect(hint).not.toMatch(/permission|s3:PutObject/);
  });

  // MinIO before it answered 507 (cmd/api-errors.go, ErrStorageFull, up to 2020) sent the same
  // code with HTTP 500: it was retried at once, as a server fault, and never reported.
  test('500 XMinioStorageFull (older MinIO) is config quota-exceeded, as its 507', () => {
    const message =
      'Storage backend has reached its minimum free disk threshold. Please delete a few objects to proceed.';
    const verdict = classifyUploadError(s3Error('XMinioStorageFull', 500, message));
    expect(verdict).toMatchObject({ kind: 'config', reason: 'quota-exceeded' });
  });

  // Cloudflare R2's answer to missing or invalid credentials (its error codes page: 10002,
  // S3 code Unauthorized, HTTP 401). It was dropped as a fatal http-401: every batch lost while
  // a key was wrong or being rotated, and the credentials were never asked for again.
  test('401 Unauthorized (R2) is config bad-credentials, and the credentials are asked again', () => {
    const error = s3Error('Unauthorized', 401, 'Unauthorized');
    expect(classifyUploadError(error)).toMatchObject({ kind: 'config', reason: 'bad-credentials' });
    expect(credentialsRefused(error)).toBe(true);
    expect(classifyUploadError(s3Error('UnknownError', 401))).toMatchObject({
      kind: 'config',
      reason: 'bad-credentials',
    });
  });

  // S3's answer to a session token that must be refreshed (its error codes list:
  // TokenRefreshRequired, 400). It was dropped as a fatal http-400 (after a probe without
  // If-None-Match), and the provider was not asked for a fresh token.
  test('400 TokenRefreshRequired is config bad-credentials, and the credentials are asked again', () => {
    const error = s3Error('TokenRefreshRequired', 400, 'The provided token must be refreshed.');
    expect(classifyUploadError(error)).toMatchObject({ kind: 'config', reason: 'bad-credentials' });
    expect(credentialsRefused(error)).toBe(true);
  });

  // Refusals of the whole account or bucket, not of a permission: S3's AccountProblem and
  // AllAccessDisabled (403, "Contact AWS Support"), Ceph RGW's UserSuspended (403). They were
  // reported as OTEL_S3_ACCESS_DENIED with "grant s3:PutObject", which cannot help.
  for (const name of ['AccountProblem', 'AllAccessDisabled', 'UserSuspended']) {
    test(`403 ${name} is config account-disabled, with no word of granting permissions`, () => {
      const verdict = classifyUploadError(s3Error(name, 403));
      expect(verdict).toMatchObject({ kind: 'config', reason: 'account-disabled' });
      const hint = verdict.kind === 'config' ? verdict.hint : '';
      expect(hint).not.toMatch(/grant|s3:PutObject/);
      expect(hint).toContain('provider');
    });
  }

  // Cloudflare R2's answer for an account without an R2 subscription (its error codes page:
  // 10042, NotEntitled, 403). It was reported as a missing s3:PutObject grant.
  test('403 NotEntitled (R2) is config account-disabled, with no word of granting permissions', () => {
    const error = s3Error('NotEntitled', 403, 'Account not entitled to this feature.');
    const verdict = classifyUploadError(error);
    expect(verdict).toMatchObject({ kind: 'config', reason: 'account-disabled' });
    expect(verdict.kind === 'config' ? verdict.hint : '').not.toMatch(/grant|s3:PutObject/);
  });

  test('a bare 403 is config access-denied with a hint', () => {
    const verdict = classifyUploadError(s3Error('Forbidden', 403));
    expect(verdict).toMatchObject({ kind: 'config', reason: 'access-denied' });
    expect(verdict.kind === 'config' ? verdict.hint : '').toContain('s3:PutObject');
  });

  test('a bare 301 is config wrong-region with a hint', () => {
    const verdict = classifyUploadError(s3Error('MovedPermanently', 301));
    expect(verdict).toMatchObject({ kind: 'config', reason: 'wrong-region' });
    expect(verdict.kind === 'config' ? verdict.hint : '').toContain('region');
  });

  // S3 names the bucket's region in x-amz-bucket-region on a PermanentRedirect, whose message
  // only says to use "the specified endpoint": the fix should say which region to set.
  test("a 301 PermanentRedirect names the bucket's region from x-amz-bucket-region", () => {
    const message =
      'The bucket you are attempting to access must be addressed using the specified endpoint. Please send all future requests to this endpoint.';
    const error = s3Error('PermanentRedirect', 301, message, {
      'x-amz-bucket-region': 'eu-west-1',
    });
    const verdict = classifyUploadError(error);
    expect(verdict).toMatchObject({ kind: 'config', reason: 'wrong-region' });
    expect(verdict.kind === 'config' ? verdict.hint : '').toContain('eu-west-1');
    expect(asAccessError('cannot list s3://b/', error)?.message).toContain('eu-west-1');
  });

  // S3's answer to a request for a bucket in an opt-in region (ap-east-1, eu-south-1, ...) sent
  // to another region's endpoint: 400 IllegalLocationConstraintException, which names the bucket's
  // region in its message (boto/boto3#3055, for a PutObject). It was dropped as a fatal http-400.
  test('400 IllegalLocationConstraintException is config wrong-region, naming the region', () => {
    const error = s3Error(
      'IllegalLocationConstraintException',
      400,
      'The ap-east-1 location constraint is incompatible for the region specific endpoint this request was sent to.',
    );
    const verdict = classifyUploadError(error);
    expect(verdict).toMatchObject({ kind: 'config', reason: 'wrong-region' });
    expect(verdict.kind === 'config' ? verdict.hint : '').toContain('ap-east-1');
    const unnamed = s3Error(
      'IllegalLocationConstraintException',
      400,
      'The unspecified location constraint is incompatible for the region specific endpoint this request was sent to.',
    );
    expect(classifyUploadError(unnamed)).toMatchObject({ kind: 'config', reason: 'wrong-region' });
  });

  test('an error named like an Object.prototype member is not a config fault', () => {
    const verdict = classifyUploadError(s3Error('constructor', 400));
    expect(verdict).toEqual({ kind: 'fatal', reason: 'http-400' });
  });
});

describe('classifyUploadError: fatal, and whether If-None-Match may be the cause', () => {
  classifiedAs([
    [
      '400 InvalidArgument is fatal http-400',
      'InvalidArgument',
      400,
      { kind: 'fatal', reason: 'http-400' },
    ],
    [
      '413 (a proxy body limit) is fatal entity-too-large',
      'UnknownError',
      413,
      { kind: 'fatal', reason: 'entity-too-large' },
    ],
  ]);

  // A 404 or 405 with no S3 error code is no S3 server's refusal (test/unit/exporter/
  // endpoint-not-s3.test.ts): a configuration fault. With a code, it stays S3's word.
  classifiedAs([
    ['404 with no S3 code is not-s3', 'NotFound', 404, NOT_S3],
    ['405 with no S3 code is not-s3', 'UnknownError', 405, NOT_S3],
    ['405 with no parsable body (the SDK: a plain Error) is not-s3', 'Error', 405, NOT_S3],
    [
      '405 MethodNotAllowed (an S3 code) is fatal http-405',
      'MethodNotAllowed',
      405,
      { kind: 'fatal', reason: 'http-405' },
    ],
    [
      '410 with no S3 code is fatal http-410',
      'UnknownError',
      410,
      { kind: 'fatal', reason: 'http-410' },
    ],
  ]);

  // S3 (and Ceph RGW) answer an object over the size limit with 400 EntityTooLarge (S3's list
  // of error codes). It went through headerMayBeTheCause as any 400: the same too-large body sent
  // once more without If-None-Match, then dropped as an anonymous http-400.
  test('400 EntityTooLarge is fatal entity-too-large, with no retry without the header', () => {
    const error = s3Error(
      'EntityTooLarge',
      400,
      'Your proposed upload exceeds the maximum allowed size',
    );
    expect(classifyUploadError(error)).toEqual({ kind: 'fatal', reason: 'entity-too-large' });
    expect(headerMayBeTheCause(error)).toBe(false);
  });

  test('501 NotImplemented is fatal, unless the conditional header caused it (the uploader tries once without)', () => {
    const error = s3Error('NotImplemented', 501);
    expect(classifyUploadError(error)).toEqual({ kind: 'fatal', reason: 'not-implemented' });
    expect(headerMayBeTheCause(error)).toBe(true);
  });

  test('the NotImplemented name with a 400 status, and a plain 400, may be about the header too', () => {
    expect(classifyUploadError(s3Error('NotImplemented', 400)).kind).toBe('fatal');
    expect(headerMayBeTheCause(s3Error('NotImplemented', 400))).toBe(true);
    expect(headerMayBeTheCause(s3Error('InvalidArgument', 400))).toBe(true);
  });

  // A 400 that names its cause is about that cause, not If-None-Match: `otel-s3 check` said
  // "the server does not take If-None-Match" to a 400 XMinioBackendDown, and the compactor took
  // a 400 quota, token or region fault on its probe for a server without conditional writes.
  test.each([
    'XMinioAdminBucketQuotaExceeded',
    'TokenRefreshRequired',
    'IllegalLocationConstraintException',
    'KMS.NotFoundException',
    'XMinioBackendDown',
  ])('400 %s (a fault or a retry, not fatal) is never about the header', (name) => {
    expect(classifyUploadError(s3Error(name, 400)).kind).not.toBe('fatal');
    expect(headerMayBeTheCause(s3Error(name, 400))).toBe(false);
  });

  test('413 and 5xx are never about the header', () => {
    expect(headerMayBeTheCause(s3Error('EntityTooLarge', 413))).toBe(false);
    expect(headerMayBeTheCause(s3Error('InternalError', 500))).toBe(false);
  });
});

describe('describeError', () => {
  test('includes name, HTTP status and message of an S3 error', () => {
    expect(describeError(s3Error('SlowDown', 503, 'Please reduce your request rate.'))).toBe(
      'SlowDown (HTTP 503): Please reduce your request rate.',
    );
  });

  test('includes the network code and message, omitting the generic name Error', () => {
    expect(describeError(nodeError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9000'))).toBe(
      'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9000',
    );
  });

  test('includes name, status, code and message together', () => {
    const error = Object.assign(new Error('boom'), {
      name: 'InternalError',
      code: 'EPIPE',
      $metadata: { httpStatusCode: 500 },
    });
    expect(describeError(error)).toBe('InternalError (HTTP 500) EPIPE: boom');
  });

  test('takes the network code from the cause', () => {
    expect(describeError(new Error('fetch failed', { cause: nodeError('ENOTFOUND') }))).toBe(
      'ENOTFOUND: fetch failed',
    );
  });

  test('includes a non-network code as well', () => {
    expect(describeError(Object.assign(new Error('bad'), { code: 'ERR_INVALID_ARG_TYPE' }))).toBe(
      'ERR_INVALID_ARG_TYPE: bad',
    );
  });

  test('a file system error, whose message starts with its code, names the code once', async () => {
    // The error Node itself gives (its message is "ENOENT: no such file or directory, ...").
    const error = await readFile(join(tmpdir(), `otel-s3-absent-${process.pid}`)).catch((e) => e);
    expect(describeError(error)).toMatch(/^ENOENT: no such file or directory, open '/);
  });

  test('falls back to String() for values with nothing to describe', () => {
    expect(describeError('plain string')).toBe('plain string');
    expect(describeError(42)).toBe('42');
    expect(describeError(undefined)).toBe('undefined');
  });
});

describe('credentialsRefused: the refusals after which credentials are asked for again', () => {
  test.each(['SignatureDoesNotMatch', 'InvalidAccessKeyId', 'ExpiredToken', 'InvalidToken'])(
    '403 %s: the credentials themselves',
    (name) => {
      expect(credentialsRefused(s3Error(name, 403))).toBe(true);
    },
  );

  test.each([
    ['403 AccessDenied', s3Error('AccessDenied', 403)],
    ['a bare 403', s3Error('UnknownError', 403)],
    ['404 NoSuchBucket', s3Error('NoSuchBucket', 404)],
    ['a reset connection', nodeError('ECONNRESET')],
  ])('%s: not the credentials', (_, error) => {
    expect(credentialsRefused(error)).toBe(false);
  });
});

describe('asAccessError: the reader says the same as the uploads', () => {
  // The AWS SDK names a 401 without an XML body (a HEAD, a proxy) `Unknown`: the status decides.
  test.each([
    ['Unknown', 401, 'bad-credentials', /check the credentials/],
    ['Unauthorized', 401, 'bad-credentials', /check the credentials/],
    ['AllAccessDisabled', 403, 'account-disabled', /contact the storage provider/],
    ['NotEntitled', 403, 'account-disabled', /contact the storage provider/],
  ])('%s (HTTP %i) on a list or read is %s', (name, status, reason, fix) => {
    const error = asAccessError('cannot list s3://b/', s3Error(name, status));
    expect(error?.reason).toBe(reason);
    expect(error?.hint).toMatch(fix);
    expect(error?.hint).not.toMatch(/grant/);
  });
});
