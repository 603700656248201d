import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The little of s3rver's API the demo uses (the package ships no type definitions). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
}) => S3rverInstance;

const require = createRequire(import.meta.url);

export interface EmbeddedS3 {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Stops the server and deletes its data directory. */
  close(): Promise<void>;
}

/**
 * Starts s3rver, a fake S3 server good enough for a demo, on 127.0.0.1 with a free port and its
 * data in a fresh temporary directory. Not for tests of S3 semantics: it ignores `If-None-Match`,
 * does not check v4 signatures, and on Node >= 17 fails any ListObjectsV2 page that would need a
 * continuation token (it encrypts tokens with DES, which OpenSSL 3 no longer offers), so a
 * listing must fit one page of 1000 keys. A demo run stores one object every few seconds.
 */
export async function startEmbeddedS3(): Promise<EmbeddedS3> {
  const S3rver = require('s3rver') as S3rverConstructor;
  const directory = await mkdtemp(join(tmpdir(), 'otel-s3-demo-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  let address: AddressInfo;
  try {
    address = await server.run();
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    // s3rver knows one account, whose access key id and secret are both "S3RVER".
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    async close() {
      try {
        await server.close();
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    },
  };
}
