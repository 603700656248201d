import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { S3MetricExporter } from '../../src/index.js';
import { expectStoredAsRecorded, listAndFetch } from '../support/s3.js';
import { dockerAvailable, type RunningS3Server, startMinio } from '../support/s3-server.js';
import { recordEveryInstrument, recordingProvider } from '../support/service.js';

/**
 * MinIO in a container (testcontainers), whatever server the rest of the suite uses: it runs
 * wherever a Docker engine answers, and is reported as skipped, with the reason, elsewhere.
 */
const docker = await dockerAvailable();
if (!docker)
  console.warn(
    'MinIO tests skipped: no Docker engine answers (testcontainers found no container runtime)',
  );

describe.skipIf(!docker)('MinIO through testcontainers', () => {
  let minio: RunningS3Server;
  let client: S3Client;
  beforeAll(async () => {
    minio = await startMinio();
    const i = minio.info;
    client = new S3Client({
      endpoint: i.endpoint,
      region: i.region,
      forcePathStyle: true,
      credentials: { accessKeyId: i.accessKeyId, secretAccessKey: i.secretAccessKey },
    });
    await client.send(new CreateBucketCommand({ Bucket: 'metrics' }));
  }, 180_000);
  afterAll(async () => {
    client?.destroy();
    await minio?.stop();
  });

  for (const format of ['otlp-json', 'otlp-proto'] as const) {
    test(`${format}: every instrument type stored with the recorded values`, async () => {
      const i = minio.info;
      const exporter = new S3MetricExporter({
        bucket: 'metrics',
        prefix: format,
        format,
        endpoint: i.endpoint,
        region: i.region,
        credentials: { accessKeyId: i.accessKeyId, secretAccessKey: i.secretAccessKey },
      });
      const { provider, exported } = recordingProvider(exporter);
      recordEveryInstrument(provider);
      await provider.forceFlush();
      const objects = await listAndFetch(client, 'metrics', `${format}/`);
      await provider.shutdown();
      // The assertion end-to-end.test.ts makes against the suite's server: every value, time,
      // attribute and name of the exported collection, read by decoders independent of src/.
      expect(objects).toHaveLength(1);
      expectStoredAsRecorded(objects, exported.slice(0, 1));
    });
  }
});
