import type { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { decodeObject } from '../../src/reader/decode-object.js';

/** What the scripted client does with one PutObject attempt. */
export type Behaviour =
  | { kind: 'ok' }
  | { kind: 'hang' }
  /** Stores the object, then never answers: the client times out although the write landed. */
  | { kind: 'store-then-hang' }
  | { kind: 'delay'; millis: number }
  | { kind: 'status'; status: number; name: string; headers?: Record<string, string> }
  /** Fails as Node's network layer does, e.g. `{ code: 'ECONNREFUSED' }`. */
  | { kind: 'network'; code: string };

/** What a server answers a PutObject whose Content-MD5 does not match its body. */
export const BAD_DIGEST: Behaviour = { kind: 'status', status: 400, name: 'BadDigest' };

export interface Attempt {
  key: string;
  body: Buffer;
  contentType: string | undefined;
  ifNoneMatch: string | undefined;
  outcome: 'ok' | 'aborted' | 'error' | 'exists';
}

/**
 * An in-process stand-in for S3Client.send() that follows a script, for unit tests of the
 * exporter's own logic (accounting, deadlines, retries). Proof that uploads work comes from the
 * integration tests against a real server.
 */
export class ScriptedS3 {
  readonly attempts: Attempt[] = [];
  /**
   * PutObjects with a Content-MD5 (the exporter's startup check), kept apart from `attempts`;
   * answered by the probe script, by default as a real server answers a wrong digest.
   */
  readonly probes: Attempt[] = [];
  readonly stored = new Map<string, Buffer>();
  /** Runs as each PutObject arrives, before it is answered (tests observe the world here). */
  onAttempt: ((attempt: Attempt) => void) | undefined;
  #script: Behaviour[] = [];
  #fallback: Behaviour = { kind: 'ok' };
  #probeScript: Behaviour[] = [];
  #probeFallback: Behaviour = BAD_DIGEST;
  /** Attempts hanging now ('hang'): `release` lets them go on, answered as 'ok' would be. */
  #hung: (() => void)[] = [];

  /** Behaviours for the next attempts, in order; then `fallback` for all later ones. */
  script(next: Behaviour[], fallback: Behaviour = { kind: 'ok' }): this {
    this.#script = [...next];
    this.#fallback = fallback;
    return this;
  }

  /** Behaviours for the next startup-check probes, in order; then `fallback`. */
  scriptProbes(next: Behaviour[], fallback: Behaviour = BAD_DIGEST): this {
    this.#probeScript = [...next];
    this.#probeFallback = fallback;
    return this;
  }

  /** Lets every attempt hanging now go on, stored and answered as 'ok' would be. */
  release(): void {
    for (const go of this.#hung.splice(0)) go();
  }

  /** The `tag` attribute of every data point in the stored objects (see syntheticMetrics), sorted. */
  storedTags(): number[] {
    return [...this.stored].flatMap(([key, body]) => tagsIn(key, body)).sort((a, b) => a - b);
  }

  get client(): S3Client {
    return {
      send: (command: PutObjectCommand, options?: { abortSignal?: AbortSignal }) =>
        this.#send(command, options),
    } as unknown as S3Client;
  }

  async #send(command: PutObjectCommand, options?: { abortSignal?: AbortSignal }): Promise<object> {
    const input = command.input;
    const attempt: Attempt = {
      key: input.Key as string,
      body: Buffer.from(input.Body as Buffer),
      contentType: input.ContentType,
      ifNoneMatch: input.IfNoneMatch,
      outcome: 'error',
    };
    const probe = input.ContentMD5 !== undefined;
    let behaviour: Behaviour;
    if (probe) {
      this.probes.push(attempt);
      behaviour = this.#probeScript.shift() ?? this.#probeFallback;
    } else {
      this.attempts.push(attempt);
      this.onAttempt?.(attempt);
      behaviour = this.#script.shift() ?? this.#fallback;
    }
    const signal = options?.abortSignal;
    const aborted = () =>
      new Promise<never>((_, reject) => {
        const fail = () => {
          attempt.outcome = 'aborted';
          reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
        };
        if (signal?.aborted) fail();
        signal?.addEventListener('abort', fail, { once: true });
      });
    switch (behaviour.kind) {
      case 'hang':
        await Promise.race([new Promise<void>((r) => this.#hung.push(r)), aborted()]);
        break;
      case 'store-then-hang':
        this.stored.set(attempt.key, attempt.body);
        return aborted();
      case 'delay':
        await Promise.race([new Promise((r) => setTimeout(r, behaviour.millis)), aborted()]);
        break;
      case 'status':
        throw Object.assign(new Error(behaviour.name), {
          name: behaviour.name,
          $metadata: { httpStatusCode: behaviour.status },
          $response: { statusCode: behaviour.status, headers: behaviour.headers ?? {} },
        });
      case 'network':
        throw Object.assign(new Error(`connect ${behaviour.code} 127.0.0.1:9`), {
          code: behaviour.code,
        });
      case 'ok':
        break;
    }
    if (input.IfNoneMatch === '*' && this.stored.has(attempt.key)) {
      attempt.outcome = 'exists';
      throw Object.assign(new Error('PreconditionFailed'), {
        name: 'PreconditionFailed',
        $metadata: { httpStatusCode: 412 },
      });
    }
    this.stored.set(attempt.key, attempt.body);
    attempt.outcome = 'ok';
    // As S3 answers a stored object: with its ETag (the startup check takes none for no S3).
    return { $metadata: { httpStatusCode: 200 }, ETag: '"scripted"' };
  }
}

/** The `tag` attribute of every data point in one object's body (see syntheticMetrics). */
export function tagsIn(key: string, body: Buffer): number[] {
  return [
    ...JSON.stringify(decodeObject(key, body)).matchAll(
      /"key":"tag","value":\{"intValue":(\d+)\}/g,
    ),
  ].map((m) => Number(m[1]));
}
