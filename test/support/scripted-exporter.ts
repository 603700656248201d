import { S3MetricExporter, type S3MetricExporterOptions } from '../../src/index.js';
import type { ScriptedS3 } from './scripted-s3.js';

/** An exporter that stores into the scripted S3 `s3`: bucket `unit` unless `options` says. */
export function scriptedExporter(
  s3: ScriptedS3,
  options: Partial<S3MetricExporterOptions> = {},
): S3MetricExporter {
  return new S3MetricExporter({ bucket: 'unit', s3Client: s3.client, ...options });
}
