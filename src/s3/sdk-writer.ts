import type { S3Client } from '@aws-sdk/client-s3';
import { yieldBetweenSteps } from './event-loop-turns.js';
import type { ObjectWriter, PutAnswer, PutObjectFields, PutRequest } from './object-writer.js';

/**
 * PutObject through an AWS SDK client: the caller's `s3Client`, or one the exporter makes when
 * the SDK's endpoint rules are needed (see sdkNeeded). The SDK is imported at the first upload,
 * so a process that never needs it never loads it.
 */
export class SdkObjectWriter implements ObjectWriter {
  readonly #client: () => Promise<S3Client>;
  readonly #owned: boolean;
  readonly #bucket: string;
  readonly #fields: PutObjectFields;
  #made: S3Client | undefined;
  #destroyed = false;

  constructor(
    client: S3Client | (() => Promise<S3Client>),
    bucket: string,
    fields: PutObjectFields,
  ) {
    this.#owned = typeof client === 'function';
    let pending: Promise<S3Client> | undefined;
    this.#client =
      typeof client === 'function'
        ? () => {
            pending ??= client().then((made) => {
              this.#made = made;
              if (this.#destroyed) made.destroy();
              return made;
            });
            return pending;
          }
        : () => Promise.resolve(client);
    this.#bucket = bucket;
    this.#fields = fields;
  }

  async put(request: PutRequest): Promise<PutAnswer> {
    const client = await this.#client();
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    const { body, sha256 } = request;
    const command = new PutObjectCommand({
      ...this.#fields,
      Bucket: this.#bucket,
      Key: request.key,
      Body: body,
      ContentLength: body.length,
      ContentType: request.contentType,
      ...(request.ifNoneMatch ? { IfNoneMatch: '*' } : {}),
      ...(request.crc32 === undefined ? {} : { ChecksumCRC32: request.crc32 }),
      ...(request.contentMd5 === undefined ? {} : { ContentMD5: request.contentMd5 }),
    });
    if (sha256 !== undefined) {
      // SigV4 signs the payload's SHA-256; a header already holding it spares the SDK hashing
      // the body on the event loop.
      command.middlewareStack.add(
        (next) => (args) => {
          const r = args.request as { headers?: Record<string, string> };
          if (r.headers !== undefined) r.headers['x-amz-content-sha256'] = sha256;
          return next(args);
        },
        { step: 'build', name: 'otelS3PrecomputedPayloadHash' },
      );
    }
    yieldBetweenSteps(command.middlewareStack);
    const output = await client.send(command, { abortSignal: request.signal });
    return { etag: output?.ETag };
  }

  destroy(): void {
    this.#destroyed = true;
    if (this.#owned) this.#made?.destroy();
  }
}
