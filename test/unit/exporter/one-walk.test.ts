import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import { type Format, S3MetricExporter } from '../../../src/index.js';
import { sampleMetrics } from '../../support/reader-fixtures.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';

/**
 * An export whose metrics count how often their first data point is read: each walk over the
 * points on the service's thread reads it once (a length alone is no walk).
 */
function counted(rm: ResourceMetrics): { rm: ResourceMetrics; walks: () => number } {
  let reads = 0;
  const metrics = rm.scopeMetrics.flatMap((sm) => sm.metrics);
  for (const metric of metrics) {
    const points = new Proxy(metric.dataPoints, {
      get(target, property, receiver) {
        if (property === '0') reads++;
        return Reflect.get(target, property, receiver);
      },
    });
    Object.defineProperty(metric, 'dataPoints', { value: points });
  }
  return { rm, walks: () => reads / metrics.length };
}

describe("an export is walked once on the caller's thread", () => {
  for (const format of ['otlp-json', 'otlp-proto', 'parquet'] as const satisfies Format[]) {
    for (const partitionTime of ['upload', 'data'] as const) {
      test(`${format}, partitionTime '${partitionTime}'`, async () => {
        const exporter = new S3MetricExporter({
          bucket: 'unit',
          s3Client: new ScriptedS3().client,
          format,
          partitionTime,
          compression: 'none',
        });
        // A first export loads the Parquet builders; the one counted is the second. Every kind
        // of instrument: a histogram's buckets are points to walk too.
        const first = await sampleMetrics('svc');
        await new Promise((resolve) => exporter.export(first, resolve));
        const { rm, walks } = counted(await sampleMetrics('svc'));
        await new Promise((resolve) => exporter.export(rm, resolve));
        expect(walks()).toBe(1);
        await exporter.shutdown();
      });
    }
  }
});
