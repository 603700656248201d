/**
 * A forceFlush() that comes while the exporter shuts down (the group's, say, beside one signal's
 * shutdown()) waits for that shutdown: the shutdown alone decides and reports what is left, so
 * no "keep retrying in the background" warning stands beside its "dropped".
 */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { S3Exporters } from '../../../src/index.js';
import { captureDiag } from '../../support/diag-capture.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportTagged, TRACES } from '../../support/signal-driver.js';

const logged = captureDiag();

const saved = process.env.OTEL_EXPORTER_S3_BUCKET;
beforeEach(() => {
  process.env.OTEL_EXPORTER_S3_BUCKET = 'unit';
});
afterEach(() => {
  if (saved === undefined) delete process.env.OTEL_EXPORTER_S3_BUCKET;
  else process.env.OTEL_EXPORTER_S3_BUCKET = saved;
});

test("the group's forceFlush() during a signal's shutdown() reports nothing of its own", async () => {
  // Access denied: a configuration fault, so both the shutdown and the flush stop waiting at once.
  const s3 = new ScriptedS3().script([], { kind: 'status', status: 403, name: 'AccessDenied' });
  const s3Exporters = new S3Exporters({
    s3Client: s3.client,
    compression: 'none',
    maxBatchAgeMillis: 3_600_000,
    requestTimeoutMillis: 60_000,
    flushTimeoutMillis: 200,
  });
  const spans = s3Exporters.spanExporter();
  try {
    await exportTagged(TRACES, spans, 2, 1);
    const shutdown = spans.shutdown();
    await s3Exporters.forceFlush();
    await shutdown;
    expect(logged.filter((l) => /forceFlush\(\)/.test(l.text))).toEqual([]);
    expect(spans.stats().pointsDroppedByReason).toEqual({ shutdown: 2 });
    expect(logged).toContainEqual({
      level: 'error',
      text: expect.stringMatching(
        /traces exporter: shutdown\(\): every pending batch is blocked.*dropped/,
      ),
    });
  } finally {
    s3.release();
    await spans.shutdown();
  }
});
