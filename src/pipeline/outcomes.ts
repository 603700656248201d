import { type AlertCode, type Episodes, log } from '../log.js';
import { describeError } from '../s3-errors.js';
import { type ExporterStats, increment } from '../stats.js';
import type { RetryVerdict } from '../upload/uploader.js';
import type { DropReason } from './budget.js';
import type { SealedBatch } from './sealed-batch.js';

/**
 * Outcome accounting: what happened to each export, attempt and batch is counted in stats()
 * and logged here, once per episode for conditions that repeat. Nothing else writes stats.
 */
export class Outcomes {
  readonly stats: ExporterStats;
  readonly #episodes: Episodes;
  /** How often configuration faults are retried, for the message that reports them. */
  readonly #slowRetryMillis: number;
  readonly #latencyListeners = new Set<(millis: number) => void>();

  constructor(stats: ExporterStats, episodes: Episodes, slowRetryMillis: number) {
    this.stats = stats;
    this.#episodes = episodes;
    this.#slowRetryMillis = slowRetryMillis;
  }

  /** Calls `listener` with the latency of every upload from now on; returns the unsubscribe. */
  onUploadLatency(listener: (millis: number) => void): () => void {
    this.#latencyListeners.add(listener);
    return () => this.#latencyListeners.delete(listener);
  }

  accepted(bufferedBytes: number): void {
    this.stats.exportsAccepted++;
    this.stats.peakBufferedBytes = Math.max(this.stats.peakBufferedBytes, bufferedBytes);
  }

  /** An export answered FAILED; its points (if any were encoded) are lost under `reason`. */
  exportRejected(lost?: { reason: DropReason; points: number; bytes: number }): void {
    this.stats.exportsRejected++;
    if (lost !== undefined) this.#countDrop(lost.reason, 0, lost.points, lost.bytes);
  }

  sealed(): void {
    this.stats.batchesSealed++;
  }

  attempt(batch: SealedBatch): void {
    this.stats.uploadAttempts++;
    if (batch.attempts > 1) this.stats.retries++;
  }

  /** S3 stored the batch (or said an earlier attempt had). Call before the batch settles. */
  uploaded(batch: SealedBatch, latencyMillis: number): void {
    const s = this.stats;
    s.batchesUploaded++;
    s.bytesUploaded += batch.body?.length ?? 0;
    s.rawBytesUploaded += batch.rawBytes;
    s.pointsUploaded += batch.points;
    const latency = s.uploadLatency;
    latency.count++;
    latency.totalMillis += latencyMillis;
    latency.maxMillis = Math.max(latency.maxMillis, latencyMillis);
    latency.lastMillis = latencyMillis;
    for (const listener of this.#latencyListeners) listener(latencyMillis);
    this.#episodes.clear('upload-failing', (n) => `uploads recovered after ${n} failed attempts`);
    this.#episodes.clear('buffer-full');
    this.#episodes.clear('rejected');
    this.#episodes.clearMatching(
      'config:',
      (key) => `uploads work again: the ${key.slice(7)} fault is fixed`,
    );
  }

  /** S3 will never accept the batch; the caller drops it. */
  rejected(batch: SealedBatch, reason: string, error: unknown): void {
    increment(this.stats.uploadFailures, reason);
    this.#episodes.report(
      'rejected',
      'error',
      `S3 rejected ${batch.key} for good (${describeError(error)}); dropping the batch of ${batch.points} data points (later rejections are counted in stats().pointsDroppedByReason.rejected)`,
      'OTEL_S3_DATA_DROPPED',
    );
  }

  /** An attempt failed and will be retried after `delayMillis`. */
  retrying(batch: SealedBatch, verdict: RetryVerdict, error: unknown, delayMillis: number): void {
    increment(this.stats.uploadFailures, verdict.reason);
    const what = `upload of ${batch.key} failed (${describeError(error)})`;
    switch (verdict.kind) {
      case 'config':
        this.#episodes.report(
          `config:${verdict.reason}`,
          'error',
          `${what}: ${verdict.hint}. Data is kept within maxBufferedBytes and retried about every ${Math.round(this.#slowRetryMillis / 1000)} s`,
          alertCode(verdict.reason),
        );
        break;
      case 'probe':
        log.warn(`${what}; trying the same bytes once without If-None-Match`);
        break;
      case 'retry':
        this.#episodes.report('upload-failing', 'warn', `${what}; retrying with backoff`);
        log.debug(`${what}; attempt ${batch.attempts}, retrying in ${delayMillis} ms`);
        break;
    }
  }

  /** A sealed batch is lost for good. */
  dropped(batch: SealedBatch, reason: DropReason): void {
    this.#countDrop(reason, 1, batch.points, batch.rawBytes);
  }

  #countDrop(reason: DropReason, batches: number, points: number, bytes: number): void {
    const s = this.stats;
    s.batchesDropped += batches;
    s.pointsDropped += points;
    s.bytesDropped += bytes;
    increment(s.pointsDroppedByReason, reason, points);
  }
}

/** `no-such-bucket` → OTEL_S3_NO_SUCH_BUCKET: one warning code per configuration fault. */
function alertCode(reason: string): AlertCode {
  return `OTEL_S3_${reason.toUpperCase().replace(/-/g, '_')}` as AlertCode;
}
