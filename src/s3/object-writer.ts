import type { PutObjectCommandInput } from '@aws-sdk/client-s3';

/** Fixed PutObject fields: encryption, storage class, tags, metadata. */
export type PutObjectFields = Pick<
  PutObjectCommandInput,
  'ServerSideEncryption' | 'SSEKMSKeyId' | 'StorageClass' | 'Tagging' | 'Metadata'
>;

/** One PutObject attempt, as the uploader asks for it. */
export interface PutRequest {
  key: string;
  body: Buffer;
  contentType: string;
  /** Adds `If-None-Match: *`: the write fails with 412 if the key exists. */
  ifNoneMatch: boolean;
  /** Base64 CRC32 of the body, sent as `x-amz-checksum-crc32`. */
  crc32: string | undefined;
  /** Hex SHA-256 of the body, computed off the event loop, for SigV4's payload hash. */
  sha256: string | undefined;
  /**
   * Base64 MD5 sent as `Content-MD5`. The startup check sends a wrong one on purpose: the server
   * checks the signature, the bucket and the permission first, then refuses the body (400
   * BadDigest) and stores nothing.
   */
  contentMd5?: string;
  /**
   * The request must not keep the process alive: its connection is its own and unref'd (the
   * startup check). Honoured by the exporter's own signed requests; an AWS SDK client's
   * connections are the client's.
   */
  background?: boolean;
  signal: AbortSignal;
}

/** What a stored PutObject was answered with. */
export interface PutAnswer {
  /** The ETag header every S3 API sends with a stored object; undefined when none came. */
  etag: string | undefined;
}

/**
 * Stores objects in one bucket. A failure rejects with an error shaped like the AWS SDK's
 * (`name` = S3 error code, `$metadata.httpStatusCode`, `$response.headers`) or Node's network
 * error, which classifyUploadError reads.
 */
export interface ObjectWriter {
  put(request: PutRequest): Promise<PutAnswer>;
  /** Closes the writer's connections; the caller's own client is left alone. */
  destroy(): void;
}
