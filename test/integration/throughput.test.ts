import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { dataPointRows, S3MetricExporter } from '../../src/index.js';
import {
  connection,
  decodeStored,
  describeS3,
  freshBucket,
  listAndFetch,
  s3Server,
  testClient,
} from '../support/s3.js';
import { collectingProvider } from '../support/service.js';

/**
 * Measures, on a realistic workload, what the closing notes and the README quote: the
 * raw-to-stored byte ratio per compression and the upload throughput. It asserts what must
 * hold (everything stored, nothing dropped, zstd and gzip shrink the data); the speed is printed,
 * not asserted (speed claims live in bench/).
 */
describeS3('realistic workload into the real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  beforeAll(async () => {
    client = testClient();
    bucket = await freshBucket(client, 'throughput');
  });
  afterAll(() => client?.destroy());

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
            requests.add(1 + Math.floor(random() * 5), attrs);
            duration.record(random() * 2, attrs);
          }
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
      const storedPoints = objects.reduce((n, o) => n + dataPointRows(decodeStored(o)).length, 0);
      expect(storedPoints).toBe(points);
      expect(stats.pointsDropped).toBe(0);
      const stored = objects.reduce((n, o) => n + o.size, 0);
      expect(stored).toBe(stats.bytesUploaded);
      const ratio = stats.rawBytesUploaded / stats.bytesUploaded;
      if (compression !== 'none') expect(ratio).toBeGreaterThan(4);
      console.log(
        `[measure] ${s3Server?.kind} otlp-json+${label}: ${points} points in ${objects.length} objects, ` +
          `raw ${(stats.rawBytesUploaded / 1e6).toFixed(2)} MB -> stored ${(stored / 1e6).toFixed(2)} MB ` +
          `(ratio ${ratio.toFixed(1)}), ${seconds.toFixed(2)} s from first export to flushed: ` +
          `${Math.round(points / seconds)} points/s, ${(stats.rawBytesUploaded / 1e6 / seconds).toFixed(1)} MB/s raw`,
      );
    });
  }
});
