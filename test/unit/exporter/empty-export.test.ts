import { ExportResultCode } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import { captureDiag } from '../../support/diag-capture.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';

captureDiag();

/** An export of one resource and no data points (the SDK's reader skips them; a caller may not). */
const empty = (): ResourceMetrics => ({
  resource: resourceFromAttributes({ 'service.name': 'empty' }),
  scopeMetrics: [],
});

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis));

describe('an export of zero items', () => {
  for (const format of ['otlp-json', 'parquet'] as const) {
    test(`${format}: answered SUCCESS, and no object is made of it`, async () => {
      const s3 = new ScriptedS3();
      const exporter = scriptedExporter(s3, { format });
      const result = await new Promise<{ code: number }>((resolve) =>
        exporter.export(empty(), resolve),
      );
      expect(result.code).toBe(ExportResultCode.SUCCESS);
      await exporter.shutdown();
      expect(s3.attempts).toHaveLength(0);
      expect(exporter.stats()).toMatchObject({ exportsAccepted: 1, batchesSealed: 0 });
    });

    test(`${format}: one of another resource does not seal the open batch`, async () => {
      const s3 = new ScriptedS3();
      const exporter = scriptedExporter(s3, {
        format,
        keyTemplate: '{service.name}/%Y/%m/%d/%H/metrics_{uuid}',
      });
      await exportSynthetic(exporter, 10, 1);
      const result = await new Promise<{ code: number }>((resolve) =>
        exporter.export(empty(), resolve),
      );
      expect(result.code).toBe(ExportResultCode.SUCCESS);
      // Nothing of 'empty' to store: the batch of 'synthetic' stays open.
      expect(exporter.stats().batchesSealed).toBe(0);
      await exporter.shutdown();
      expect(s3.attempts).toHaveLength(1);
      expect(exporter.stats()).toMatchObject({ batchesSealed: 1, batchesUploaded: 1 });
    });

    test(`${format}: it does not start the age clock of the batch the next export opens`, async () => {
      const s3 = new ScriptedS3();
      const exporter = scriptedExporter(s3, { format, maxBatchAgeMillis: 400 });
      await new Promise((resolve) => exporter.export(empty(), resolve));
      await sleep(300);
      await exportSynthetic(exporter, 10, 1);
      // The batch is 200 ms old of its 400: an age timer started by the empty export (due at
      // 400 ms from it) would have sealed it already. A late timer can only seal it later.
      await sleep(200);
      expect(exporter.stats().batchesSealed).toBe(0);
      await exporter.shutdown();
      expect(s3.attempts).toHaveLength(1);
      expect(exporter.stats()).toMatchObject({ batchesSealed: 1, batchesUploaded: 1 });
    });
  }
});
