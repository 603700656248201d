/**
 * The OpenTelemetry API takes a trace id in upper-case hex as valid (isSpanContextValid), so a
 * span under a remote parent spelled so, and a log record in its context, carry it as given.
 * Every format stores the same lower-case hex (Parquet's columns as the ClickHouse exporter's
 * do), and a lookup by `traceId` finds the trace in each.
 */
import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { expect, test } from 'vitest';
import { S3LogRecordExporter, S3SpanExporter } from '../../../src/index.js';
import { logRecordRows, readLogRecords, readSpans, spanRows } from '../../../src/reader.js';
import { dirClient } from '../../support/compaction-dir.js';
import { tempDirs } from '../../support/temp-dir.js';

const newDir = tempDirs();
const UPPER_TRACE = '4BF92F3577B34DA6A3CE929D0E0E4736';
const UPPER_PARENT = '00F067AA0BA902B7';

for (const format of ['parquet', 'otlp-json'] as const) {
  test(`${format}: a trace id the SDK holds in upper case is stored and found in lower case`, async () => {
    const dir = await newDir('otel-s3-trace-id-case-');
    const options = { s3Client: dirClient(dir), bucket: 'b', prefix: 'p', format };
    const spans = new S3SpanExporter(options);
    const logs = new S3LogRecordExporter(options);
    const resource = resourceFromAttributes({ 'service.name': 'svc' });
    const tracerProvider = new TracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor({ exporter: spans })],
    });
    const loggerProvider = new LoggerProvider({
      resource,
      processors: [new BatchLogRecordProcessor({ exporter: logs })],
    });
    try {
      const parent = trace.setSpanContext(ROOT_CONTEXT, {
        traceId: UPPER_TRACE,
        spanId: UPPER_PARENT,
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
      });
      const tracer = tracerProvider.getTracer('t');
      const child = tracer.startSpan('child', {}, parent);
      loggerProvider
        .getLogger('l')
        .emit({ body: 'in child', context: trace.setSpan(parent, child) });
      child.end();
      tracer.startSpan('other trace').end();
      await tracerProvider.forceFlush();
      await loggerProvider.forceFlush();
      await spans.forceFlush();
      await logs.forceFlush();
    } finally {
      await tracerProvider.shutdown();
      await loggerProvider.shutdown();
    }
    const from = new Date(Date.now() - 3_600_000);
    const errors: unknown[] = [];
    const onError = (p: { error: unknown }) => errors.push(p.error);
    const read = { dir, prefix: 'p', from, onError };
    for (const traceId of [UPPER_TRACE.toLowerCase(), UPPER_TRACE]) {
      const found = [];
      for await (const o of readSpans({ ...read, traceId })) found.push(...spanRows(o.request));
      expect(found.map((s) => s.name)).toEqual(['child']);
      const records = [];
      for await (const o of readLogRecords({ ...read, traceId }))
        records.push(...logRecordRows(o.request));
      expect(records.map((r) => [r.body, r.traceId])).toEqual([
        ['in child', UPPER_TRACE.toLowerCase()],
      ]);
    }
    const all = [];
    for await (const o of readSpans(read)) all.push(...spanRows(o.request));
    expect(all.map((s) => [s.name, s.traceId]).sort()).toEqual([
      ['child', UPPER_TRACE.toLowerCase()],
      ['other trace', expect.any(String)],
    ]);
    expect(all.find((s) => s.name === 'child')?.parentSpanId).toBe(UPPER_PARENT.toLowerCase());
    expect(errors).toEqual([]);
  });
}
