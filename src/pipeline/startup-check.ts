import { endsAtAbort } from '../base/deadline.js';
import { type Episodes, log } from '../base/log.js';
import { credentialsTimedOut, describeError, errorShape } from '../s3/errors.js';
import type { ObjectWriter, PutAnswer } from '../s3/object-writer.js';
import { classifyUploadError, networkCause } from '../s3/verdict.js';
import { CHECK_CREDENTIALS_PROVIDER, reportConfigFault, reportUnreachable } from './outcomes.js';

/**
 * The startup check: one PutObject with an empty body and a Content-MD5 that cannot match it,
 * sent as the exporter starts. A server checks the signature, the bucket and the permission
 * before it reads the body, so a wrong secret, a missing bucket or permission, a wrong region or
 * endpoint answers at once (403, 404, 301, no connection), while a configuration that works is
 * answered 400 BadDigest and nothing is stored. It needs no permission beyond the uploads' own
 * (s3:PutObject), and a fault it finds is the same episode as the uploads' (see
 * reportConfigFault): reported once, by whoever meets it first.
 */

/** MD5 of 16 zero bytes: a well-formed Content-MD5 that no empty body has. */
const WRONG_MD5 = 'AAAAAAAAAAAAAAAAAAAAAA==';

/** The answers that say the request got past the signature, the bucket and the permission. */
const BODY_REFUSED = new Set(['BadDigest', 'InvalidDigest', 'XAmzContentSHA256Mismatch']);

/** Deadline of each attempt: a fault should be heard in seconds, not a request deadline. */
export const STARTUP_CHECK_TIMEOUT_MILLIS = 5_000;
/**
 * A connection refused or a name not found is tried again for this long (a server or sidecar
 * starting with the service) before it is reported.
 */
export const STARTUP_CHECK_GRACE_MILLIS = 3_000;
const RETRY_EVERY_MILLIS = 1_000;

export interface StartupCheckOptions {
  writer: ObjectWriter;
  episodes: Episodes;
  /** The key it writes (nothing is stored there unless the server ignores Content-MD5). */
  key: string;
  /** `s3://bucket/key`, for messages. */
  where: string;
  /** Where requests go, as messages name it (see endpointName). */
  endpoint: string;
  requestTimeoutMillis: number;
  /** How often uploads retry a configuration fault, for the message. */
  slowRetryMillis: number;
}

/** What the check found: 'ok' (access works), a fault it reported, or 'unknown'. */
export type StartupCheckResult = 'ok' | 'config' | 'unreachable' | 'unknown' | 'stopped';

/**
 * Runs the startup check once, in the background: start() never waits for it, stop() aborts it
 * (at shutdown), and neither its timers nor (with the exporter's own requests) its connection
 * keep the process alive.
 */
export class StartupCheck {
  readonly #o: StartupCheckOptions;
  readonly #controller = new AbortController();
  #done: Promise<StartupCheckResult> | undefined;

  constructor(options: StartupCheckOptions) {
    this.#o = options;
  }

  /** Starts the check on a later turn (the constructor that calls this does no I/O). */
  start(): void {
    this.#done ??= new Promise<void>((resolve) => {
      setTimeout(resolve, 0).unref();
    })
      .then(() => this.#run())
      .catch((error: unknown) => {
        // Never a crash of the service: uploads report whatever this could not.
        log.warn(`the startup check failed: ${describeError(error)}`);
        return 'unknown' as const;
      });
  }

  /** Aborts the check if it is still going. */
  stop(): void {
    this.#controller.abort();
  }

  /** What the check found, once it is done (for tests and diagnostics). */
  get result(): Promise<StartupCheckResult> | undefined {
    return this.#done;
  }

  async #run(): Promise<StartupCheckResult> {
    const o = this.#o;
    const began = performance.now();
    const timeoutMillis = Math.min(o.requestTimeoutMillis, STARTUP_CHECK_TIMEOUT_MILLIS);
    const what = `the startup check (a PutObject of ${o.where} that stores nothing)`;
    for (let attempt = 1; ; attempt++) {
      if (this.#controller.signal.aborted) return 'stopped';
      const outcome = await this.#attempt(timeoutMillis);
      if (this.#controller.signal.aborted) return 'stopped';
      if ('answer' in outcome) {
        if (outcome.answer.etag === undefined) {
          // Accepted with no ETag: no S3 API answers so. What took it takes anything (a web
          // app's catch-all, a mock), and uploads "stored" there are lost. Its own episode: the
          // uploads' successes do not end it.
          o.episodes.report(
            'startup:no-etag',
            'error',
            `${what} was accepted without an ETag, which no S3 API does: what answers at ${o.endpoint} is not S3, and what is uploaded there is lost; check the endpoint's host, port and path`,
            'OTEL_S3_NOT_S3',
          );
          return 'config';
        }
        // A server that does not check Content-MD5 stored the empty object: access works.
        log.info(
          `the startup check found that ${o.endpoint} does not check Content-MD5: it stored an empty object at ${o.where} (each start overwrites it; startupCheck: false turns the check off)`,
        );
        return 'ok';
      }
      const { error } = outcome;
      if (error === TIMED_OUT) {
        // A deadline shorter than the check's own is the option's (10 meant as seconds, say).
        const optionBound = o.requestTimeoutMillis < STARTUP_CHECK_TIMEOUT_MILLIS;
        reportUnreachable(
          o.episodes,
          `${what} got no answer from ${o.endpoint}`,
          `no answer within ${timeoutMillis} ms${optionBound ? ' (requestTimeoutMillis)' : ''}`,
          optionBound ? 'the endpoint, the network and requestTimeoutMillis' : undefined,
        );
        return 'unreachable';
      }
      if (credentialsTimedOut(error)) {
        reportUnreachable(
          o.episodes,
          `${what} could not be signed`,
          `the credentials provider did not answer within ${timeoutMillis} ms`,
          CHECK_CREDENTIALS_PROVIDER,
        );
        return 'unreachable';
      }
      const { name } = errorShape(error);
      if (typeof name === 'string' && BODY_REFUSED.has(name)) {
        log.debug(`the startup check passed: ${o.endpoint} refused only its body (${name})`);
        return 'ok';
      }
      const verdict = classifyUploadError(error);
      if (verdict.kind === 'config') {
        reportConfigFault(
          o.episodes,
          `${what} failed (${describeError(error)})`,
          verdict,
          o.slowRetryMillis,
          o.endpoint,
        );
        return 'config';
      }
      const retrying = verdict.kind === 'retry';
      const elapsed = performance.now() - began;
      if (retrying && elapsed + RETRY_EVERY_MILLIS <= STARTUP_CHECK_GRACE_MILLIS) {
        await this.#sleep(RETRY_EVERY_MILLIS);
        continue;
      }
      const cause = networkCause(error);
      if (retrying && (verdict.reason === 'network' || verdict.reason === 'timeout')) {
        const tried = attempt === 1 ? '' : ` (${attempt} attempts)`;
        reportUnreachable(
          o.episodes,
          `${what} could not reach ${o.endpoint}${tried}`,
          cause ?? describeError(error),
        );
        return 'unreachable';
      }
      if (verdict.kind === 'fatal') {
        // Refused for good, with the uploads' own headers: every upload would be refused too
        // (a storage class or encryption the server does not take).
        o.episodes.report(
          'config:refused',
          'error',
          `${what} was refused by ${o.endpoint} (${describeError(error)}): uploads with these settings would be refused too and their batches dropped; check the endpoint and the options sent with each upload (storageClass, serverSideEncryption, sseKmsKeyId, tags, metadata)`,
          'OTEL_S3_UPLOADS_REFUSED',
        );
        return 'config';
      }
      // A server error: uploads will tell.
      log.warn(
        `the startup check could not tell whether uploads will work: ${describeError(error)}`,
      );
      return 'unknown';
    }
  }

  /**
   * One attempt: the answer when it was stored, else why not (TIMED_OUT when the server had not
   * answered by its deadline; a credentials timeout as it is).
   */
  async #attempt(timeoutMillis: number): Promise<{ answer: PutAnswer } | { error: unknown }> {
    const attempt = new AbortController();
    const signal = AbortSignal.any([this.#controller.signal, attempt.signal]);
    const deadline = setTimeout(() => attempt.abort(TIMED_OUT), timeoutMillis);
    deadline.unref();
    try {
      const answer = await endsAtAbort(
        this.#o.writer.put({
          key: this.#o.key,
          body: Buffer.alloc(0),
          contentType: 'application/octet-stream',
          ifNoneMatch: false,
          crc32: undefined,
          sha256: undefined,
          contentMd5: WRONG_MD5,
          background: true,
          signal,
        }),
        signal,
      );
      return { answer };
    } catch (error) {
      if (credentialsTimedOut(error)) return { error };
      return { error: attempt.signal.reason === TIMED_OUT ? TIMED_OUT : error };
    } finally {
      clearTimeout(deadline);
    }
  }

  #sleep(millis: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, millis);
      timer.unref();
      this.#controller.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}

const TIMED_OUT = Symbol('startup check deadline');
