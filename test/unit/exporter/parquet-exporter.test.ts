import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ExportResultCode } from '@opentelemetry/core';
import { parquetMetadata } from 'hyparquet';
import { describe, expect, test, vi } from 'vitest';
import { S3MetricExporter, type S3MetricExporterOptions } from '../../../src/index.js';
import { COMPRESSION_ROWS } from '../../../src/layout/formats.js';
import { decodeStoredObjectAsync } from '../../../src/reader/decode-object.js';
import { dataPointRows } from '../../../src/signals/metrics/rows.js';
import { captureDiag } from '../../support/diag-capture.js';
import { instrumentValues, recordedValues } from '../../support/reader-fixtures.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import {
  collectingProvider,
  exportSynthetic,
  manualProvider,
  recordEveryInstrument,
  recordingProvider,
  syntheticMetrics,
} from '../../support/service.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const messages = captureDiag();

async function exportEveryInstrument(options: Partial<S3MetricExporterOptions>) {
  const s3 = new ScriptedS3();
  const exporter = scriptedExporter(s3, {
    format: 'parquet',
    ...options,
  });
  const { provider, exported } = recordingProvider(exporter, 'parquet-service');
  recordEveryInstrument(provider);
  await provider.shutdown();
  const [recorded] = exported;
  if (recorded === undefined || exported.length !== 1) throw new Error('expected one export');
  return { s3, exporter, recorded };
}

describe("format: 'parquet'", () => {
  for (const compression of ['zstd', 'gzip', 'none'] as const) {
    test(`${compression}: one plain .parquet object per batch, in hour partitions, with every instrument`, async () => {
      const { s3, exporter, recorded } = await exportEveryInstrument({
        compression,
        prefix: 'lake',
      });
      const [attempt] = s3.attempts;
      expect(s3.attempts).toHaveLength(1);
      expect(attempt?.key).toMatch(
        /^lake\/year=\d{4}\/month=\d{2}\/day=\d{2}\/hour=\d{2}\/metrics_[0-9a-f-]{36}\.parquet$/,
      );
      // No outer compression: the file itself, which engines read in place.
      expect(attempt?.body.subarray(0, 4).toString()).toBe('PAR1');
      expect(attempt?.body.subarray(-4).toString()).toBe('PAR1');
      const decoded = await decodeStoredObjectAsync(
        attempt?.key ?? '',
        attempt?.body ?? Buffer.alloc(0),
      );
      expect(decoded.encoding).toEqual({ format: 'parquet', compression: 'none' });
      // Every column chunk carries the codec `compression` maps to.
      const body = attempt?.body ?? Buffer.alloc(0);
      const metadata = parquetMetadata(
        body.buffer.slice(body.byteOffset, body.byteOffset + body.length) as ArrayBuffer,
      );
      const codecs = new Set(
        metadata.row_groups.flatMap((g) => g.columns.map((c) => c.meta_data?.codec)),
      );
      expect([...codecs]).toEqual([COMPRESSION_ROWS[compression].parquetCodec]);
      const values = instrumentValues(dataPointRows(decoded.request));
      expect(values).toEqual(recordedValues('parquet-service', recorded, 'micros'));
      expect(exporter.stats()).toMatchObject({ batchesUploaded: 1, pointsDropped: 0 });
    });
  }

  for (const format of ['parquet', 'otlp-json'] as const) {
    test(`${format}: nothing held once the batch is stored, and after shutdown: bufferedBytes 0`, async () => {
      const s3 = new ScriptedS3();
      const exporter = scriptedExporter(s3, { format });
      await exportSynthetic(exporter, 50, 1);
      expect(exporter.stats().bufferedBytes).toBeGreaterThan(0);
      await exporter.forceFlush();
      expect(s3.attempts).toHaveLength(1);
      expect(exporter.stats()).toMatchObject({ bufferedBytes: 0, pendingBatches: 0 });
      await exportSynthetic(exporter, 50, 1);
      await exporter.shutdown();
      expect(s3.attempts).toHaveLength(2);
      expect(exporter.stats()).toMatchObject({
        bufferedBytes: 0,
        pendingBatches: 0,
        batchesUploaded: 2,
      });
    });
  }

  test('the content type is Parquet, and the environment variable selects it', async () => {
    vi.stubEnv('OTEL_EXPORTER_S3_FORMAT', 'parquet');
    try {
      const s3 = new ScriptedS3();
      let contentType: string | undefined;
      const client = s3.client;
      const send = client.send.bind(client);
      client.send = ((command: { input: { ContentType?: string } }, opts: unknown) => {
        contentType = command.input.ContentType;
        return send(command as never, opts as never);
      }) as typeof client.send;
      const exporter = new S3MetricExporter({ bucket: 'unit', s3Client: client });
      const provider = manualProvider(exporter);
      recordEveryInstrument(provider);
      await provider.shutdown();
      expect(contentType).toBe('application/vnd.apache.parquet');
      expect([...s3.stored.keys()][0]).toMatch(/\.parquet$/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  test('a batch the worker cannot turn into Parquet is stored as its OTLP/JSON records, nothing lost', async () => {
    const body = await import('../../../src/body/body-maker.js');
    const real = body.createBodyMaker;
    const spy = vi.spyOn(body, 'createBodyMaker').mockImplementation((options) => {
      const maker = real(options);
      return {
        ...maker,
        make: async (request) => {
          throw new body.BodyMakerError('Parquet body failed: simulated', request);
        },
      };
    });
    try {
      const { s3, exporter, recorded } = await exportEveryInstrument({});
      const [key] = [...s3.stored.keys()];
      expect(key).toMatch(/\/hour=\d{2}\/metrics_[0-9a-f-]{36}\.json$/);
      const decoded = await decodeStoredObjectAsync(
        key ?? '',
        s3.stored.get(key ?? '') ?? Buffer.alloc(0),
      );
      const values = instrumentValues(dataPointRows(decoded.request));
      expect(values).toEqual(recordedValues('parquet-service', recorded));
      expect(exporter.stats().pointsDropped).toBe(0);
      expect(messages.some((m) => /as its records, uncompressed \(\.json\)/.test(m.text))).toBe(
        true,
      );
    } finally {
      spy.mockRestore();
    }
  });
  test('the fallback body of a batch, larger than its columns, stays under maxBufferedBytes', async () => {
    const body = await import('../../../src/body/body-maker.js');
    const real = body.createBodyMaker;
    const spy = vi.spyOn(body, 'createBodyMaker').mockImplementation((options) => {
      const maker = real(options);
      return {
        ...maker,
        make: async (request) => {
          throw new body.BodyMakerError('Parquet body failed: simulated', request);
        },
      };
    });
    // S3 never answers: the batch is held in memory with its body.
    const s3 = new ScriptedS3().script([], { kind: 'hang' });
    const limit = 1 << 20;
    const exporter = scriptedExporter(s3, {
      format: 'parquet',
      maxBufferedBytes: limit,
      maxBatchBytes: limit,
      flushTimeoutMillis: 200,
    });
    try {
      // Every point carries the same long attribute: the columns hold it once, the OTLP/JSON
      // records once per point.
      const rm = syntheticMetrics(500, 1);
      const attributes = { long: 'x'.repeat(2_000) };
      for (const point of rm.scopeMetrics[0]?.metrics[0]?.dataPoints ?? [])
        (point as { attributes: object }).attributes = attributes;
      await new Promise((resolve) => exporter.export(rm, resolve));
      const columns = exporter.stats().bufferedBytes;
      await exporter.forceFlush();
      const stats = exporter.stats();
      // The columns fit (about 68 KB); the records (500 × 2 KB and more) cannot: not held past
      // the bound, and dropped counted rather than silently.
      expect(columns).toBeLessThan(limit / 4);
      expect(stats.bufferedBytes).toBeLessThanOrEqual(limit);
      expect(stats.pointsDroppedByReason).toEqual({ 'buffer-full': 500 });
    } finally {
      spy.mockRestore();
      await exporter.shutdown();
    }
  });
  test('a Parquet batch keeps its key and bytes through a retry, the spool and a replay', async () => {
    const dir = await makeTempDir('otel-s3-parquet-spool-');
    try {
      // A 503, then a server that never answers: the batch is retried, then left in the spool.
      const s3 = new ScriptedS3().script(
        [{ kind: 'status', status: 503, name: 'ServiceUnavailable' }],
        { kind: 'hang' },
      );
      const options = {
        bucket: 'unit',
        format: 'parquet',
        spoolDir: dir,
        flushTimeoutMillis: 300,
        retry: { initialDelayMillis: 5 },
      } as const;
      const first = new S3MetricExporter({ ...options, s3Client: s3.client });
      const { provider, collect } = collectingProvider('parquet-service');
      recordEveryInstrument(provider);
      const recorded = await collect();
      await provider.shutdown();
      await new Promise((resolve) => first.export(recorded, resolve));
      // The flush seals the batch; wait for the 503 and the retry (a cold Parquet worker on a
      // loaded machine can take longer than flushTimeoutMillis), then shut down while it hangs.
      await first.forceFlush();
      await waitFor(() => s3.attempts.length >= 2, 10_000, 'the first attempt and its retry');
      await first.shutdown();
      expect(first.stats()).toMatchObject({ batchesSealed: 1, pointsDropped: 0 });
      expect(first.stats().spool?.leftAtShutdown).toBe(1);
      expect(await readdir(join(dir, 'batches'))).toHaveLength(1);
      const tried = s3.attempts.length;
      expect(tried).toBeGreaterThanOrEqual(2);

      s3.script([], { kind: 'ok' });
      const second = new S3MetricExporter({ ...options, s3Client: s3.client });
      await waitFor(() => second.stats().spool?.replayed === 1, 5_000, 'the spool replayed');
      await second.forceFlush();
      await second.shutdown();
      expect(s3.attempts.length).toBe(tried + 1);

      // Every attempt, before and after the restart, sent one key, one body and If-None-Match.
      const [firstAttempt] = s3.attempts;
      for (const attempt of s3.attempts) {
        expect(attempt.key).toBe(firstAttempt?.key);
        expect(attempt.body.equals(firstAttempt?.body ?? Buffer.alloc(0))).toBe(true);
        expect(attempt.ifNoneMatch).toBe('*');
      }
      expect([...s3.stored.keys()]).toEqual([firstAttempt?.key]);
      const decoded = await decodeStoredObjectAsync(
        firstAttempt?.key ?? '',
        s3.stored.get(firstAttempt?.key ?? '') ?? Buffer.alloc(0),
      );
      expect(decoded.encoding).toEqual({ format: 'parquet', compression: 'none' });
      const values = instrumentValues(dataPointRows(decoded.request));
      expect(values).toEqual(recordedValues('parquet-service', recorded, 'micros'));
      await waitFor(
        async () => (await readdir(join(dir, 'batches'))).length === 0,
        5_000,
        'the spool file deleted',
      );
    } finally {
      await removeDir(dir);
    }
  });
});

describe('Parquet batches measured by appending (the one walk of an export)', () => {
  test('an export that takes a batch past maxBatchBytes goes to a fresh batch: every point stored once', async () => {
    const s3 = new ScriptedS3();
    const exporter = scriptedExporter(s3, {
      format: 'parquet',
      maxBatchBytes: 64 * 1024,
    });
    let exported = 0;
    for (let tag = 1; tag <= 40; tag++) {
      const result = await exportSynthetic(exporter, 200, tag);
      expect(result.code).toBe(ExportResultCode.SUCCESS);
      exported += 200;
    }
    await exporter.shutdown();
    expect(s3.stored.size).toBeGreaterThan(1); // sealed by size, more than once
    let stored = 0;
    const tags: number[] = [];
    for (const [key, body] of s3.stored) {
      const rows = dataPointRows((await decodeStoredObjectAsync(key, body)).request);
      stored += rows.length;
      tags.push(...new Set(rows.map((r) => Number(r.attributes.tag))));
    }
    expect(stored).toBe(exported);
    // An export is never split between two objects.
    expect(tags.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(exporter.stats().pointsUploaded).toBe(exported);
  });

  test('an export that cannot fit under maxBufferedBytes is taken back whole, and counted', async () => {
    const s3 = new ScriptedS3();
    const exporter = scriptedExporter(s3, {
      format: 'parquet',
      maxBatchBytes: 64 * 1024,
      maxBufferedBytes: 64 * 1024,
    });
    // Alone, its columns take more than the whole bound: it is appended, measured, taken back.
    const big = await exportSynthetic(exporter, 5_000, 1);
    expect(big.code).toBe(ExportResultCode.FAILED);
    expect(exporter.stats().bufferedBytes).toBeLessThan(64 * 1024); // nothing of it stays
    expect(exporter.stats().pointsDroppedByReason).toEqual({ 'buffer-full': 5_000 });
    // The batch takes the next export as if the big one had never come.
    expect((await exportSynthetic(exporter, 10, 2)).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    const [[key, body] = ['', Buffer.alloc(0)]] = [...s3.stored];
    const rows = dataPointRows((await decodeStoredObjectAsync(key, body)).request);
    expect(rows.map((r) => r.attributes.tag)).toEqual(Array(10).fill('2')); // Parquet keeps text
    expect(exporter.stats().pointsUploaded).toBe(10);
  });
});
