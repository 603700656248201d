import { S3MetricExporter, type S3MetricExporterOptions } from '../../src/index.js';
import type { ScriptedS3 } from './scripted-s3.js';

/**
 * An exporter on a scripted S3 with its spool in `dir`, paced for unit tests: batches sealed
 * after 10 ms, retries within 50 ms, requests abandoned after 100 ms, no compression (bodies stay
 * readable on disk).
 */
export function spoolExporter(
  s3: ScriptedS3,
  dir: string,
  options: Partial<S3MetricExporterOptions> = {},
): S3MetricExporter {
  return new S3MetricExporter({
    bucket: 'unit',
    s3Client: s3.client,
    compression: 'none',
    spoolDir: dir,
    maxBatchAgeMillis: 10,
    retry: { initialDelayMillis: 1, maxDelayMillis: 50 },
    requestTimeoutMillis: 100,
    flushTimeoutMillis: 1_000,
    ...options,
  });
}
