import {
  type ExporterStats,
  S3MetricExporter,
  type S3MetricExporterOptions,
} from '../../src/index.js';
import type { ProcessWarning } from './diag-capture.js';
import { exportSynthetic } from './service.js';
import { waitFor } from './wait.js';

/**
 * An exporter whose every upload fails alike, run until its first failed attempt: a batch a
 * point, quick retries, short flushes, no compression (`options` add to or override these). Its
 * stats at that moment and the texts of the process warnings of `code` recorded in `warnings`
 * (recordProcessWarnings) by then; the exporter is shut down either way.
 */
export async function firstUploadFailure(
  options: Partial<S3MetricExporterOptions>,
  warnings: readonly ProcessWarning[],
  code: string,
): Promise<{ stats: ExporterStats; alerts: string[] }> {
  const exporter = new S3MetricExporter({
    bucket: 'metrics',
    compression: 'none',
    maxBatchBytes: 1,
    flushTimeoutMillis: 300,
    retry: { initialDelayMillis: 5, maxDelayMillis: 20 },
    ...options,
  });
  try {
    await exportSynthetic(exporter, 5, 1);
    await waitFor(
      () => Object.keys(exporter.stats().uploadFailures).length > 0,
      10_000,
      'a failed attempt',
    );
    const alerts = warnings.filter((w) => w.code === code).map((w) => w.text);
    return { stats: exporter.stats(), alerts };
  } finally {
    await exporter.shutdown();
  }
}
