import type { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, test } from 'vitest';
import { conditionalWritesWork } from '../../../src/compact/conditional-writes.js';
import { s3Store } from '../../../src/compact/store.js';
import { classifyUploadError } from '../../../src/s3/verdict.js';
import { s3Error } from '../../support/s3-error.js';

/** A store whose every request is answered with `error`. */
function storeAnswering(error: Error) {
  const client = {
    send: async () => {
      throw error;
    },
  } as unknown as S3Client;
  return s3Store('bucket', { s3Client: client });
}

const signal = new AbortController().signal;
const body = new TextEncoder().encode('{}');

/**
 * One verdict on a refused conditional write, two readings: the exporter retries a 409 (its keys
 * are its own), the compactor takes the key as taken (a lease goes to the rival).
 */
describe("the compactor's store on a refused conditional write", () => {
  test.each([
    {
      answer: '412 PreconditionFailed',
      error: s3Error('PreconditionFailed', 412),
      exporter: 'exists',
    },
    {
      answer: '409 ConditionalRequestConflict',
      error: s3Error('ConditionalRequestConflict', 409),
      exporter: 'retry',
    },
  ] as const)(
    '$answer: the key is taken (the exporter: $exporter)',
    async ({ error, exporter }) => {
      expect(classifyUploadError(error).kind).toBe(exporter);
      expect(await storeAnswering(error).put('k.lease', body, true, signal)).toBe('exists');
    },
  );

  test('another 409 (OperationAborted) is a failure, not a taken key', async () => {
    const put = storeAnswering(s3Error('OperationAborted', 409)).put('k', body, true, signal);
    await expect(put).rejects.toThrow(/cannot write s3:\/\/bucket\/k: .*OperationAborted/);
  });

  test('without If-None-Match, a 412 is a failure', async () => {
    const put = storeAnswering(s3Error('PreconditionFailed', 412)).put('k', body, false, signal);
    await expect(put).rejects.toThrow(/cannot write s3:\/\/bucket\/k/);
  });
});

describe("the compactor's store on a refused write", () => {
  // The hint granted s3:PutObject and s3:DeleteObject whatever the fault: a disabled account,
  // a full quota or a wrong secret is fixed by no grant.
  test.each([
    ['AllAccessDisabled', 403, /contact the storage provider/],
    ['XMinioAdminBucketQuotaExceeded', 400, /raise the quota or free space/],
    ['SignatureDoesNotMatch', 403, /check the credentials/],
  ] as const)('%s says what fixes it, not a grant', async (name, status, fix) => {
    const put = storeAnswering(s3Error(name, status)).put('k', body, false, signal);
    await expect(put).rejects.toThrow(fix);
    await expect(put).rejects.not.toThrow(/grant s3:PutObject/);
  });

  test('a missing permission still names the grants the compactor needs', async () => {
    const put = storeAnswering(s3Error('AccessDenied', 403)).put('k', body, false, signal);
    await expect(put).rejects.toThrow(/grant s3:PutObject and s3:DeleteObject/);
  });

  // The probe of If-None-Match took a 400 quota fault for a server without conditional writes.
  test('a quota fault on the If-None-Match probe is reported, not taken for no support', async () => {
    const store = storeAnswering(s3Error('XMinioAdminBucketQuotaExceeded', 400));
    await expect(conditionalWritesWork(store, 'out', signal)).rejects.toThrow(/over its quota/);
  });
});
