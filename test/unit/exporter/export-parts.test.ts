import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { expect, test } from 'vitest';
import { Admission } from '../../../src/pipeline/admission.js';
import { captureDiag } from '../../support/diag-capture.js';
import { handBuiltSpan } from '../../support/readable-span.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { TRACES } from '../../support/signal-driver.js';

captureDiag();

const span = (service: string, spanContext: () => { traceId: string; spanId: string }) =>
  handBuiltSpan({
    name: 'part',
    spanContext: () => ({ ...spanContext(), traceFlags: 1 }),
    startTime: [1_796_000_000, 0],
    endTime: [1_796_000_000, 0],
    resource: resourceFromAttributes({ 'service.name': service }),
    instrumentationScope: { name: 'part' },
  });

// An export of two resources whose second part cannot be encoded, after the first part was taken
// and its append then failed: that failure must be handled, and the export answered once.
test('a part taken before a later part fails to encode: answered once, nothing unhandled', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  // Replaced by hand: a spy would handle the promise it returns (it records how it settles).
  const original = Admission.prototype.accept;
  let accepts = 0;
  Admission.prototype.accept = function accept(this: Admission<unknown>, ...args) {
    if (++accepts === 1) return Promise.reject(new Error('the append failed'));
    return original.apply(this, args);
  };
  const s3 = new ScriptedS3();
  const exporter = scriptedExporter(s3, { format: 'otlp-json' }, TRACES);
  try {
    const answers: ExportResult[] = [];
    exporter.export(
      [
        span('a', () => ({ traceId: '1'.repeat(32), spanId: '1'.repeat(16) })),
        span('b', () => {
          throw new Error('no span context');
        }),
      ] as never,
      (result) => answers.push(result),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(accepts).toBe(1);
    expect(unhandled).toEqual([]);
    expect(answers.map((a) => a.code)).toEqual([ExportResultCode.FAILED]);
    expect(exporter.stats()).toMatchObject({ exportsAccepted: 0, exportsRejected: 1 });
  } finally {
    Admission.prototype.accept = original;
    process.off('unhandledRejection', onUnhandled);
    await exporter.shutdown();
  }
});
