import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { isIdentityExpired } from '@smithy/core';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { CREDENTIALS_TIMEOUT } from './errors.js';

/** The credentials the exporter's own requests are signed with. */
export interface Credentials {
  /**
   * Credentials to sign with. Waiting for them is part of the request: once `signal` aborts, this
   * rejects with a CREDENTIALS_TIMEOUT error, and the next call asks the provider again.
   */
  get(signal: AbortSignal): Promise<AwsCredentialIdentity>;
  /** The server refused `identity` (see credentialsRefused): the next get() asks again. */
  refused(identity: AwsCredentialIdentity): void;
}

/**
 * Static credentials, the caller's provider, or the SDK's default chain (imported when first
 * asked for). A provider's answer is kept until it nears its `expiration` (as the SDK does) or
 * the server refuses it: an answer without `expiration` would otherwise be kept for good, and a
 * secret fixed at its source never read. A refresh that fails while the answer still lives
 * leaves it in use (see AskedCredentials.get).
 */
export function credentialSource(given: S3ClientConfig['credentials'] | undefined): Credentials {
  if (given !== undefined && typeof given !== 'function') {
    const fixed: AwsCredentialIdentity = given;
    return { get: async () => fixed, refused: () => {} };
  }
  return new AskedCredentials(given ?? defaultChain());
}

/**
 * The SDK's default chain, asked afresh each time AskedCredentials asks: `forceRefresh` past its
 * own memo, `ignoreCache` past the SDK's cache of the shared files' contents (a rewritten
 * AWS_SHARED_CREDENTIALS_FILE is read again).
 */
function defaultChain(): AwsCredentialIdentityProvider {
  let chain: AwsCredentialIdentityProvider | undefined;
  return async () => {
    chain ??= (await import('@aws-sdk/credential-provider-node')).defaultProvider({
      ignoreCache: true,
    });
    return chain({ forceRefresh: true });
  };
}

/** A provider's answer, kept and shared; one question in flight at a time. */
class AskedCredentials implements Credentials {
  readonly #provider: AwsCredentialIdentityProvider;
  #identity: AwsCredentialIdentity | undefined;
  #pending: Promise<AwsCredentialIdentity> | undefined;
  /** When the question in flight (#pending) was asked. */
  #askedAt = 0;

  constructor(provider: AwsCredentialIdentityProvider) {
    this.#provider = provider;
  }

  get(signal: AbortSignal): Promise<AwsCredentialIdentity> {
    const held = this.#identity;
    if (held !== undefined && !isIdentityExpired(held)) return Promise.resolve(held);
    const asked = this.#ask();
    // Near their expiry, held credentials are asked for again; if that fails while they still
    // live (a metadata service down for a minute), they sign this request: the server takes them.
    // So they do if the question is not answered within REFRESH_WAIT_MILLIS of being asked (a
    // provider that hangs); its late answer is still taken.
    const usable = () =>
      held !== undefined && this.#identity === held && stillValid(held) ? held : undefined;
    const pending =
      held === undefined
        ? asked
        : orAfter(
            asked.catch((error: unknown) => {
              const fallback = usable();
              if (fallback !== undefined) return fallback;
              throw error;
            }),
            REFRESH_WAIT_MILLIS - (Date.now() - this.#askedAt),
            usable,
          );
    // A question that outlived a request's deadline is not waited on by the next request.
    return untilAborted(pending, signal, () => {
      if (this.#pending === asked) this.#pending = undefined;
    });
  }

  refused(identity: AwsCredentialIdentity): void {
    if (this.#identity === identity) this.#identity = undefined;
  }

  #ask(): Promise<AwsCredentialIdentity> {
    if (this.#pending !== undefined) return this.#pending;
    this.#askedAt = Date.now();
    const pending: Promise<AwsCredentialIdentity> = this.#provider().then(
      (identity) => {
        if (this.#pending === pending) {
          this.#identity = identity;
          this.#pending = undefined;
        }
        return identity;
      },
      (error: unknown) => {
        if (this.#pending === pending) this.#pending = undefined;
        throw error;
      },
    );
    this.#pending = pending;
    return pending;
  }
}

/**
 * Credentials a failed refresh may fall back on: not refused, and at least this long before
 * their `expiration`, so a request signed with them reaches the server before they expire.
 */
const FALLBACK_MIN_LIFE_MILLIS = 30_000;

function stillValid(identity: AwsCredentialIdentity): boolean {
  const expiration = identity.expiration?.getTime();
  return expiration === undefined || expiration - Date.now() > FALLBACK_MIN_LIFE_MILLIS;
}

/**
 * How long a request waits for the answer to a refresh while the held credentials may still sign
 * it (see AskedCredentials.get). A provider answers in milliseconds; the SDK's instance metadata
 * provider gives up after 1 s.
 */
const REFRESH_WAIT_MILLIS = 1_000;

/**
 * `pending`, or what `fallback` gives once `waitMillis` have passed (if it gives anything; else
 * `pending` still).
 */
function orAfter<T>(
  pending: Promise<T>,
  waitMillis: number,
  fallback: () => T | undefined,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const late = () => {
      const value = fallback();
      if (value !== undefined) resolve(value);
    };
    if (waitMillis <= 0) late();
    const timer = waitMillis > 0 ? setTimeout(late, waitMillis) : undefined;
    timer?.unref();
    void pending.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/** `pending`, or a CREDENTIALS_TIMEOUT error once `signal` aborts first (`onAbort` runs then). */
function untilAborted<T>(
  pending: Promise<T>,
  signal: AbortSignal,
  onAbort: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort();
      reject(noAnswer(signal.reason));
    };
    // Handled here even after an abort: a late rejection is never an unhandled one.
    void pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
}

function noAnswer(reason: unknown): Error {
  const error = new Error('the credentials provider did not answer before the request deadline', {
    cause: reason,
  });
  error.name = CREDENTIALS_TIMEOUT;
  return error;
}
