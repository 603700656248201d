/**
 * A trace's spans in a Parquet row group lie in runs, one per service (rows sorted by service,
 * status, trace): the reader with `traceId` reads the `TraceId` column, then makes only the rows
 * of the trace. Every run must be found, and nothing of the other traces between them kept.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import { S3SpanExporter } from '../../../src/index.js';
import { dirSource } from '../../../src/reader/dir-source.js';
import { resolveReadLimits } from '../../../src/reader/read-limits.js';
import { readParts } from '../../../src/reader/read-parts.js';
import { readSpans, spanRows } from '../../../src/reader.js';
import { dirClient, keysIn } from '../../support/compaction-dir.js';
import { handBuiltSpan } from '../../support/readable-span.js';
import { tempDirs } from '../../support/temp-dir.js';

const newDir = tempDirs();

/** Ids that sort below, at and above the wanted trace's, so each service's run is fenced in. */
const BELOW = '1'.repeat(32);
const WANTED = '8c5f0e6d2b9a4c31a7e9d4b2c6f80e13';
const ABOVE = 'f'.repeat(32);

function span(service: string, traceId: string, n: number): ReadableSpan {
  const spanId = (n + 1).toString(16).padStart(16, '0');
  return handBuiltSpan({
    name: `op-${n}`,
    kind: SpanKind.SERVER,
    spanContext: () => ({ traceId, spanId, traceFlags: 1 }),
    startTime: [1_800_000_000, n * 1000],
    endTime: [1_800_000_001, 0],
    status: { code: SpanStatusCode.UNSET },
    resource: { attributes: { 'service.name': service } },
    instrumentationScope: { name: 'runs' },
  });
}

/** One Parquet object of `services` services, each with spans of three traces; the wanted one's span ids. */
async function stored(dir: string, services: number): Promise<string[]> {
  const spans: ReadableSpan[] = [];
  const wanted: string[] = [];
  for (let s = 0; s < services; s++) {
    for (const traceId of [BELOW, WANTED, ABOVE]) {
      const one = span(`svc-${String(s).padStart(2, '0')}`, traceId, spans.length);
      if (traceId === WANTED) wanted.push(one.spanContext().spanId);
      spans.push(one);
    }
  }
  const exporter = new S3SpanExporter({
    bucket: 'b',
    prefix: 'p',
    format: 'parquet',
    s3Client: dirClient(dir),
  });
  const result = await new Promise<{ code: number }>((resolve) => exporter.export(spans, resolve));
  expect(result.code).toBe(0);
  await exporter.shutdown();
  expect(exporter.stats().batchesUploaded).toBe(1);
  return wanted;
}

describe('readSpans with traceId: a trace in runs of one row group', () => {
  for (const services of [4, 12]) {
    test(`${services} services, a run each: every span of the trace, no other`, async () => {
      const dir = await newDir('otel-s3-trace-runs-');
      const wanted = await stored(dir, services);
      const rows = [];
      for await (const object of readSpans({ dir, prefix: 'p', traceId: WANTED })) {
        rows.push(...spanRows(object.request));
      }
      expect(rows.map((r) => r.traceId)).toEqual(wanted.map(() => WANTED));
      expect(rows.map((r) => r.spanId).sort()).toEqual([...wanted].sort());
      // Read in parts, as a file over 16 MiB is: the same rows.
      const [key] = (await keysIn(dir)).filter((k) => k.endsWith('.parquet'));
      const size = (await stat(join(dir, key as string))).size;
      const inParts = [];
      for await (const part of readParts(
        dirSource(dir),
        { key: key as string, size, signal: 'traces' },
        resolveReadLimits({}),
        new AbortController().signal,
        WANTED,
      )) {
        inParts.push(...spanRows(part.request));
      }
      expect(inParts.map((r) => r.traceId)).toEqual(wanted.map(() => WANTED));
      expect(inParts.map((r) => r.spanId).sort()).toEqual([...wanted].sort());
    });
  }
});
