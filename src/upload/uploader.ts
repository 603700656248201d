import { PutObjectCommand, type PutObjectCommandInput, type S3Client } from '@aws-sdk/client-s3';
import PQueue from 'p-queue';
import type { SealedBatch } from '../sealed-batch.js';
import { type BackoffPolicy, retryDelay, slowRetryDelay } from './backoff.js';
import { classifyUploadError, type Verdict } from './errors.js';
import { nextTurn, yieldBetweenSteps } from './event-loop-turns.js';

export interface UploaderOptions {
  client: S3Client;
  bucket: string;
  concurrency: number;
  requestTimeoutMillis: number;
  conditionalWrites: boolean;
  /** Fixed PutObject fields: encryption, storage class, tags, metadata. */
  putObject: Omit<PutObjectCommandInput, 'Bucket' | 'Key' | 'Body'>;
  backoff: BackoffPolicy;
  /** Called before every PutObject attempt (batch.attempts already counts it). */
  onAttempt(batch: SealedBatch): void;
  /** Called once per batch when S3 acknowledged it (or said it already has it). */
  onUploaded(batch: SealedBatch, latencyMillis: number): void;
  /** Called when the server will never accept the batch; the batch is not retried. */
  onRejected(batch: SealedBatch, reason: string, error: unknown): void;
  /** Called for every failed attempt that will be retried. */
  onRetry(batch: SealedBatch, verdict: RetryVerdict, error: unknown, delayMillis: number): void;
}

export type RetryVerdict = Exclude<Verdict, { kind: 'exists' | 'fatal' }>;

const TIMED_OUT = Symbol('request deadline');
const CANCELLED = Symbol('cancelled');

/**
 * Uploads sealed batches: PutObject with a Buffer body and a deadline on every request, a
 * bounded number in flight, and retries of the same key and bytes with backoff. A batch
 * waiting for its retry holds no queue slot.
 */
export class Uploader {
  readonly #options: UploaderOptions;
  readonly #queue: PQueue;
  readonly #waiting = new Set<SealedBatch>();
  #conditionalWrites: boolean;

  constructor(options: UploaderOptions) {
    this.#options = options;
    this.#conditionalWrites = options.conditionalWrites;
    this.#queue = new PQueue({ concurrency: options.concurrency });
  }

  get conditionalWrites(): boolean {
    return this.#conditionalWrites;
  }

  submit(batch: SealedBatch): void {
    batch.state = 'queued';
    this.#queue
      .add(() => this.#attempt(batch))
      .catch(() => {
        // #attempt handles its own errors; p-queue only rejects if the task itself threw.
      });
  }

  /** Retries every waiting batch now (flush and shutdown do not sit out a backoff). */
  expedite(): void {
    for (const batch of this.#waiting) {
      clearTimeout(batch.retryTimer);
      batch.retryTimer = undefined;
      this.#waiting.delete(batch);
      this.submit(batch);
    }
  }

  /** Stops all work on a batch: its retry timer, or its request in flight. */
  cancel(batch: SealedBatch): void {
    clearTimeout(batch.retryTimer);
    batch.retryTimer = undefined;
    this.#waiting.delete(batch);
    batch.inFlight?.abort(CANCELLED);
  }

  async #attempt(batch: SealedBatch): Promise<void> {
    if (batch.state !== 'queued' || batch.body === undefined) return;
    const o = this.#options;
    batch.state = 'uploading';
    batch.attempts++;
    o.onAttempt(batch);
    if (batch.firstAttemptAt === 0) batch.firstAttemptAt = performance.now();
    const controller = new AbortController();
    batch.inFlight = controller;
    const deadline = setTimeout(() => controller.abort(TIMED_OUT), o.requestTimeoutMillis);
    const conditional = this.#conditionalWrites;
    try {
      // A turn of its own: the work that led here (the worker's reply, the key, the queue) and
      // the SDK's do not add up into one stall.
      await nextTurn();
      const body = batch.body;
      // Dropped or cancelled during that turn: whoever did it has settled the batch.
      if (batch.state !== 'uploading' || body === undefined) return;
      const command = new PutObjectCommand({
        ...o.putObject,
        Bucket: o.bucket,
        Key: batch.key,
        Body: body,
        ContentLength: body.length,
        ContentType: batch.contentType,
        ...(conditional ? { IfNoneMatch: '*' } : {}),
        ...(batch.crc32 === undefined ? {} : { ChecksumCRC32: batch.crc32 }),
      });
      const sha256 = batch.sha256;
      if (sha256 !== undefined) {
        // SigV4 signs the payload's SHA-256; a header already holding it spares the SDK hashing
        // the body on the event loop (it was computed in the worker).
        command.middlewareStack.add(
          (next) => (args) => {
            const request = args.request as { headers?: Record<string, string> };
            if (request.headers !== undefined) request.headers['x-amz-content-sha256'] = sha256;
            return next(args);
          },
          { step: 'build', name: 'otelS3PrecomputedPayloadHash' },
        );
      }
      yieldBetweenSteps(command.middlewareStack);
      await o.client.send(command, { abortSignal: controller.signal });
      this.#succeeded(batch);
    } catch (error) {
      if (batch.state !== 'uploading') return; // dropped or cancelled while in flight
      this.#failed(batch, error, controller.signal.reason === TIMED_OUT, conditional);
    } finally {
      clearTimeout(deadline);
      batch.inFlight = undefined;
    }
  }

  #succeeded(batch: SealedBatch): void {
    if (batch.state !== 'uploading') return;
    this.#options.onUploaded(batch, performance.now() - batch.firstAttemptAt);
  }

  #failed(batch: SealedBatch, error: unknown, timedOut: boolean, conditional: boolean): void {
    const verdict = classifyUploadError(error, timedOut);
    switch (verdict.kind) {
      case 'exists':
        // Only a conditional write can say this: an earlier attempt of this key landed.
        this.#succeeded(batch);
        return;
      case 'fatal':
        this.#options.onRejected(batch, verdict.reason, error);
        return;
      case 'conditional-unsupported':
        if (conditional) {
          // The server does not implement If-None-Match: fall back to plain PUTs at once.
          this.#conditionalWrites = false;
          this.#retry(batch, verdict, error, 0);
        } else {
          this.#options.onRejected(batch, verdict.reason, error);
        }
        return;
      case 'config':
        this.#retry(batch, verdict, error, slowRetryDelay(this.#options.backoff));
        return;
      case 'retry':
        this.#retry(
          batch,
          verdict,
          error,
          retryDelay(batch.attempts, this.#options.backoff, verdict.retryAfterMillis),
        );
        return;
    }
  }

  #retry(batch: SealedBatch, verdict: RetryVerdict, error: unknown, delayMillis: number): void {
    batch.state = 'waiting';
    this.#waiting.add(batch);
    this.#options.onRetry(batch, verdict, error, delayMillis);
    if (batch.state !== 'waiting') return; // the callback dropped it
    // Unref'd: a batch waiting to retry never keeps the process alive on its own.
    batch.retryTimer = setTimeout(() => {
      batch.retryTimer = undefined;
      this.#waiting.delete(batch);
      if (batch.state === 'waiting') this.submit(batch);
    }, delayMillis);
    batch.retryTimer.unref();
  }

  /** Forgets queued work; batches are settled by the caller. */
  clear(): void {
    this.#queue.clear();
    for (const batch of this.#waiting) this.cancel(batch);
  }
}
