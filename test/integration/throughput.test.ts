import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { S3MetricExporter } from '../../src/index.js';
import { type Canonical, decodeJsonExact } from '../support/otlp-reference.js';
import {
  connection,
  decompressed,
  describeS3,
  listAndFetch,
  s3Server,
  withS3,
} from '../support/s3.js';
import { collectingProvider } from '../support/service.js';

type Json = { [key: string]: Canonical };
const get = (v: Canonical | undefined, key: string): Canonical | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json)[key] : undefined;
const each = (v: Canonical | undefined): Canonical[] => (Array.isArray(v) ? v : []);

/** The series of a point's attributes in the canonical form: `key=value` sorted, as the test keys them. */
const seriesOfCanonical = (attributes: Canonical | undefined) =>
  each(attributes)
    .map((kv) => `${String(get(kv, 'key'))}=${Object.values(get(kv, 'value') as Json)[0]}`)
    .sort()
    .join(',');

/** Each point of a decoded request in the text form the test records its expectations in. */
function storedPointTexts(request: Canonical): string[] {
  const out: string[] = [];
  for (const rm of each(get(request, 'resourceMetrics'))) {
    for (const sm of each(get(rm, 'scopeMetrics'))) {
      for (const metric of each(get(sm, 'metrics'))) {
        const name = get(metric, 'name');
        for (const p of each(get(get(metric, 'sum'), 'dataPoints'))) {
          if (name !== 'http.server.request.count') throw new Error(`unexpected sum ${name}`);
          out.push(`requests ${seriesOfCanonical(get(p, 'attributes'))} ${get(p, 'asDouble')}`);
        }
        for (const p of each(get(get(metric, 'histogram'), 'dataPoints'))) {
          if (name !== 'http.server.request.duration')
            throw new Error(`unexpected histogram ${name}`);
          const [count, sum, min, max] = ['count', 'sum', 'min', 'max'].map((k) => get(p, k));
          out.push(
            `duration ${seriesOfCanonical(get(p, 'attributes'))} ${count} ${sum} ${min} ${max}`,
          );
        }
      }
    }
  }
  return out;
}

/**
 * Measures, on a realistic workload, what the closing notes and the README quote: the
 * raw-to-stored byte ratio per compression and the upload throughput. It asserts what must
 * hold (every point stored with the value recorded, nothing dropped, zstd and gzip shrink the
 * data); the speed is printed, not asserted (speed claims live in bench/).
 */
describeS3('realistic workload into the real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  withS3('throughput', (s) => ({ client, bucket } = s));

  const cases = [
    { compression: 'zstd', spool: false },
    { compression: 'zstd', spool: true },
    { compression: 'gzip', spool: false },
    { compression: 'none', spool: false },
  ] as const;
  for (const { compression, spool } of cases) {
    const label = `${compression}${spool ? ' + spool' : ''}`;
    test(`${label}: every point stored; ratio and throughput printed`, async () => {
      const prefix = `throughput/${compression}${spool ? '-spool' : ''}`;
      const spoolDir = spool
        ? await mkdtemp(join(tmpdir(), 'otel-s3-throughput-spool-'))
        : undefined;
      const exporter = new S3MetricExporter({
        bucket,
        prefix,
        compression,
        ...connection(),
        maxBatchBytes: 4 * 1024 * 1024,
        maxBufferedBytes: 256 * 1024 * 1024,
        flushTimeoutMillis: 60_000,
        ...(spoolDir === undefined ? {} : { spoolDir }),
      });
      const { provider, collect } = collectingProvider('checkout');
      const meter = provider.getMeter('http-server', '1.0.0');
      const requests = meter.createCounter('http.server.request.count');
      const duration = meter.createHistogram('http.server.request.duration', { unit: 's' });
      const routes = Array.from({ length: 50 }, (_, i) => `/api/v1/resource${i}/{id}`);
      const methods = ['GET', 'POST', 'PUT', 'DELETE'];
      const statuses = [200, 201, 400, 404, 500];
      let seed = 7;
      const random = () => {
        seed = (seed * 48271) % 2147483647;
        return seed / 2147483647;
      };
      const collections = 20;
      let points = 0;
      // What the test recorded, per series: the counter's total and the histogram's count, sum,
      // min and max, summed in recording order (as the SDK does, so doubles match exactly).
      const seriesOf = (attrs: Record<string, string | number>) =>
        Object.entries(attrs)
          .map(([k, v]) => `${k}=${v}`)
          .sort()
          .join(',');
      const totals = new Map<string, number>();
      const histograms = new Map<
        string,
        { count: number; sum: number; min: number; max: number }
      >();
      /** Every point each collection must hold, as text: cumulative, so every series each time. */
      const expected: string[] = [];
      const started = performance.now();
      for (let c = 0; c < collections; c++) {
        for (const route of routes) {
          for (const method of methods) {
            const attrs = {
              'http.route': route,
              'http.request.method': method,
              'http.response.status_code': statuses[
                Math.floor(random() * statuses.length)
              ] as number,
              'server.address': 'checkout.internal',
            };
            const added = 1 + Math.floor(random() * 5);
            const took = random() * 2;
            requests.add(added, attrs);
            duration.record(took, attrs);
            const series = seriesOf(attrs);
            totals.set(series, (totals.get(series) ?? 0) + added);
            const h = histograms.get(series) ?? { count: 0, sum: 0, min: took, max: took };
            histograms.set(series, {
              count: h.count + 1,
              sum: h.sum + took,
              min: Math.min(h.min, took),
              max: Math.max(h.max, took),
            });
          }
        }
        for (const [series, total] of totals) expected.push(`requests ${series} ${total}`);
        for (const [series, h] of histograms) {
          expected.push(`duration ${series} ${h.count} ${h.sum} ${h.min} ${h.max}`);
        }
        const rm = await collect();
        points += rm.scopeMetrics.reduce(
          (n, sm) => n + sm.metrics.reduce((m, x) => m + x.dataPoints.length, 0),
          0,
        );
        await new Promise<void>((resolve, reject) =>
          exporter.export(rm, (r) => (r.code === 0 ? resolve() : reject(r.error))),
        );
      }
      await exporter.forceFlush();
      const seconds = (performance.now() - started) / 1000;
      const stats = exporter.stats();
      await exporter.shutdown();
      await provider.shutdown();
      if (spoolDir !== undefined) {
        expect(stats.spool?.written).toBe(stats.batchesUploaded);
        await rm(spoolDir, { recursive: true, force: true });
      }

      const objects = await listAndFetch(client, bucket, `${prefix}/`);
      // Every stored point, read by the strict reference decoder, against what was recorded.
      const stored = objects.flatMap((o) =>
        storedPointTexts(decodeJsonExact(decompressed(o).toString('utf8'))),
      );
      expect(expected).toHaveLength(points);
      expect(stored.length).toBe(points);
      stored.sort();
      expected.sort();
      const differs = stored.findIndex((point, i) => point !== expected[i]);
      expect(differs === -1 ? undefined : stored[differs], 'first stored point that differs').toBe(
        differs === -1 ? undefined : expected[differs],
      );
      expect(stats.pointsDropped).toBe(0);
      const storedBytes = objects.reduce((n, o) => n + o.size, 0);
      expect(storedBytes).toBe(stats.bytesUploaded);
      const ratio = stats.rawBytesUploaded / stats.bytesUploaded;
      if (compression !== 'none') expect(ratio).toBeGreaterThan(4);
      console.log(
        `[measure] ${s3Server?.kind} otlp-json+${label}: ${points} points in ${objects.length} objects, ` +
          `raw ${(stats.rawBytesUploaded / 1e6).toFixed(2)} MB -> stored ${(storedBytes / 1e6).toFixed(2)} MB ` +
          `(ratio ${ratio.toFixed(1)}), ${seconds.toFixed(2)} s from first export to flushed: ` +
          `${Math.round(points / seconds)} points/s, ${(stats.rawBytesUploaded / 1e6 / seconds).toFixed(1)} MB/s raw`,
      );
    });
  }
});
