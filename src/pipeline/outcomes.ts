import { type AlertCode, alert, type Episodes, log, plural } from '../base/log.js';
import type { SignalName } from '../layout/formats.js';
import { credentialsTimedOut, describeError } from '../s3/errors.js';
import { ENDPOINT_FAULTS, networkCause, type RetryVerdict } from '../s3/verdict.js';
import type { SealedBatch } from './sealed-batch.js';
import { type DropReason, type ExporterStats, increment } from './stats.js';

/** A count of batches and their uncompressed bytes, as messages and stats() name them. */
export interface PendingBatches {
  batches: number;
  rawBytes: number;
}

/**
 * What a shutdown that gave up did: batches left in the spool, and those dropped, of which
 * `maybeStored` had an attempt that got no answer or one in flight (SealedBatch.mayBeStored).
 */
export interface Abandoned {
  left: number;
  dropped: PendingBatches;
  maybeStored: number;
}

/**
 * Uploads that keep failing for a network cause (no connection, no DNS answer, no answer in
 * time) this long are an alert, once per episode: long enough to ride out a server restart or a
 * DNS hiccup in silence, short enough that a wrong endpoint shows within the first minute.
 */
export const UNREACHABLE_ALERT_AFTER_MILLIS = 30_000;

export interface OutcomeOptions {
  /** How often configuration faults are retried, for the message that reports them. */
  slowRetryMillis: number;
  maxBufferedBytes: number;
  requestTimeoutMillis: number;
  flushTimeoutMillis: number;
  /** Where uploads go, as messages name it: the endpoint URL, or AWS S3 and its region. */
  endpoint: string;
  /**
   * The exporter's signal. Messages about its own data name it, and its own conditions are
   * episodes of their own: the exporters of one S3Exporters share one Episodes.
   */
  signal: SignalName;
}

/**
 * How many kinds of failure to encode or append (distinct messages) one streak logs: a failure
 * that names its item (a bad time in each of many spans) is logged a few times, not per export.
 */
const APPEND_FAILURE_KINDS = 5;

/**
 * How long a buffer-full condition (dropping, rejecting) must have gone without a drop for an
 * upload to end it. An upload alone did: behind an S3 slower than the exports, every upload
 * ended the episode and the next drop, a moment later, said the same warning again.
 */
export const BUFFER_FULL_QUIET_MILLIS = 60_000;

/** What one item of a signal is called in messages, and more than one. */
const ITEMS: Readonly<Record<SignalName, [one: string, many: string]>> = {
  metrics: ['data point', 'data points'],
  traces: ['span', 'spans'],
  logs: ['log record', 'log records'],
};

/**
 * Outcome accounting: what happened to each export, attempt and batch is counted in stats()
 * and reported here, once per episode for conditions that repeat. The only writer of stats()
 * but its `spool` part (src/spool/keeper-reports.ts) and the gauges read at each call.
 */
export class Outcomes {
  readonly stats: ExporterStats;
  readonly #episodes: Episodes;
  readonly #options: OutcomeOptions;
  readonly #latencyListeners = new Set<(millis: number) => void>();
  /** The unreachable episode's clock: its Episodes', shared by the exporters of a group. */
  readonly #clock: UnreachableClock;
  /** Why the last attempt failed, until an upload works again. */
  #lastFailure: string | undefined;
  /** Exports not encoded or appended since the last one appended, and the kinds logged. */
  #appendFailures: { failures: number; kinds: Set<string> } | undefined;
  /** Seals that threw since the last that worked: deferred, before an export, or a flush's. */
  #failedSeals = 0;
  /** performance.now() of each buffer-full condition's last drop (BUFFER_FULL_QUIET_MILLIS). */
  readonly #lastBufferFull = new Map<string, number>();

  constructor(stats: ExporterStats, episodes: Episodes, options: OutcomeOptions) {
    this.stats = stats;
    this.#episodes = episodes;
    this.#options = options;
    this.#clock = unreachableClockOf(episodes);
    this.#clock.join(this);
  }

  /** Calls `listener` with the latency of every upload from now on; returns the unsubscribe. */
  onUploadLatency(listener: (millis: number) => void): () => void {
    this.#latencyListeners.add(listener);
    return () => this.#latencyListeners.delete(listener);
  }

  /**
   * A part of an export (one resource's) was taken, holding `items`; `bufferedBytes` are held
   * now. One of no items appends nothing: it does not end a streak of exports not appended.
   */
  appended(bufferedBytes: number, items: number): void {
    this.stats.peakBufferedBytes = Math.max(this.stats.peakBufferedBytes, bufferedBytes);
    const streak = this.#appendFailures;
    if (streak === undefined || items === 0) return;
    this.#appendFailures = undefined;
    log.info(
      `${this.#who}exports are appended again, after ${plural(streak.failures, 'failure')} to encode or append one (each answered FAILED, counted in stats().exportsRejected)`,
    );
  }

  /** An export() call was answered: counted once, whatever parts it had. */
  answered(success: boolean): void {
    if (success) this.stats.exportsAccepted++;
    else this.stats.exportsRejected++;
  }

  /**
   * An export (or a part of it) that could not be encoded or appended; the caller answers it
   * FAILED, which stats().exportsRejected counts. The same failure usually repeats at every export
   * (broken column builders, a cumulative metric that keeps its bad point): each kind (its
   * message) is logged once per streak, at most APPEND_FAILURE_KINDS kinds, until an export is
   * appended again.
   */
  encodeFailed(error: unknown): void {
    const description = describeError(error);
    const streak = this.#appendFailures ?? { failures: 0, kinds: new Set<string>() };
    this.#appendFailures = streak;
    streak.failures++;
    if (streak.kinds.has(description) || streak.kinds.size >= APPEND_FAILURE_KINDS) return;
    streak.kinds.add(description);
    log.error(
      `could not encode ${this.#options.signal}: ${description}; the export is answered FAILED (counted in stats().exportsRejected), and this failure is not logged again until an export is appended`,
    );
  }

  /**
   * A part of an export answered FAILED and not taken: the open batch it had to follow could not
   * be sealed (its seal threw `error`; its own items stay in it). `rawBytes`: 0 where not known.
   */
  exportNotSealed(points: number, rawBytes: number, error: unknown): void {
    this.#failedSeals++;
    this.#countDrop('internal-error', 0, points, rawBytes);
    this.#episodes.report(
      `internal-error:${this.#options.signal}`,
      'error',
      `${this.#who}could not seal the open batch (${describeError(error)}); an export that must go to the next batch is answered FAILED, dropping ${plural(points, ...ITEMS[this.#options.signal])} (later ones are counted in stats().pointsDroppedByReason['internal-error'])`,
      'OTEL_S3_DATA_DROPPED',
    );
  }

  /** A part of an export that cannot fit under maxBufferedBytes even with every idle batch dropped. */
  exportRejectedForRoom(points: number, rawBytes: number): void {
    this.#countDrop('buffer-full', 0, points, rawBytes);
    const limit = this.#options.maxBufferedBytes;
    if (rawBytes > limit) {
      // Larger than the whole bound: no upload catching up makes room for it.
      this.#lastBufferFull.set('too-large', performance.now());
      this.#episodes.report(
        `buffer-full:too-large:${this.#options.signal}`,
        'warn',
        `${this.#who}an export of ${rawBytes} bytes (${points} ${ITEMS[this.#options.signal][points === 1 ? 0 : 1]}) is larger than maxBufferedBytes (${limit}) and can never be taken: raise maxBufferedBytes, or export less at a time (counted in stats().pointsDroppedByReason)`,
        'OTEL_S3_DATA_DROPPED',
      );
      return;
    }
    this.#lastBufferFull.set('rejecting', performance.now());
    this.#episodes.report(
      `buffer-full:rejecting:${this.#options.signal}`,
      'warn',
      `${this.#who}maxBufferedBytes (${this.#options.maxBufferedBytes}) reached with nothing left to drop: rejecting exports until uploads catch up (counted in stats().pointsDroppedByReason)`,
      'OTEL_S3_DATA_DROPPED',
    );
  }

  /**
   * A seal by size, by age or to make room threw: the items stay in the open batch, sealed again
   * at its age or the next flush. Builders that throw usually throw at every seal: logged once
   * until a seal works again.
   */
  sealDeferred(error: unknown): void {
    this.#failedSeals++;
    this.#episodes.report(
      `seal-failed:${this.#options.signal}`,
      'error',
      `${this.#who}could not seal the open batch (${describeError(error)}): its items stay in it, sealed again at its age (maxBatchAgeMillis) or the next flush; further failures are not logged until a seal works`,
    );
  }

  sealed(): void {
    this.stats.batchesSealed++;
    const failures = this.#failedSeals;
    this.#failedSeals = 0;
    this.#episodes.clear(
      `seal-failed:${this.#options.signal}`,
      () => `${this.#who}sealed the open batch again, after ${plural(failures, 'failed seal')}`,
    );
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
    this.#lastFailure = undefined;
    this.#endUnreachable();
    const e = this.#episodes;
    // Its own signal's: another's uploads may still fail (a prefix of its own, say).
    e.clear(
      `upload-failing:${this.#options.signal}`,
      (n) => `${this.#who}uploads recovered after ${n} failed attempts`,
    );
    e.clear('unreachable', () => `uploads reach ${this.#options.endpoint} again`);
    // Its own signal's: another's drops go on being its own episode until its uploads catch up,
    // which is a while without a drop, not one upload between drops.
    const now = performance.now();
    for (const [kind, last] of this.#lastBufferFull) {
      if (now - last < BUFFER_FULL_QUIET_MILLIS) continue;
      this.#lastBufferFull.delete(kind);
      e.clear(`buffer-full:${kind}:${this.#options.signal}`);
    }
    e.clear(`rejected:${this.#options.signal}`);
    e.clear(`internal-error:${this.#options.signal}`);
    // Not a fault another signal's uploads still meet (a prefix of its own the policy denies).
    e.clearMatching(
      'config:',
      (key) => `uploads work again: the ${key.slice(7)} fault is fixed`,
      this,
    );
  }

  /** S3 will never accept the batch; the caller drops it. */
  rejected(batch: SealedBatch, reason: string, error: unknown): void {
    increment(this.stats.uploadFailures, reason);
    this.#lastFailure = describeError(error);
    this.#endUnreachable();
    this.#episodes.report(
      `rejected:${this.#options.signal}`,
      'error',
      `${this.#who}S3 rejected ${batch.key} for good (${this.#lastFailure}); dropping the batch of ${plural(batch.points, ...ITEMS[this.#options.signal])} (later rejections are counted in stats().pointsDroppedByReason.rejected)`,
      'OTEL_S3_DATA_DROPPED',
    );
  }

  /** An attempt failed and will be retried after `delayMillis`. */
  retrying(batch: SealedBatch, verdict: RetryVerdict, error: unknown, delayMillis: number): void {
    increment(this.stats.uploadFailures, verdict.reason);
    const unreachable = this.#unreachable(verdict.reason, error);
    this.#lastFailure = unreachable ?? describeError(error);
    const what = `upload of ${batch.key} failed (${describeError(error)})`;
    switch (verdict.kind) {
      case 'config':
        reportConfigFault(
          this.#episodes,
          what,
          verdict,
          this.#options.slowRetryMillis,
          this.#options.endpoint,
          this,
        );
        break;
      case 'probe':
        log.warn(`${what}; trying the same bytes once without If-None-Match`);
        break;
      case 'retry':
        this.#episodes.report(
          `upload-failing:${this.#options.signal}`,
          'warn',
          `${what}; retrying with backoff`,
        );
        log.debug(`${what}; attempt ${batch.attempts}, retrying in ${delayMillis} ms`);
        break;
    }
  }

  /**
   * For a failure to reach the endpoint, its cause, and the alert once it has lasted
   * UNREACHABLE_ALERT_AFTER_MILLIS; any answer from the server ends the episode's clock.
   */
  #unreachable(reason: string, error: unknown): string | undefined {
    // A timeout is the request's own deadline, or the client's connect timeout (no connection
    // made, a hanging DNS lookup included), which its own message names.
    const cause =
      reason === 'timeout'
        ? this.#timeoutCause(error)
        : reason === 'network'
          ? (networkCause(error) ?? describeError(error))
          : undefined;
    if (cause === undefined) {
      this.#endUnreachable();
      return undefined;
    }
    this.#clock.failed(this, this.#options.endpoint, {
      cause,
      check: credentialsTimedOut(error) ? CHECK_CREDENTIALS_PROVIDER : undefined,
    });
    return cause;
  }

  /** Uploads got an answer, or stored a batch: the episode's clock stops, for the group. */
  #endUnreachable(): void {
    this.#clock.end();
  }

  /** The exporter shut down: no alert is raised for it any more. */
  close(): void {
    this.#episodes.release(this);
    this.#clock.leave(this);
  }

  /** What a timed-out attempt waited for: the credentials, the connection, or the answer. */
  #timeoutCause(error: unknown): string {
    const within = `within requestTimeoutMillis (${this.#options.requestTimeoutMillis} ms)`;
    if (credentialsTimedOut(error)) return `the credentials provider did not answer ${within}`;
    return errorName(error) === 'TimeoutError' ? describeError(error) : `no answer ${within}`;
  }

  /**
   * A journal chain or a spool file of an earlier run could not be used (quarantined, and
   * reported there): its batch is lost, with the items and bytes known of it (none if unknown).
   */
  quarantinedBatch(points: number, rawBytes: number): void {
    this.#countDrop('spool-corrupt', 1, points, rawBytes);
  }

  /** A sealed batch is lost for good; `cause` says why, where the reason alone does not. */
  dropped(batch: SealedBatch, reason: DropReason, cause?: unknown): void {
    this.#countDrop(reason, 1, batch.points, batch.rawBytes);
    if (batch.mayBeStored) this.stats.pointsDroppedMaybeStored += batch.points;
    if (reason === 'buffer-full') {
      // Its own episode and message: in a group, one signal's flood drops the others' batches too.
      this.#lastBufferFull.set('dropping', performance.now());
      this.#episodes.report(
        `buffer-full:dropping:${this.#options.signal}`,
        'warn',
        `${this.#who}maxBufferedBytes (${this.#options.maxBufferedBytes}) reached: dropping the oldest batches until uploads catch up (counted in stats().pointsDroppedByReason)`,
        'OTEL_S3_DATA_DROPPED',
      );
    } else if (reason === 'internal-error') {
      // Data lost: an alert (heard without a logger), once until its signal stores a batch.
      this.#episodes.report(
        `internal-error:${this.#options.signal}`,
        'error',
        `${this.#who}internal error preparing batch ${batch.seq}: ${describeError(cause)}; dropping the batch of ${plural(batch.points, ...ITEMS[this.#options.signal])} (later ones are counted in stats().pointsDroppedByReason['internal-error'])`,
        'OTEL_S3_DATA_DROPPED',
      );
    }
  }

  /**
   * forceFlush() returns before everything sealed so far is stored. At its deadline that is
   * an alert, once until a flush finishes; when what is left is blocked on a configuration
   * fault, that fault's own alert has said why.
   */
  flushUnfinished(why: UnfinishedWhy, pending: PendingBatches): void {
    const left = `${describePending(pending)} not yet stored`;
    if (why === 'blocked') {
      log.warn(
        `${this.#who}forceFlush() returns at once: ${left}, each blocked on a configuration fault that waiting cannot fix (see the error above); they keep retrying in the background`,
      );
      return;
    }
    // Waiting past the deadline is the deadline passing, only known sooner.
    const what =
      why === 'timeout'
        ? `forceFlush() deadline of ${this.#options.flushTimeoutMillis} ms passed with ${left}`
        : `forceFlush() returns at once with ${left}: ${waitsPast(this.#options.flushTimeoutMillis)}`;
    this.#episodes.report(
      `flush-timeout:${this.#options.signal}`,
      'warn',
      `${this.#who}${what}${this.#lastFailureText()}; they keep retrying in the background`,
      'OTEL_S3_FLUSH_TIMEOUT',
    );
  }

  /** forceFlush() saw everything stored: the next one that does not is reported again. */
  flushFinished(): void {
    this.#episodes.clear(
      `flush-timeout:${this.#options.signal}`,
      () => `${this.#who}forceFlush() stored everything again`,
    );
  }

  /**
   * forceFlush() or shutdown() could not seal the open batch by its deadline: Parquet's column
   * builders have not loaded. After a flush the exports waiting for them wait on; a shutdown
   * answered them FAILED, and their `dropped` items are lost.
   */
  sealUnfinished(caller: 'forceFlush()' | 'shutdown()', dropped?: number): void {
    const why = `${this.#who}${caller} could not seal the open batch within flushTimeoutMillis (${this.#options.flushTimeoutMillis} ms): the Parquet column builders have not loaded`;
    if (dropped === undefined) {
      log.error(`${why}; the exports waiting for them are not stored`);
      return;
    }
    this.#countDrop('shutdown', 0, dropped, 0);
    alert(
      'error',
      'OTEL_S3_DATA_DROPPED',
      `${why}; the exports waiting for them are answered FAILED, dropping ${plural(dropped, ...ITEMS[this.#options.signal])} (counted in stats().pointsDroppedByReason.shutdown)`,
    );
  }

  /**
   * forceFlush() or shutdown() could not seal the open batch: its seal threw `error`. After a
   * flush the items stay in the open batch (sealed again at the next flush or at its age), an
   * alert once until a flush stores everything; at shutdown the batch was emptied: its items
   * (`lost`) are dropped, unless its journal chain holds them for the next run.
   */
  sealFailed(
    caller: 'forceFlush()' | 'shutdown()',
    error: unknown,
    lost?: { points: number; rawBytes: number; journaled: boolean },
  ): void {
    this.#failedSeals++;
    const why = `${this.#who}${caller} could not seal the open batch (${describeError(error)})`;
    if (lost === undefined) {
      this.#episodes.report(
        `flush-timeout:${this.#options.signal}`,
        'error',
        `${why}: it is not stored; it is sealed again at the next flush or at its age (maxBatchAgeMillis)`,
        'OTEL_S3_FLUSH_TIMEOUT',
      );
      return;
    }
    const items = plural(lost.points, ...ITEMS[this.#options.signal]);
    if (lost.journaled) {
      log.warn(`${why}: its ${items} stay in the journal, for the next run to store`);
      return;
    }
    this.#countDrop('internal-error', 0, lost.points, lost.rawBytes);
    alert(
      'error',
      'OTEL_S3_DATA_DROPPED',
      `${why}: dropping ${items} (counted in stats().pointsDroppedByReason['internal-error'])`,
    );
  }

  /**
   * Exports of the open batch shutdown() could not seal, which sealFailed() said stay in the
   * journal: shutdown's last journal write failed, so they are not written, and are lost.
   */
  journalUnwritten(points: number, rawBytes: number): void {
    this.#countDrop('internal-error', 0, points, rawBytes);
    alert(
      'error',
      'OTEL_S3_DATA_DROPPED',
      `${this.#who}shutdown()'s last journal write failed: ${plural(points, ...ITEMS[this.#options.signal])} of the open batch that could not be sealed are not in the journal after all, and are dropped (counted in stats().pointsDroppedByReason['internal-error'])`,
    );
  }

  /** shutdown() could not store what was pending; `abandoned` is what it did with it. */
  gaveUp(why: UnfinishedWhy, abandoned: Abandoned): void {
    const { left, dropped } = abandoned;
    const reason =
      why === 'timeout'
        ? `shutdown() deadline of ${this.#options.flushTimeoutMillis} ms passed`
        : why === 'blocked'
          ? 'shutdown(): every pending batch is blocked on a configuration fault that waiting cannot fix'
          : `shutdown() returns at once: ${waitsPast(this.#options.flushTimeoutMillis)}`;
    // An attempt that got no answer may have stored its batch: "lost" only for certain of the rest.
    const { maybeStored } = abandoned;
    const them =
      maybeStored === dropped.batches
        ? maybeStored === 1
          ? 'it'
          : 'them'
        : `${maybeStored} of them`;
    const maybe =
      maybeStored === 0 ? '' : ` (S3 may hold ${them} after all: an attempt got no answer)`;
    const lost =
      dropped.batches > 0 ? `: dropped ${describePending(dropped)} not yet stored${maybe}` : '';
    const kept =
      left > 0
        ? `; ${plural(left, 'batch', 'batches')} ${left === 1 ? 'stays' : 'stay'} in the spool for the next run`
        : '';
    const message = `${this.#who}${reason}${lost}${kept}${this.#lastFailureText()}`;
    if (dropped.batches > 0) alert('error', 'OTEL_S3_DATA_DROPPED', message);
    else log.warn(message);
  }

  /** `traces exporter: `, before what concerns this exporter's own data. */
  get #who(): string {
    return `${this.#options.signal} exporter: `;
  }

  #lastFailureText(): string {
    return this.#lastFailure === undefined ? '' : `; last upload failure: ${this.#lastFailure}`;
  }

  #countDrop(reason: DropReason, batches: number, points: number, rawBytes: number): void {
    const s = this.stats;
    s.batchesDropped += batches;
    s.pointsDropped += points;
    s.rawBytesDropped += rawBytes;
    increment(s.pointsDroppedByReason, reason, points);
  }
}

/**
 * The clock of the unreachable episode: since the first network failure of any exporter sharing
 * the Episodes (one S3Exporters: one endpoint, one alert), until any of them gets an answer.
 * One clock per exporter would let one signal's success close the alert while another's clock
 * kept its own first failure, and raise the alert again at its next failure, however short.
 */
class UnreachableClock {
  readonly #episodes: Episodes;
  /** The exporters not shut down: only their failures start the clock or raise the alert. */
  readonly #members = new Set<object>();
  /** performance.now() of the first network failure since uploads last got an answer. */
  #since: number | undefined;
  /** What the alert names: the last network failure's endpoint, cause and what to check. */
  #last: { endpoint: string; cause: string; check: string | undefined } | undefined;
  /**
   * Raises the alert at UNREACHABLE_ALERT_AFTER_MILLIS into the episode: a retry may back off
   * up to retry.maxDelayMillis (30 s by default), so the next failure can come nearly that late.
   */
  #timer: NodeJS.Timeout | undefined;

  constructor(episodes: Episodes) {
    this.#episodes = episodes;
  }

  join(member: object): void {
    this.#members.add(member);
  }

  /** `member` shut down; with the last one gone, no timer stays armed. */
  leave(member: object): void {
    this.#members.delete(member);
    if (this.#members.size === 0) this.end();
  }

  /** A network failure of `member`'s upload: the alert once the episode lasts long enough. */
  failed(
    member: object,
    endpoint: string,
    last: { cause: string; check: string | undefined },
  ): void {
    // A late report (an attempt in flight at shutdown) raises nothing: the process may be exiting.
    if (!this.#members.has(member)) return;
    this.#last = { endpoint, ...last };
    if (this.#since === undefined) {
      this.#since = performance.now();
      this.#timer = setTimeout(() => this.#alert(true), UNREACHABLE_ALERT_AFTER_MILLIS);
      this.#timer.unref(); // an alert never keeps the process alive
    }
    this.#alert();
  }

  /** Some upload got an answer, or stored a batch: the episode's clock stops. */
  end(): void {
    this.#since = undefined;
    this.#last = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * The alert, if the episode has lasted UNREACHABLE_ALERT_AFTER_MILLIS (once: Episodes). The
   * timer says `due`: it may fire a fraction of a millisecond early by performance.now().
   */
  #alert(due = false): void {
    const since = this.#since;
    const last = this.#last;
    if (since === undefined || last === undefined) return;
    const lasted = performance.now() - since;
    if (!due && lasted < UNREACHABLE_ALERT_AFTER_MILLIS) return;
    reportUnreachable(
      this.#episodes,
      `uploads to ${last.endpoint} have failed for ${Math.round(lasted / 1000)} s`,
      last.cause,
      last.check,
    );
  }
}

const unreachableClocks = new WeakMap<Episodes, UnreachableClock>();

/** The unreachable clock of the exporters sharing `episodes`. */
function unreachableClockOf(episodes: Episodes): UnreachableClock {
  let clock = unreachableClocks.get(episodes);
  if (clock === undefined) {
    clock = new UnreachableClock(episodes);
    unreachableClocks.set(episodes, clock);
  }
  return clock;
}

/**
 * Why a flush or shutdown returned with batches not stored: its deadline passed; each is blocked
 * on a configuration fault; or they wait (the server's Retry-After, the configuration-fault pace)
 * until after its deadline, so no attempt could come before it.
 */
export type UnfinishedWhy = 'timeout' | 'blocked' | 'waiting';

/** Why a call returns at once ('waiting'), its deadline being `millis` away. */
function waitsPast(millis: number): string {
  return `the server asked to wait (Retry-After) until after this call's deadline of ${millis} ms, and no attempt may come sooner`;
}

/** `2 batches (1,674 bytes uncompressed)`: the measure of stats().rawBytesDropped. */
function describePending({ batches, rawBytes }: PendingBatches): string {
  return `${plural(batches, 'batch', 'batches')} (${plural(rawBytes, 'byte')} uncompressed)`;
}

function errorName(error: unknown): unknown {
  return typeof error === 'object' && error !== null
    ? (error as { name?: unknown }).name
    : undefined;
}

/**
 * A configuration fault, as one episode (`config:<reason>`) whoever meets it first: the startup
 * check or an upload. `what` failed, e.g. `upload of KEY failed (SignatureDoesNotMatch (HTTP
 * 403))`; the verdict's hint says what is wrong and what to do; a fault of the endpoint itself
 * names it (`endpoint`: as messages name it, with the variable it came from). `holder`: the
 * exporter whose upload met it, which holds the episode open until its own uploads work.
 */
export function reportConfigFault(
  episodes: Episodes,
  what: string,
  verdict: { reason: string; hint: string },
  slowRetryMillis: number,
  endpoint: string,
  holder?: object,
): void {
  const path = verdict.reason === 'no-such-bucket' ? endpointPath(endpoint) : undefined;
  const hint = ENDPOINT_FAULTS.has(verdict.reason)
    ? `${verdict.hint} (the endpoint: ${endpoint})`
    : path !== undefined
      ? `${verdict.hint}; the endpoint ${endpoint} has a path (${path}), which every request puts before the bucket: if the bucket exists, take the path out of the endpoint`
      : verdict.hint;
  episodes.report(
    `config:${verdict.reason}`,
    'error',
    `${what}: ${hint}. Data is kept within maxBufferedBytes and retried about every ${Math.round(slowRetryMillis / 1000)} s`,
    alertCode(verdict.reason),
    holder,
  );
}

/**
 * The path of an endpoint URL as messages name it (`http://host:9000/s3`), or undefined when it
 * has none: the server reads its first segment as the bucket, so a missing bucket may be it.
 */
function endpointPath(endpoint: string): string | undefined {
  try {
    const { pathname } = new URL(endpoint.split(' ')[0] ?? '');
    return pathname === '/' || pathname === '' ? undefined : pathname;
  } catch {
    return undefined;
  }
}

/** What to check when it is the credentials provider that does not answer. */
export const CHECK_CREDENTIALS_PROVIDER =
  'the credentials provider (the credentials option, or what the AWS default chain uses: instance metadata, STS, SSO, a credential process) and its network';

/**
 * The endpoint cannot be reached, as one episode (`unreachable`) whoever says it first: the
 * startup check or uploads that kept failing. `what` happened; `cause` is the network's word;
 * `check` is what to look at (a credentials provider that never answers is this episode too).
 */
export function reportUnreachable(
  episodes: Episodes,
  what: string,
  cause: string,
  check = 'the endpoint and the network',
): void {
  episodes.report(
    'unreachable',
    'warn',
    `${what}: ${cause}. Data is kept within maxBufferedBytes and retried with backoff; check ${check}`,
    'OTEL_S3_ENDPOINT_UNREACHABLE',
  );
}

/** `no-such-bucket` → OTEL_S3_NO_SUCH_BUCKET: one warning code per configuration fault. */
function alertCode(reason: string): AlertCode {
  return `OTEL_S3_${reason.toUpperCase().replace(/-/g, '_')}` as AlertCode;
}
