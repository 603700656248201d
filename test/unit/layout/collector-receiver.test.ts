import { describe, expect, test } from 'vitest';
import type { S3MetricExporterOptions } from '../../../src/index.js';
import { uuidv7Millis } from '../../../src/layout/key-template.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportTagged, METRICS, SIGNALS, type SignalDriver } from '../../support/signal-driver.js';

/**
 * The OpenTelemetry Collector's awss3receiver, as its source reads objects: in a pipeline of one
 * telemetry type (`metrics`, `traces` or `logs`), for each minute (s3_partition: minute) or hour
 * (hour) of the range it lists
 * `{s3_prefix}/year=%d/month=%02d/day=%02d/hour=%02d[/minute=%02d]/{file_prefix}{type}_`,
 * gunzips keys ending in `.gz` (and drops that suffix), then decodes `.json` as OTLP/JSON and
 * `.binpb` as OTLP protobuf; anything else is skipped as "Unsupported file format".
 */
function receiverReads(
  key: string,
  config: {
    s3Prefix: string;
    filePrefix: string;
    partition: 'minute' | 'hour';
    type?: 'metrics' | 'traces' | 'logs';
  },
  time: Date,
): boolean {
  const two = (n: number) => String(n).padStart(2, '0');
  const t = time;
  let timeKey = `year=${t.getUTCFullYear()}/month=${two(t.getUTCMonth() + 1)}/day=${two(t.getUTCDate())}/hour=${two(t.getUTCHours())}`;
  if (config.partition === 'minute') timeKey += `/minute=${two(t.getUTCMinutes())}`;
  const listed = `${config.s3Prefix === '' ? '' : `${config.s3Prefix}/`}${timeKey}/${config.filePrefix}${config.type ?? 'metrics'}_`;
  if (!key.startsWith(listed)) return false;
  const name = key.endsWith('.gz') ? key.slice(0, -3) : key;
  return name.endsWith('.json') || name.endsWith('.binpb');
}

/** The key of the one object an exporter (of metrics, or of `driver`'s signal) writes. */
async function keyWritten(
  options: Partial<S3MetricExporterOptions>,
  driver: SignalDriver = METRICS,
): Promise<string> {
  const s3 = new ScriptedS3();
  const exporter = driver.exporter({ bucket: 'b', s3Client: s3.client, ...options });
  await exportTagged(driver, exporter, 3, 1);
  await exporter.shutdown();
  const [key] = s3.stored.keys();
  if (key === undefined) throw new Error('nothing stored');
  return key;
}

/** The partition time of a key: its batch's seal time, the UUIDv7's. */
const sealTime = (key: string) =>
  new Date(uuidv7Millis(/(?:metrics|traces|logs)_([0-9a-f-]{36})/.exec(key)?.[1] ?? ''));

describe("the Collector's awss3receiver reads what these settings write", () => {
  for (const driver of SIGNALS) {
    const type = driver.signal;
    for (const format of ['otlp-json', 'otlp-proto'] as const) {
      for (const compression of ['gzip', 'none'] as const) {
        test(`${type}, ${format} + ${compression}, default layout: read by its ${type} pipeline with s3_partition: minute, and by no other`, async () => {
          const key = await keyWritten(
            { format, compression, prefix: 'prod/app', filePrefix: 'host1_' },
            driver,
          );
          expect(key).toMatch(/\.(json|binpb)(\.gz)?$/);
          const config = {
            s3Prefix: 'prod/app',
            filePrefix: 'host1_',
            partition: 'minute',
            type,
          } as const;
          expect(receiverReads(key, config, sealTime(key))).toBe(true);
          // Its hour listing does not reach into the minute directories.
          expect(receiverReads(key, { ...config, partition: 'hour' }, sealTime(key))).toBe(false);
          // One tree for three signals: the pipelines of the other types do not list it.
          for (const other of SIGNALS.filter((d) => d !== driver)) {
            expect(receiverReads(key, { ...config, type: other.signal }, sealTime(key))).toBe(
              false,
            );
          }
        });
      }
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

  for (const driver of SIGNALS) {
    test(`${driver.signal}: the default zstd objects are skipped by it ("Unsupported file format")`, async () => {
      const key = await keyWritten({ prefix: 'p' }, driver);
      expect(key).toMatch(/\.json\.zst$/);
      const config = { s3Prefix: 'p', filePrefix: '', type: driver.signal } as const;
      expect(receiverReads(key, { ...config, partition: 'minute' }, sealTime(key))).toBe(false);
    });
  }
});
