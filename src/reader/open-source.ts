import { dirSource } from './dir-source.js';
import type { ListObjectsOptions } from './read-options.js';
import { s3Source } from './s3-source.js';
import type { ObjectSource } from './source.js';

/** The source the options name. Call after resolveRange. */
export function openSource(options: ListObjectsOptions): ObjectSource {
  if (options.dir !== undefined) return dirSource(options.dir);
  return s3Source(options.bucket, {
    region: options.region,
    endpoint: options.endpoint,
    forcePathStyle: options.forcePathStyle,
    credentials: options.credentials,
    s3Client: options.s3Client,
    requestChecksumCalculation: options.requestChecksumCalculation,
    responseChecksumValidation: options.responseChecksumValidation,
  });
}
