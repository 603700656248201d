import { createHash } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Compression, Format } from '../../src/index.js';
import { type Batch, exportBatches } from './compaction-data.js';

/**
 * The exporter writing into a local directory laid out like the bucket (`{dir}/{key}`): a
 * stand-in S3 client that stores each PutObject's body as a file. For the unit tests of
 * compaction, which run on a directory store.
 */
export async function exportToDir(
  dir: string,
  options: { prefix: string; format: Format; compression?: Compression },
  batches: Batch[],
): Promise<void> {
  await exportBatches({ bucket: 'b', ...options }, { s3Client: dirClient(dir) }, batches);
}

/** The stand-in S3 client of exportToDir: each PutObject's body stored as `{dir}/{key}`. */
export function dirClient(dir: string): S3Client {
  return {
    async send(command: PutObjectCommand) {
      const { Key, Body, ContentMD5 } = command.input;
      // As S3 does: a Content-MD5 that does not match the body stores nothing (the exporter's
      // startup check sends such a one on purpose).
      if (ContentMD5 !== undefined && ContentMD5 !== md5(Body as Uint8Array)) {
        throw Object.assign(new Error('BadDigest'), {
          name: 'BadDigest',
          $metadata: { httpStatusCode: 400 },
        });
      }
      const path = join(dir, ...(Key as string).split('/'));
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, Body as Uint8Array);
      return { $metadata: { httpStatusCode: 200 } };
    },
  } as unknown as S3Client;
}

const md5 = (body: Uint8Array) => createHash('md5').update(body).digest('base64');

/** Every file under `dir`, as keys, sorted. */
export async function keysIn(dir: string): Promise<string[]> {
  const files = await readdir(dir, { recursive: true, withFileTypes: true });
  return files
    .filter((f) => f.isFile())
    .map((f) => relative(dir, join(f.parentPath, f.name)).split('\\').join('/'))
    .sort();
}
