import type { S3MetricExporter, S3MetricExporterOptions } from '../../../src/index.js';
import { type AnyExporter, METRICS, type SignalDriver } from '../signal-driver.js';

/** What the parent passes for childConnection(): one place for the variable names on both sides. */
export function childConnectionEnv(
  endpoint: string | undefined,
  bucket: string,
  server: { accessKeyId: string; secretAccessKey: string } | undefined,
): Record<string, string | undefined> {
  return {
    S3_ENDPOINT: endpoint,
    S3_BUCKET: bucket,
    S3_ACCESS_KEY_ID: server?.accessKeyId,
    S3_SECRET_ACCESS_KEY: server?.secretAccessKey,
  };
}

/** The S3 connection a child process gets from its parent test, through the environment. */
export function childConnection(): {
  bucket: string;
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
} {
  const env = process.env;
  const need = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw new Error(`child process: ${name} is not set`);
    return value;
  };
  return {
    bucket: need('S3_BUCKET'),
    endpoint: need('S3_ENDPOINT'),
    credentials: {
      accessKeyId: need('S3_ACCESS_KEY_ID'),
      secretAccessKey: need('S3_SECRET_ACCESS_KEY'),
    },
  };
}

/**
 * The exporter of a spool child process: on its parent's S3 (childConnection()), under S3_PREFIX,
 * with its spool in SPOOL_DIR, and `options`; of metrics, or of `driver`'s signal.
 */
export function childSpoolExporter(options: Partial<S3MetricExporterOptions>): S3MetricExporter;
export function childSpoolExporter<E extends AnyExporter>(
  options: Partial<S3MetricExporterOptions>,
  driver: SignalDriver<E>,
): E;
export function childSpoolExporter(
  options: Partial<S3MetricExporterOptions>,
  driver: SignalDriver = METRICS,
): AnyExporter {
  return driver.exporter({
    ...childConnection(),
    prefix: process.env.S3_PREFIX as string,
    spoolDir: process.env.SPOOL_DIR as string,
    ...options,
  });
}
