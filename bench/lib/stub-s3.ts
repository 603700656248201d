/**
 * In-process stand-ins for S3Client.send(), for the parts of the benchmark that measure the
 * exporter and not the network: they accept every PutObject after `delayMillis`, except the
 * exporter's startup check, which they refuse as a real server does (400 BadDigest, nothing
 * stored) and count apart, so `puts` holds the data objects only.
 */
import type { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ACCESS_CHECK_DIR } from '../../src/layout/outputs.js';

export interface StubPut {
  /** performance.now() when send() was called. */
  at: number;
  /** The body, when the stub was asked to keep bodies. */
  body?: Buffer;
}

export class StubS3 {
  readonly puts: StubPut[] = [];
  /** Startup checks seen (refused, not in `puts`). */
  checks = 0;
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
    if (isStartupCheck(command.input.Key)) {
      this.checks++;
      throw Object.assign(
        new Error('The Content-MD5 you specified did not match what we received.'),
        {
          name: 'BadDigest',
          $metadata: { httpStatusCode: 400 },
        },
      );
    }
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
    // As S3 answers a stored object: with its ETag (the startup check takes none for no S3).
    return { $metadata: { httpStatusCode: 200 }, ETag: '"stub"' };
  }
}

const isStartupCheck = (key: string | undefined) =>
  key !== undefined &&
  (key.startsWith(`${ACCESS_CHECK_DIR}/`) || key.includes(`/${ACCESS_CHECK_DIR}/`));
