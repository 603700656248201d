import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { asAccessError, ReadAccessError } from '../reader/errors.js';
import { createReaderClient, type ReaderConnectionOptions, s3Source } from '../reader/s3-source.js';
import type { ObjectSource } from '../reader/source.js';
import { type AccessFaultReason, accessFault, describeError } from '../s3/errors.js';
import { conditionalRefusal } from '../s3/verdict.js';

/** Where the compactor reads and writes: an S3 bucket or a local directory laid out like one. */
export interface CompactionStore {
  /** Listing and reading, as the reader does. */
  readonly source: ObjectSource;
  /**
   * Stores `body` under `key`. With `ifAbsent`, only if no object has the key (`If-None-Match:
   * *`): 'exists' when one has, or another write of it was in flight (409). Without it,
   * overwrites.
   */
  put(key: string, body: Uint8Array, ifAbsent: boolean, signal: AbortSignal): Promise<PutResult>;
  /** Deletes the keys (a missing one is not an error); the keys that could not be, with why. */
  delete(keys: readonly string[], signal: AbortSignal): Promise<Map<string, string>>;
  close(): void;
}

export type PutResult = 'created' | 'exists';

/** What the writes need that reading does not: the fix of the faults a grant fixes. */
const WRITE_FIX: Readonly<Partial<Record<AccessFaultReason, string>>> = {
  'access-denied':
    'grant s3:PutObject and s3:DeleteObject on this prefix (and s3:ListBucket, s3:GetObject)',
  'kms-key':
    "grant kms:GenerateDataKey and kms:Decrypt on the bucket's SSE-KMS key, or use other credentials",
};

/** The compactor's store on S3: one client for every request, the reader's settings. */
export function s3Store(bucket: string, connection: ReaderConnectionOptions): CompactionStore {
  const { client, owned } = createReaderClient(connection);
  const source = s3Source(bucket, connection, undefined, client);
  return {
    source,
    async put(key, body, ifAbsent, signal) {
      try {
        await client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: key,
            Body: body,
            ContentLength: body.length,
            ContentType: contentTypeOf(key),
            ...(ifAbsent ? { IfNoneMatch: '*' } : {}),
          }),
          { abortSignal: signal },
        );
        return 'created';
      } catch (error) {
        signal.throwIfAborted();
        // A conflict, too, is a key taken: by a write still in flight. Either way the caller
        // reads the key back: a lease or an output may prove ours (the SDK retried our PUT).
        if (ifAbsent && conditionalRefusal(error) !== undefined) return 'exists';
        throw writeError(`cannot write s3://${bucket}/${key}`, error);
      }
    },
    async delete(keys, signal) {
      const failed = new Map<string, string>();
      for (let at = 0; at < keys.length; at += 1000) {
        const batch = keys.slice(at, at + 1000);
        for (const [key, why] of await deleteBatch(client, bucket, batch, signal)) {
          failed.set(key, why);
        }
      }
      return failed;
    },
    close() {
      source.close();
      if (owned) client.destroy();
    },
  };
}

async function deleteBatch(
  client: S3Client,
  bucket: string,
  keys: string[],
  signal: AbortSignal,
): Promise<Map<string, string>> {
  const failed = new Map<string, string>();
  try {
    const answer = await client.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
      }),
      { abortSignal: signal },
    );
    for (const e of answer.Errors ?? []) {
      if (e.Key !== undefined) failed.set(e.Key, `${e.Code ?? 'error'}: ${e.Message ?? ''}`);
    }
    return failed;
  } catch (error) {
    signal.throwIfAborted();
    if (accessFault(error) !== undefined)
      throw writeError(`cannot delete in s3://${bucket}`, error);
    // Some S3-compatible servers have no DeleteObjects: one request per key instead.
  }
  for (const key of keys) {
    try {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), {
        abortSignal: signal,
      });
    } catch (error) {
      signal.throwIfAborted();
      if (accessFault(error) !== undefined) {
        throw writeError(`cannot delete s3://${bucket}/${key}`, error);
      }
      failed.set(key, describeError(error));
    }
  }
  return failed;
}

/**
 * Access faults stop the run (ReadAccessError: what to grant, or as the reader says what fixes
 * the rest, e.g. a disabled account or a full quota); the rest say what failed.
 */
function writeError(what: string, error: unknown): Error {
  const fault = accessFault(error);
  const grant = fault === undefined ? undefined : WRITE_FIX[fault.reason];
  if (fault !== undefined && grant !== undefined) {
    return new ReadAccessError(
      what,
      fault.reason,
      describeError(error),
      `${fault.cause}: ${grant}`,
      error,
    );
  }
  return (
    asAccessError(what, error) ?? new Error(`${what}: ${describeError(error)}`, { cause: error })
  );
}

function contentTypeOf(key: string): string {
  return key.endsWith('.parquet') ? 'application/vnd.apache.parquet' : 'application/json';
}
