/**
 * The baseline of the shutdown benchmark: an exporter built the way that hangs shutdowns.
 * export() takes a lock, serializes (official JSON serializer), compresses with zstd and awaits
 * PutObject inside the lock; forceFlush() and shutdown() wait for the lock. S3 client defaults:
 * no request timeout, the SDK's own retries.
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { JsonMetricsSerializer } from '@opentelemetry/otlp-transformer';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { Mutex } from 'async-mutex';
import { compress } from 'zstd-napi';

export interface LockedExporterOptions {
  endpoint: string;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export class LockedUploadExporter implements PushMetricExporter {
  readonly #mutex = new Mutex();
  readonly #client: S3Client;
  readonly #bucket: string;
  #seq = 0;

  constructor(options: LockedExporterOptions) {
    this.#bucket = options.bucket;
    this.#client = new S3Client({
      endpoint: options.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: options.credentials,
    });
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.#mutex
      .runExclusive(async () => {
        const body = compress(JsonMetricsSerializer.serializeRequest(metrics) ?? new Uint8Array());
        await this.#client.send(
          new PutObjectCommand({
            Bucket: this.#bucket,
            Key: `locked/metrics-${++this.#seq}.json.zst`,
            Body: body,
          }),
        );
      })
      .then(
        () => resultCallback({ code: ExportResultCode.SUCCESS }),
        (error: unknown) =>
          resultCallback({
            code: ExportResultCode.FAILED,
            error: error instanceof Error ? error : new Error(String(error)),
          }),
      );
  }

  forceFlush(): Promise<void> {
    return this.#mutex.waitForUnlock();
  }

  shutdown(): Promise<void> {
    return this.#mutex.runExclusive(() => this.#client.destroy());
  }
}
