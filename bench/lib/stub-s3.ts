/**
 * In-process stand-ins for S3Client.send(), for the parts of the benchmark that measure the
 * exporter and not the network: they accept every PutObject after `delayMillis`.
 */
import type { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

export interface StubPut {
  /** performance.now() when send() was called. */
  at: number;
  /** The body, when the stub was asked to keep bodies. */
  body?: Buffer;
}

export class StubS3 {
  readonly puts: StubPut[] = [];
  readonly #delayMillis: number;
  readonly #keepBodies: boolean;

  constructor(delayMillis = 0, keepBodies = false) {
    this.#delayMillis = delayMillis;
    this.#keepBodies = keepBodies;
  }

  get client(): S3Client {
    return {
      send: (command: PutObjectCommand, options?: { abortSignal?: AbortSignal }) =>
        this.#send(command, options?.abortSignal),
    } as unknown as S3Client;
  }

  async #send(command: PutObjectCommand, signal: AbortSignal | undefined): Promise<object> {
    const body = command.input.Body as Uint8Array;
    this.puts.push({
      at: performance.now(),
      ...(this.#keepBodies ? { body: Buffer.from(body) } : {}),
    });
    if (this.#delayMillis > 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, this.#delayMillis);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
        });
      });
    }
    return { $metadata: { httpStatusCode: 200 } };
  }
}
