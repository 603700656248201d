/**
 * An in-process stand-in for S3Client.send() that stores every PutObject under its key in a
 * local directory, as `aws s3 sync` would mirror the bucket, or only counts the objects and their
 * bytes when given no directory.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

export class DirectoryS3 {
  objects = 0;
  bytes = 0;
  readonly #dir: string | undefined;
  /** Directories made so far: one mkdir per partition, not per object. */
  readonly #made = new Set<string>();

  constructor(dir: string | undefined) {
    this.#dir = dir;
  }

  get client(): S3Client {
    return {
      send: (command: PutObjectCommand) => this.#send(command),
    } as unknown as S3Client;
  }

  async #send(command: PutObjectCommand): Promise<object> {
    const { Key, Body } = command.input;
    const body = Body as Uint8Array;
    this.objects++;
    this.bytes += body.length;
    if (this.#dir !== undefined && Key !== undefined) {
      const path = join(this.#dir, ...Key.split('/'));
      const parent = dirname(path);
      if (!this.#made.has(parent)) {
        await mkdir(parent, { recursive: true });
        this.#made.add(parent);
      }
      await writeFile(path, body);
    }
    // As S3 answers a stored object: with its ETag (the startup check takes none for no S3).
    return { $metadata: { httpStatusCode: 200 }, ETag: '"directory"' };
  }
}
