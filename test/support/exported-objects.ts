import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { Compression, Format } from '../../src/index.js';
import { S3MetricExporter } from '../../src/index.js';
import { COMPRESSIONS, FORMATS } from './reader-fixtures.js';
import { connection } from './s3.js';
import { recordEveryInstrument, recordingProvider } from './service.js';

export interface Exported {
  service: string;
  format: Format;
  compression: Compression;
  /** The collection the SDK handed to the exporter: what the object must hold. */
  recorded: ResourceMetrics;
}

/**
 * Writes one object per format and compression under `prefix` with the exporter itself, each
 * holding one recordEveryInstrument() collection from the service `svc-{format}-{compression}`.
 * One after the other, so their UUIDv7 times differ.
 */
export async function exportEveryCombination(
  bucket: string,
  prefix: string,
  combinations: readonly [Format, Compression][] = FORMATS.flatMap((f) =>
    COMPRESSIONS.map((c): [Format, Compression] => [f, c]),
  ),
): Promise<Exported[]> {
  const out: Exported[] = [];
  for (const [format, compression] of combinations) {
    const service = `svc-${format}-${compression}`;
    const exporter = new S3MetricExporter({ bucket, prefix, format, compression, ...connection() });
    const { provider, exported } = recordingProvider(exporter, service);
    recordEveryInstrument(provider);
    await new Promise((resolve) => setTimeout(resolve, 5)); // start and end times differ
    await provider.shutdown(); // collects, exports and uploads once
    const { batchesUploaded, pointsDropped } = exporter.stats();
    const [recorded] = exported;
    if (batchesUploaded !== 1 || pointsDropped !== 0 || recorded === undefined) {
      throw new Error(
        `${service}: expected one object stored, got ${JSON.stringify(exporter.stats())}`,
      );
    }
    out.push({ service, format, compression, recorded });
  }
  return out;
}
