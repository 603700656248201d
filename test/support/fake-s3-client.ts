import { Readable } from 'node:stream';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandInput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { s3Error } from './s3-error.js';

interface PendingGet {
  key: string;
  signal: AbortSignal | undefined;
  release(): void;
}

/**
 * An in-memory S3 with ListObjectsV2 semantics (sorted keys, Prefix, StartAfter, pages of
 * `pageSize`) that records every request, for reader tests that need to see or steer the calls.
 * With `manual`, each GetObject waits until the test releases it. Bodies are Node streams, as
 * the SDK's are in Node; `listedSizes` and `sendContentLength` let a test make the listing or
 * the headers disagree with the body, and `bytesServed` counts what readers pulled. A GetObject
 * with a Range (`bytes=a-b`) is answered as S3 does: those bytes, with Content-Range.
 */
export class FakeS3 {
  readonly objects = new Map<string, Uint8Array | Error>();
  readonly listCalls: ListObjectsV2CommandInput[] = [];
  readonly getCalls: string[] = [];
  readonly pending: PendingGet[] = [];
  listError: Error | undefined;
  pageSize = 1000;
  manual = false;
  /** Sizes the listing says instead of the real ones (an object replaced since it was listed). */
  readonly listedSizes = new Map<string, number>();
  /** False: GetObject answers without Content-Length (as with chunked transfer encoding). */
  sendContentLength = true;
  /** Body bytes pulled by readers, per key. */
  readonly bytesServed = new Map<string, number>();
  inFlight = 0;
  maxInFlight = 0;
  destroyed = false;

  asClient(): S3Client {
    return this as unknown as S3Client;
  }

  put(key: string, body: Uint8Array | Error): void {
    this.objects.set(key, body);
  }

  async send(command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown> {
    const signal = options?.abortSignal;
    if (command instanceof ListObjectsV2Command) return this.#list(command.input);
    if (command instanceof GetObjectCommand) {
      return this.#get(command.input.Key ?? '', signal, command.input.Range);
    }
    throw new Error('FakeS3: unsupported command');
  }

  destroy(): void {
    this.destroyed = true;
  }

  /** Lets the pending GetObject of `key` (or the oldest) answer. */
  release(key?: string): void {
    const index = key === undefined ? 0 : this.pending.findIndex((p) => p.key === key);
    if (index < 0) throw new Error(`no pending GET of ${key}`);
    const [get] = this.pending.splice(index, 1);
    get?.release();
  }

  #list(input: ListObjectsV2CommandInput) {
    this.listCalls.push(input);
    if (this.listError !== undefined) throw this.listError;
    const after = input.ContinuationToken ?? input.StartAfter ?? '';
    const keys = [...this.objects.keys()]
      .filter((k) => k.startsWith(input.Prefix ?? '') && k > after)
      .sort();
    const page = keys.slice(0, Math.min(this.pageSize, input.MaxKeys ?? 1000));
    const truncated = keys.length > page.length;
    return {
      Contents: page.map((Key) => ({ Key, Size: this.#size(Key) })),
      IsTruncated: truncated,
      NextContinuationToken: truncated ? page[page.length - 1] : undefined,
    };
  }

  *#chunks(key: string, body: Uint8Array): Generator<Uint8Array> {
    for (let at = 0; at < body.length; at += 64 * 1024) {
      const chunk = body.subarray(at, at + 64 * 1024);
      this.bytesServed.set(key, (this.bytesServed.get(key) ?? 0) + chunk.length);
      yield chunk;
    }
  }

  #size(key: string): number {
    const listed = this.listedSizes.get(key);
    if (listed !== undefined) return listed;
    const body = this.objects.get(key);
    return body instanceof Uint8Array ? body.length : 0;
  }

  async #get(key: string, signal: AbortSignal | undefined, range?: string) {
    this.getCalls.push(key);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.manual) {
        await new Promise<void>((resolve, reject) => {
          this.pending.push({ key, signal, release: resolve });
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      }
      signal?.throwIfAborted();
      const body = this.objects.get(key);
      if (body === undefined) throw s3Error('NoSuchKey', 404);
      if (body instanceof Error) throw body;
      const asked = range === undefined ? null : /^bytes=(\d+)-(\d+)$/.exec(range);
      if (range !== undefined && asked === null)
        throw new Error(`FakeS3: unsupported Range ${range}`);
      if (asked !== null) {
        const start = Number(asked[1]);
        const end = Math.min(Number(asked[2]) + 1, body.length);
        if (start >= end) throw s3Error('InvalidRange', 416);
        return {
          Body: Readable.from(this.#chunks(key, body.subarray(start, end))),
          ContentRange: `bytes ${start}-${end - 1}/${body.length}`,
          ...(this.sendContentLength ? { ContentLength: end - start } : {}),
        };
      }
      // A Node stream, as the SDK answers in Node, in 64 KiB chunks like a socket's.
      return {
        Body: Readable.from(this.#chunks(key, body)),
        ...(this.sendContentLength ? { ContentLength: body.length } : {}),
      };
    } finally {
      this.inFlight--;
    }
  }
}
