import type { S3MetricExporter, S3MetricExporterOptions } from '../../src/index.js';
import type { ScriptedS3 } from './scripted-s3.js';
import { type AnyExporter, METRICS, type SignalDriver } from './signal-driver.js';

/**
 * An exporter that stores into the scripted S3 `s3`: bucket `unit` unless `options` says; of
 * metrics, or of `driver`'s signal.
 */
export function scriptedExporter(
  s3: ScriptedS3,
  options?: Partial<S3MetricExporterOptions>,
): S3MetricExporter;
export function scriptedExporter<E extends AnyExporter>(
  s3: ScriptedS3,
  options: Partial<S3MetricExporterOptions>,
  driver: SignalDriver<E>,
): E;
export function scriptedExporter(
  s3: ScriptedS3,
  options: Partial<S3MetricExporterOptions> = {},
  driver: SignalDriver = METRICS,
): AnyExporter {
  return driver.exporter({ bucket: 'unit', s3Client: s3.client, ...options });
}
