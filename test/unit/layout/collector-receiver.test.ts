import { describe, expect, test } from 'vitest';
import { S3MetricExporter, type S3MetricExporterOptions } from '../../../src/index.js';
import { uuidv7Millis } from '../../../src/layout/key-template.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic } from '../../support/service.js';

/**
 * The OpenTelemetry Collector's awss3receiver, as its source reads objects: for each minute
 * (s3_partition: minute) or hour (hour) of the range it lists
 * `{s3_prefix}/year=%d/month=%02d/day=%02d/hour=%02d[/minute=%02d]/{file_prefix}metrics_`,
 * gunzips keys ending in `.gz` (and drops that suffix), then decodes `.json` as OTLP/JSON and
 * `.binpb` as OTLP protobuf; anything else is skipped as "Unsupported file format".
 */
function receiverReads(
  key: string,
  config: { s3Prefix: string; filePrefix: string; partition: 'minute' | 'hour' },
  time: Date,
): boolean {
  const two = (n: number) => String(n).padStart(2, '0');
  const t = time;
  let timeKey = `year=${t.getUTCFullYear()}/month=${two(t.getUTCMonth() + 1)}/day=${two(t.getUTCDate())}/hour=${two(t.getUTCHours())}`;
  if (config.partition === 'minute') timeKey += `/minute=${two(t.getUTCMinutes())}`;
  const listed = `${config.s3Prefix === '' ? '' : `${config.s3Prefix}/`}${timeKey}/${config.filePrefix}metrics_`;
  if (!key.startsWith(listed)) return false;
  const name = key.endsWith('.gz') ? key.slice(0, -3) : key;
  return name.endsWith('.json') || name.endsWith('.binpb');
}

async function keyWritten(options: Partial<S3MetricExporterOptions>): Promise<string> {
  const s3 = new ScriptedS3();
  const exporter = new S3MetricExporter({ bucket: 'b', s3Client: s3.client, ...options });
  await exportSynthetic(exporter, 3, 1);
  await exporter.shutdown();
  const [key] = s3.stored.keys();
  if (key === undefined) throw new Error('nothing stored');
  return key;
}

/** The partition time of a key: its batch's seal time, the UUIDv7's. */
const sealTime = (key: string) =>
  new Date(uuidv7Millis(/metrics_([0-9a-f-]{36})/.exec(key)?.[1] ?? ''));

describe("the Collector's awss3receiver reads what these settings write", () => {
  for (const format of ['otlp-json', 'otlp-proto'] as const) {
    for (const compression of ['gzip', 'none'] as const) {
      test(`${format} + ${compression}, default layout: read with s3_partition: minute`, async () => {
        const key = await keyWritten({
          format,
          compression,
          prefix: 'prod/app',
          filePrefix: 'host1_',
        });
        expect(key).toMatch(/\.(json|binpb)(\.gz)?$/);
        const config = { s3Prefix: 'prod/app', filePrefix: 'host1_', partition: 'minute' } as const;
        expect(receiverReads(key, config, sealTime(key))).toBe(true);
        // Its hour listing does not reach into the minute directories.
        expect(receiverReads(key, { ...config, partition: 'hour' }, sealTime(key))).toBe(false);
      });
    }
  }

  test('an hour layout (keyTemplate without minute=) is read with s3_partition: hour', async () => {
    const key = await keyWritten({
      compression: 'gzip',
      prefix: 'p',
      keyTemplate: 'year=%Y/month=%m/day=%d/hour=%H/{filePrefix}metrics_{uuid}',
    });
    expect(
      receiverReads(key, { s3Prefix: 'p', filePrefix: '', partition: 'hour' }, sealTime(key)),
    ).toBe(true);
  });

  test('the default zstd objects are skipped by it ("Unsupported file format")', async () => {
    const key = await keyWritten({ prefix: 'p' });
    expect(key).toMatch(/\.json\.zst$/);
    expect(
      receiverReads(key, { s3Prefix: 'p', filePrefix: '', partition: 'minute' }, sealTime(key)),
    ).toBe(false);
  });
});
