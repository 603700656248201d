import {
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { S3MetricExporter, type S3MetricExporterOptions } from '../../src/index.js';
import { dataPointRows, readMetrics } from '../../src/reader.js';
import { describeError } from '../../src/s3/errors.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import { collect } from '../support/reader-fixtures.js';
import {
  connection,
  decodeStored,
  describeS3,
  listAndFetch,
  s3Server,
  withS3,
} from '../support/s3.js';
import { sequencedService, syntheticMetrics } from '../support/service.js';

describeS3('S3 features against the real server', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  withS3('features', { kind: 'pass' }, (s) => ({ client, bucket, proxy } = s));

  /** Uploads one collection through the proxy with `options`; returns the key and the request seen. */
  async function uploadOne(prefix: string, options: Partial<S3MetricExporterOptions>) {
    const exporter = new S3MetricExporter({
      bucket,
      prefix,
      ...connection(),
      endpoint: proxy.endpoint,
      ...options,
    });
    const service = sequencedService(exporter);
    await service.exportCollections(1);
    await exporter.forceFlush();
    const stats = exporter.stats();
    await exporter.shutdown();
    await service.shutdown();
    expect(stats.batchesUploaded).toBe(1);
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }),
    );
    const key = listed.Contents?.[0]?.Key as string;
    const put = proxy.putAttempts(key).at(-1);
    if (put === undefined) throw new Error(`no PUT of ${key} seen`);
    return {
      key,
      put,
      head: await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key })),
    };
  }

  const kms = s3Server?.kmsKeyId;
  (kms ? test : test.skip)(
    `SSE-KMS with a key id (${kms ?? 'server has no S3_TEST_KMS_KEY_ID'}): stored encrypted with that key`,
    async () => {
      const { head, put } = await uploadOne('sse-kms', {
        serverSideEncryption: 'aws:kms',
        sseKmsKeyId: kms as string,
      });
      expect(put.headers['x-amz-server-side-encryption']).toBe('aws:kms');
      expect(head.ServerSideEncryption).toBe('aws:kms');
      expect(head.SSEKMSKeyId).toBe(kms);
    },
  );

  /**
   * Whether the server takes SSE-S3 at all (a plain Ceph RGW or MinIO without a KMS refuses
   * it): a direct PutObject with AES256, outside the exporter. Undefined if it does, else why not.
   */
  async function sseS3Unsupported(): Promise<string | undefined> {
    try {
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'probe/sse-s3',
          Body: 'probe',
          ServerSideEncryption: 'AES256',
        }),
      );
      return undefined;
    } catch (error) {
      return `the server refuses SSE-S3 itself (${describeError(error)})`;
    }
  }

  test('SSE-S3 (AES256): requested on every PUT and accepted', async (ctx) => {
    const unsupported = await sseS3Unsupported();
    if (unsupported !== undefined) ctx.skip(unsupported);
    const { head, put } = await uploadOne('sse-s3', { serverSideEncryption: 'AES256' });
    expect(put.headers['x-amz-server-side-encryption']).toBe('AES256');
    // Ceph RGW 16 accepts AES256 but does not report it back; servers that do must say AES256.
    if (head.ServerSideEncryption !== undefined) expect(head.ServerSideEncryption).toBe('AES256');
  });

  test('storage class, tags and metadata are set on the object', async () => {
    const { key, head, put } = await uploadOne('tagged', {
      storageClass: 'STANDARD',
      tags: { env: 'prod', team: 'platform + obs/1' },
      metadata: { service: 'checkout', 'exporter-version': '0.1.0' },
    });
    expect(put.headers['x-amz-storage-class']).toBe('STANDARD');
    expect(head.StorageClass ?? 'STANDARD').toBe('STANDARD');
    expect(head.Metadata).toEqual({ service: 'checkout', 'exporter-version': '0.1.0' });
    const tagging = await client.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }));
    expect(tagging.TagSet?.map((t) => [t.Key, t.Value]).sort()).toEqual([
      ['env', 'prod'],
      ['team', 'platform + obs/1'],
    ]);
  });

  test('a custom user agent is sent by the exporter client', async () => {
    const { put } = await uploadOne('user-agent', { userAgent: 'acme-metrics/2.3' });
    expect(String(put.headers['user-agent'])).toContain('acme-metrics/2.3');
  });

  test('requestChecksumCalculation: WHEN_SUPPORTED sends a CRC32 checksum, WHEN_REQUIRED (the default with an endpoint) does not; both store', async () => {
    const supported = await uploadOne('checksum-supported', {
      requestChecksumCalculation: 'WHEN_SUPPORTED',
    });
    expect(supported.put.headers['x-amz-checksum-crc32']).toBeDefined();
    const required = await uploadOne('checksum-required', {});
    expect(required.put.headers['x-amz-checksum-crc32']).toBeUndefined();
  });

  for (const [status, code] of [
    [501, 'NotImplemented'],
    [400, 'InvalidArgument'],
  ] as const) {
    test(`conditional writes are on by default; a server that answers ${status} to them gets plain PUTs from then on and loses nothing`, async () => {
      const on = await uploadOne(`conditional-on-${status}`, {});
      expect(on.put.ifNoneMatch).toBe('*');

      await proxy.set({ kind: 'reject-conditional', status, code });
      try {
        const exporter = new S3MetricExporter({
          bucket,
          prefix: `conditional-${status}`,
          ...connection(),
          endpoint: proxy.endpoint,
        });
        const service = sequencedService(exporter);
        await service.exportCollections(1);
        await exporter.forceFlush();
        await service.exportCollections(1);
        await exporter.shutdown();
        await service.shutdown();
        const puts = proxy
          .uploadAttempts()
          .filter((p) => p.key.startsWith(`conditional-${status}/`));
        // The first batch: refused with the header, stored without it; the second: plain at once.
        expect(puts.map((p) => [p.ifNoneMatch ?? 'none', p.outcome])).toEqual([
          ['*', `status ${status}`],
          ['none', 'upstream 200'],
          ['none', 'upstream 200'],
        ]);
        expect(exporter.stats().pointsDropped).toBe(0);
        expect(exporter.stats().batchesUploaded).toBe(2);
      } finally {
        await proxy.set({ kind: 'pass' });
      }
    });
  }

  test('a 501 that is not about If-None-Match (it comes without the header too) keeps conditional writes on', async () => {
    await proxy.set({ kind: 'status', status: 501, code: 'NotImplemented' });
    const exporter = new S3MetricExporter({
      bucket,
      prefix: 'not-the-header',
      ...connection(),
      endpoint: proxy.endpoint,
    });
    const service = sequencedService(exporter);
    try {
      await service.exportCollections(1);
      await exporter.forceFlush();
    } finally {
      await proxy.set({ kind: 'pass' });
    }
    await service.exportCollections(1);
    await exporter.shutdown();
    await service.shutdown();
    const puts = proxy.uploadAttempts().filter((p) => p.key.startsWith('not-the-header/'));
    expect(puts.map((p) => [p.ifNoneMatch ?? 'none', p.outcome])).toEqual([
      ['*', 'status 501'],
      ['none', 'status 501'],
      ['*', 'upstream 200'],
    ]);
    expect(exporter.stats().pointsDroppedByReason.rejected).toBeGreaterThan(0);
  });

  test('a key template with an attribute last in the name: the reader reads the objects back', async () => {
    const keyTemplate = 'year=%Y/month=%m/metrics_{uuid}_{service.name}';
    const exporter = new S3MetricExporter({
      bucket,
      prefix: 'attribute-last',
      ...connection(),
      keyTemplate,
    });
    const service = sequencedService(exporter);
    await service.exportCollections(1);
    await exporter.shutdown();
    await service.shutdown();
    const stored = await listAndFetch(client, bucket, 'attribute-last/');
    expect(stored.map((o) => o.key)).toEqual([
      expect.stringMatching(
        /^attribute-last\/year=\d{4}\/month=\d\d\/metrics_[0-9a-f-]{36}_sequenced\.json\.zst$/,
      ),
    ]);
    const read = await collect(
      readMetrics({ bucket, prefix: 'attribute-last', ...connection(), keyTemplate }),
    );
    expect(read.map((o) => o.key)).toEqual(stored.map((o) => o.key));
    expect(read[0]?.encoding).toEqual({ format: 'otlp-json', compression: 'zstd' });
    expect(dataPointRows(read[0]?.request ?? {}).some((r) => r.metric === 'collection.seq')).toBe(
      true,
    );
  });

  test("partitionTime 'data' with data times ahead of the clock: a range holding the seal time reads the object", async () => {
    // A producer whose clock runs two hours ahead: its points end after the batch is sealed.
    const ahead = Date.now() + 2 * 3_600_000;
    const metrics = syntheticMetrics(3, 1);
    const time: [number, number] = [Math.floor(ahead / 1000), (ahead % 1000) * 1_000_000];
    for (const point of metrics.scopeMetrics[0]?.metrics[0]?.dataPoints ?? []) {
      Object.assign(point, { startTime: time, endTime: time });
    }
    const from = new Date();
    const exporter = new S3MetricExporter({
      bucket,
      prefix: 'data-ahead',
      ...connection(),
      partitionTime: 'data',
    });
    const result = await new Promise<{ code: number }>((resolve) =>
      exporter.export(metrics, resolve),
    );
    await exporter.shutdown();
    const to = new Date(Date.now() + 1);
    expect(result.code).toBe(0);
    const stored = await listAndFetch(client, bucket, 'data-ahead/');
    expect(stored).toHaveLength(1);
    const read = await collect(
      readMetrics({
        bucket,
        prefix: 'data-ahead',
        ...connection(),
        partitionTime: 'data',
        from,
        to,
      }),
    );
    // Its seal time (the UUIDv7) is in [from, to): the object is the range's.
    expect(read.map((o) => o.key)).toEqual(stored.map((o) => o.key));
    expect(read[0]?.time.getTime()).toBeGreaterThanOrEqual(from.getTime());
  });

  test('a key template with resource attributes stores each service under its own, sanitized path', async () => {
    const exporter = new S3MetricExporter({
      bucket,
      prefix: 'templated',
      ...connection(),
      keyTemplate: '{service.name}/%Y/%m/%d/metrics_{uuid}',
    });
    const service = sequencedService(exporter);
    await service.exportCollections(1);
    await exporter.shutdown();
    await service.shutdown();
    const objects = await listAndFetch(client, bucket, 'templated/');
    expect(objects).toHaveLength(1);
    const now = new Date();
    const day = `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}/${String(now.getUTCDate()).padStart(2, '0')}`;
    expect(objects[0]?.key).toMatch(
      new RegExp(`^templated/sequenced/${day}/metrics_[0-9a-f-]{36}\\.json\\.zst$`),
    );
    expect(
      dataPointRows(decodeStored(objects[0] as never)).some((r) => r.metric === 'collection.seq'),
    ).toBe(true);
  });
});
