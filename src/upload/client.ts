import { S3Client } from '@aws-sdk/client-s3';
import { s3ClientConfig } from '../config/client-settings.js';
import type { ResolvedConfig } from '../config.js';

export interface ClientHandle {
  client: S3Client;
  /** True when the exporter created the client and so must destroy it at shutdown. */
  owned: boolean;
}

/**
 * The S3 client: the user's, or one made for the exporter (one attempt per send, the
 * configured checksum mode; see s3ClientConfig).
 */
export function createClient(config: ResolvedConfig): ClientHandle {
  if (config.s3Client !== undefined) return { client: config.s3Client, owned: false };
  const client = new S3Client(
    s3ClientConfig(config, { role: 'exporter', requestTimeoutMillis: config.requestTimeoutMillis }),
  );
  return { client, owned: true };
}
