import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { InvalidOptionError, S3Exporters } from '../../../src/index.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';

/** The bucket from the environment, as a service sets it, so that per-signal variables count. */
function group(s3: ScriptedS3): S3Exporters {
  return new S3Exporters({
    s3Client: s3.client,
    compression: 'none',
    maxBatchAgeMillis: 3_600_000, // nothing is sealed by age while the test runs
  });
}

describe('S3Exporters', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    process.env.OTEL_EXPORTER_S3_BUCKET = 'unit';
  });
  afterEach(() => {
    process.env = { ...saved };
  });

  test("forceFlush() stores the spans a TracerProvider's forceFlush() leaves in the exporter", async () => {
    const s3 = new ScriptedS3();
    const s3Exporters = group(s3);
    const exporter = s3Exporters.spanExporter();
    const provider = new TracerProvider({
      spanProcessors: [new BatchSpanProcessor({ exporter })],
    });
    provider.getTracer('unit').startSpan('checkout').end();
    await provider.forceFlush();
    expect([...s3.stored.keys()]).toEqual([]); // the SDK's flush handed the span over, no more
    await s3Exporters.forceFlush();
    const keys = [...s3.stored.keys()];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/\/traces_[0-9a-f-]{36}\.json$/);
    expect(exporter.stats().pointsUploaded).toBe(1);
    await provider.shutdown();
  });

  test('one exporter per signal: a second is refused, naming the signal', () => {
    const s3Exporters = group(new ScriptedS3());
    const first = s3Exporters.logRecordExporter();
    expect(() => s3Exporters.logRecordExporter()).toThrow(InvalidOptionError);
    expect(() => s3Exporters.logRecordExporter()).toThrow(
      /signal.*logs.*one logs exporter per S3Exporters/,
    );
    void first.shutdown();
  });

  test('a variable for one signal cannot move its exporter off the group connection', () => {
    process.env.OTEL_EXPORTER_S3_TRACES_BUCKET = 'elsewhere';
    const s3Exporters = group(new ScriptedS3());
    expect(() => s3Exporters.spanExporter()).toThrow(
      /bucket.*elsewhere.*the same value for every exporter of an S3Exporters \(unit\)/,
    );
  });
});
