import { S3Client } from '@aws-sdk/client-s3';
import type { ResolvedConfig } from '../config.js';

export interface ClientHandle {
  client: S3Client;
  /** True when the exporter created the client and so must destroy it at shutdown. */
  owned: boolean;
}

/**
 * The S3 client: the user's, or one made for the exporter. The exporter's own client makes a
 * single attempt per send (the exporter's retry loop is the only one, so retries keep their key
 * and their deadline) and uses the configured checksum mode (many S3-compatible servers reject
 * the SDK's default CRC32 trailers).
 */
export function createClient(config: ResolvedConfig): ClientHandle {
  if (config.s3Client !== undefined) return { client: config.s3Client, owned: false };
  const client = new S3Client({
    region:
      config.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
    forcePathStyle: config.forcePathStyle,
    ...(config.credentials === undefined ? {} : { credentials: config.credentials }),
    maxAttempts: 1,
    ...(config.userAgent === undefined ? {} : { customUserAgent: config.userAgent }),
    requestChecksumCalculation: config.requestChecksumCalculation,
    responseChecksumValidation: 'WHEN_REQUIRED',
    // The request deadline is the uploader's AbortSignal (one owner, classified as `timeout`);
    // the handler only bounds the connect phase.
    requestHandler: { connectionTimeout: Math.min(config.requestTimeoutMillis, 5_000) },
  });
  return { client, owned: true };
}
