import type { S3Client } from '@aws-sdk/client-s3';
import { ExportResultCode } from '@opentelemetry/core';
import { expect, test } from 'vitest';
import { S3Exporters } from '../../src/index.js';
import { connection, describeS3, listAndFetch, withS3 } from '../support/s3.js';
import { tagsIn } from '../support/scripted-s3.js';
import { exportTagged, LOGS, METRICS, TRACES } from '../support/signal-driver.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

describeS3('S3Exporters: one signal shut down while the others go on', () => {
  let client: S3Client;
  let bucket: string;
  withS3('group-lifecycle', (s) => ({ client, bucket } = s));

  test("the others keep the group's connection, queue and spool until the last one leaves", async () => {
    const dir = await makeTempDir('otel-s3-group-lifecycle-');
    try {
      const group = new S3Exporters({
        ...connection(),
        bucket,
        prefix: 'one-down',
        spoolDir: dir,
        compression: 'none',
        maxBatchAgeMillis: 3_600_000,
        flushTimeoutMillis: 5_000,
      });
      const metrics = group.metricExporter();
      const spans = group.spanExporter();
      const logs = group.logRecordExporter();
      await exportTagged(TRACES, spans, 2, 1);
      await Promise.all([spans.shutdown(), spans.shutdown()]);
      expect(spans.stats().pointsUploaded).toBe(2);
      // After the spans' shutdown, the two others export through the same connection.
      expect((await exportTagged(METRICS, metrics, 3, 2)).code).toBe(ExportResultCode.SUCCESS);
      expect((await exportTagged(LOGS, logs, 4, 3)).code).toBe(ExportResultCode.SUCCESS);
      await group.forceFlush(); // the spans' exporter, shut down, is passed over
      expect(metrics.stats().pointsUploaded).toBe(3);
      expect(logs.stats().pointsUploaded).toBe(4);
      // The metrics' shutdown races the logs' flush of a new export.
      expect((await exportTagged(LOGS, logs, 5, 4)).code).toBe(ExportResultCode.SUCCESS);
      await Promise.all([metrics.shutdown(), logs.forceFlush(), group.forceFlush()]);
      expect(logs.stats().pointsUploaded).toBe(9);
      expect((await exportTagged(LOGS, logs, 6, 5)).code).toBe(ExportResultCode.SUCCESS);
      await logs.shutdown();
      expect(logs.stats().pointsUploaded).toBe(15);
      for (const e of [metrics, spans, logs]) {
        expect(e.stats().pointsDropped).toBe(0);
        expect(e.stats().uploadFailures).toEqual({});
      }
      const objects = await listAndFetch(client, bucket, 'one-down/');
      const data = objects.filter((o) => !o.key.includes('_otel_s3_check'));
      const tags = data.flatMap((o) => tagsIn(o.key, o.bytes)).sort((a, b) => a - b);
      expect(tags).toEqual([1, 1, 2, 2, 2, 3, 3, 3, 3, ...Array(5).fill(4), ...Array(6).fill(5)]);
    } finally {
      await removeDir(dir);
    }
  });
});
