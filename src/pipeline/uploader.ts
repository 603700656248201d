import PQueue from 'p-queue';
import { endsAtAbort } from '../base/deadline.js';
import { log } from '../base/log.js';
import {
  type BackoffPolicy,
  MAX_RETRY_AFTER_MILLIS,
  retryDelay,
  slowRetryDelay,
} from '../s3/backoff.js';
import { nextTurn } from '../s3/event-loop-turns.js';
import type { ObjectWriter } from '../s3/object-writer.js';
import {
  classifyUploadError,
  headerMayBeTheCause,
  mayHaveLanded,
  type RetryVerdict,
} from '../s3/verdict.js';
import type { MemoryBudget } from './budget.js';
import type { Outcomes } from './outcomes.js';
import type { SealedBatch } from './sealed-batch.js';

export interface UploaderOptions {
  writer: ObjectWriter;
  concurrency: number;
  requestTimeoutMillis: number;
  conditionalWrites: boolean;
  backoff: BackoffPolicy;
}

const TIMED_OUT = Symbol('request deadline');

/**
 * The queue priority of an attempt a flush waits for: ahead of the attempts nobody waits for. In
 * a group the queue is shared, so a signal's shutdown would otherwise wait behind another
 * signal's backlog, and past its deadline drop what it could have stored.
 */
const HURRIED_PRIORITY = 1;

/**
 * Uploads sealed batches: PutObject (through an ObjectWriter) with a Buffer body and a deadline on every request, a
 * bounded number in flight, and retries of the same key and bytes with backoff. A batch
 * backing off holds no queue slot. Success settles the batch through the budget; a rejection
 * drops it there.
 */
export class Uploader {
  readonly #options: UploaderOptions;
  readonly #budget: MemoryBudget;
  readonly #queue: PQueue;
  #conditionalWrites: boolean;
  /** Batches whose next attempt goes without If-None-Match, to see whether it was the cause. */
  readonly #probing = new WeakSet<SealedBatch>();
  /**
   * Batches backing off for a time a flush may not cut short (see keptMillis): until when
   * (performance.now() time) no attempt may come. Past it, the rest of the wait is ordinary.
   */
  readonly #keepingTime = new WeakMap<SealedBatch, number>();
  /**
   * Batches a flush is waiting for: their attempts when the latest such flush began, and how many
   * flushes wait. Their backoff starts over from there: a batch that fails again during a flush
   * (but for throttling) is retried at the first backoff's pace, not after the long one its
   * earlier failures reached (those during an earlier flush still waiting too: a shutdown during
   * a forceFlush).
   */
  readonly #hurried = new WeakMap<SealedBatch, { from: number; flushes: number }>();
  /** The queue id of each batch waiting in the queue for a slot (so a flush can move it up). */
  readonly #waiting = new Map<SealedBatch, string>();
  #lastId = 0;

  /** Uploads the batches of `budget`, for whichever exporter each belongs to. */
  constructor(options: UploaderOptions, budget: MemoryBudget) {
    this.#options = options;
    this.#budget = budget;
    this.#conditionalWrites = options.conditionalWrites;
    this.#queue = new PQueue({ concurrency: options.concurrency });
  }

  /** Queues a batch that is ready (its state is `queued`) for an upload slot. */
  submit(batch: SealedBatch): void {
    const id = String(++this.#lastId);
    this.#waiting.set(batch, id);
    const priority = this.#hurried.has(batch) ? HURRIED_PRIORITY : 0;
    this.#queue
      .add(
        () => {
          if (this.#waiting.get(batch) === id) this.#waiting.delete(batch);
          return this.#attempt(batch);
        },
        { id, priority },
      )
      .catch(() => {
        // #attempt handles its own errors; p-queue only rejects if the task itself threw.
      });
  }

  /**
   * While a flush waits for `batches`: those in an ordinary backoff are retried at once (a flush
   * does not sit it out), and their backoff starts over (see #hurried) until the function
   * returned is called, when the flush ends. A wait for the server's Retry-After, or at the
   * configuration-fault pace, keeps its time, but no more: a jittered backoff longer than the
   * Retry-After is cut down to it. Their attempts go ahead of those nobody waits for, in the
   * queue now or later (HURRIED_PRIORITY).
   */
  hurry(batches: readonly SealedBatch[]): () => void {
    for (const batch of batches) {
      const hurried = this.#hurried.get(batch);
      if (hurried === undefined) this.#hurried.set(batch, { from: batch.attempts, flushes: 1 });
      else {
        hurried.from = batch.attempts;
        hurried.flushes++;
      }
      const id = this.#waiting.get(batch);
      if (id !== undefined) this.#queue.setPriority(id, HURRIED_PRIORITY);
    }
    for (const batch of batches)
      if (batch.state === 'backing-off') this.#hasten(batch, this.#keepingTime.get(batch) ?? 0);
    return () => {
      for (const batch of batches) {
        const hurried = this.#hurried.get(batch);
        if (hurried !== undefined && --hurried.flushes === 0) this.#hurried.delete(batch);
      }
    };
  }

  /**
   * Cuts down to the server's time the waits of those of `batches` that back off longer than
   * their Retry-After; an ordinary backoff is left alone. A flush calls it on every change while
   * it waits: a batch that meets a Retry-After meanwhile is past what hurry cut short, yet must
   * not make the flush sit out the rest of a backoff with nothing sent.
   */
  keepToServerTime(batches: Iterable<SealedBatch>): void {
    for (const batch of batches) {
      const keptUntil = this.#keepingTime.get(batch);
      if (batch.state === 'backing-off' && keptUntil !== undefined) this.#hasten(batch, keptUntil);
    }
  }

  /** A batch backing off is retried at `at` (performance.now() time) if sooner, or now if past. */
  #hasten(batch: SealedBatch, at: number): void {
    const wait = at - performance.now();
    if (wait > 0) batch.retrySooner(wait, () => this.#resubmit(batch));
    else this.#resubmit(batch);
  }

  /** Queues a batch that waited (backing off, or read back from disk) for its next attempt. */
  #resubmit(batch: SealedBatch): void {
    if (batch.queue()) this.submit(batch);
  }

  /**
   * The batch waits, by a wait no flush may cut short (the server's Retry-After, the
   * configuration-fault pace), until after `at` (performance.now() time): no attempt of it can
   * come before then.
   */
  waitsPast(batch: SealedBatch, at: number): boolean {
    return (this.keptUntil(batch) ?? at) > at;
  }

  /**
   * When the wait no flush may cut short of a batch waiting to retry (backing off, or paged out
   * meanwhile) ends (performance.now() time); undefined if it waits for no such thing.
   */
  keptUntil(batch: SealedBatch): number | undefined {
    const retryAt = batch.retryAt;
    const kept = this.#keepingTime.get(batch);
    return retryAt === undefined || kept === undefined ? undefined : Math.min(retryAt, kept);
  }

  /**
   * A batch read back from the spool: uploaded now, or, when it was paged out while it waited
   * for the server's Retry-After (or at the configuration-fault pace), once that wait is over
   * (not the rest of a longer ordinary backoff, which a page-in ends as before).
   */
  resume(batch: SealedBatch): void {
    const wait = (this.keptUntil(batch) ?? 0) - performance.now();
    if (wait > 0) batch.backOff(wait, () => this.#resubmit(batch));
    else this.#resubmit(batch);
  }

  /** Forgets queued work at shutdown; the batches themselves are settled by the budget. */
  clear(): void {
    this.#queue.clear();
    this.#waiting.clear();
  }

  async #attempt(batch: SealedBatch): Promise<void> {
    const controller = new AbortController();
    if (batch.body === undefined || !batch.startUpload(controller)) return; // moved on
    const o = this.#options;
    this.#outcomesOf(batch).attempt(batch);
    const deadline = setTimeout(() => controller.abort(TIMED_OUT), o.requestTimeoutMillis);
    const conditional = this.#conditionalWrites && !this.#probing.has(batch);
    try {
      // A turn of its own: the work that led here (the worker's reply, the key, the queue) and
      // the SDK's do not add up into one stall.
      await nextTurn();
      const body = batch.body;
      // Dropped during that turn: whoever did it has settled the batch.
      if (batch.state !== 'uploading' || body === undefined) return;
      await endsAtAbort(
        o.writer.put({
          key: batch.key,
          body,
          contentType: batch.contentType,
          ifNoneMatch: conditional,
          crc32: batch.crc32,
          sha256: batch.sha256,
          signal: controller.signal,
        }),
        controller.signal,
      );
      this.#succeeded(batch);
    } catch (error) {
      if (batch.state !== 'uploading') return; // dropped while in flight
      // Answered (or timed out, which #failed marks): not in flight while its verdict is acted on.
      batch.uploadEnded(controller);
      this.#failed(batch, error, controller.signal.reason === TIMED_OUT, conditional);
    } finally {
      clearTimeout(deadline);
      batch.uploadEnded(controller);
    }
  }

  #succeeded(batch: SealedBatch): void {
    if (batch.state !== 'uploading') return;
    if (this.#probing.has(batch) && this.#conditionalWrites) {
      // The same PUT without If-None-Match was accepted: the server does not do conditional
      // writes. Plain PUTs from now on (a retry may then overwrite, never duplicate).
      this.#conditionalWrites = false;
      log.warn(
        `the server rejects conditional writes (If-None-Match) but accepts plain PUTs; continuing without them (${batch.key})`,
      );
    }
    this.#outcomesOf(batch).uploaded(batch, batch.sinceFirstAttempt());
    this.#budget.settle(batch, 'uploaded');
  }

  #failed(batch: SealedBatch, error: unknown, timedOut: boolean, conditional: boolean): void {
    const verdict = classifyUploadError(error, timedOut);
    if (mayHaveLanded(error, timedOut)) batch.markUnanswered();
    if (conditional && verdict.kind === 'fatal' && headerMayBeTheCause(error)) {
      // Maybe the server cannot do If-None-Match: the same bytes once more without it, at once.
      this.#probing.add(batch);
      this.#retry(batch, { kind: 'probe', reason: verdict.reason }, error, 0);
      return;
    }
    this.#probing.delete(batch);
    switch (verdict.kind) {
      case 'exists':
        // Only a conditional write can say this: an earlier attempt of this key landed.
        this.#succeeded(batch);
        return;
      case 'fatal':
        this.#reject(batch, verdict.reason, error);
        return;
      case 'config':
        this.#retry(batch, verdict, error, slowRetryDelay(this.#options.backoff));
        if (!batch.isSettled) this.#budget.markBlocked(batch);
        return;
      case 'retry': {
        // A server that says to slow down (429, 503, SlowDown) keeps its grown backoff, flush
        // or not: restarted by every flush (one an invocation, in a function-as-a-service) it
        // would be asked again at the first backoff's pace all through the throttling.
        const from = verdict.reason === 'throttled' ? 0 : (this.#hurried.get(batch)?.from ?? 0);
        const attempt = batch.attempts - from;
        this.#retry(
          batch,
          verdict,
          error,
          retryDelay(attempt, this.#options.backoff, verdict.retryAfterMillis),
        );
        return;
      }
    }
  }

  #reject(batch: SealedBatch, reason: string, error: unknown): void {
    this.#outcomesOf(batch).rejected(batch, reason, error);
    this.#budget.drop(batch, 'rejected');
  }

  #retry(batch: SealedBatch, verdict: RetryVerdict, error: unknown, delayMillis: number): void {
    if (!batch.backOff(delayMillis, () => this.#resubmit(batch))) return;
    const kept = keptMillis(verdict, delayMillis);
    if (kept === undefined) this.#keepingTime.delete(batch);
    else this.#keepingTime.set(batch, performance.now() + kept);
    this.#outcomesOf(batch).retrying(batch, verdict, error, delayMillis);
    // A flush waiting for this batch may now know that waiting is pointless (waitsPast).
    this.#budget.changed();
  }

  /** Its exporter's outcomes: batches of every signal sharing the budget come through here. */
  #outcomesOf(batch: SealedBatch): Outcomes {
    return this.#budget.ownerOf(batch).outcomes;
  }
}

/**
 * How much of a wait of `delayMillis` no flush may cut short (undefined: none): the time the
 * server asked for (Retry-After, a floor under the jittered backoff), or all of the slow pace
 * of a fault only an operator can fix, where retrying sooner only adds requests.
 */
function keptMillis(verdict: RetryVerdict, delayMillis: number): number | undefined {
  if (verdict.kind === 'config') return delayMillis;
  if (verdict.kind !== 'retry' || verdict.retryAfterMillis === undefined) return undefined;
  return Math.min(verdict.retryAfterMillis, MAX_RETRY_AFTER_MILLIS, delayMillis);
}
