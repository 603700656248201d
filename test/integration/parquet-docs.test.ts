/**
 * The DuckDB queries of docs/parquet.md, run verbatim against a mirror of objects the exporter
 * wrote to a real S3 server, and checked against what this test recorded through the SDK: the
 * amounts it added to counters, the observations it made, never a second query of the same shape.
 *
 * Two services share the lake; `api` restarts halfway (a new start time: a counter reset), and
 * the collections straddle an hour. The points carry the times of the schedule below (the SDK's
 * values, with their start and end times set to the schedule's), so the expected numbers per hour
 * and per window are known exactly; the exporter files them by data time (`partitionTime:
 * 'data'`), under the partitions of 2026-12-01 04:00 and 05:00 UTC.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import type { HrTime } from '@opentelemetry/api';
import type { MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { S3MetricExporter, S3SpanExporter } from '../../src/index.js';
import { documentedQuery as documentedQueryOf } from '../support/documented-query.js';
import { connection, describeS3, freshBucket, listAndFetch, testClient } from '../support/s3.js';
import { collectingProvider } from '../support/service.js';
import { syntheticSpans } from '../support/signal-driver.js';

const DOCS = new URL('../../docs/parquet.md', import.meta.url);

/** The SQL block that follows `<!-- query: name -->` in docs/parquet.md, exactly as written. */
const documentedQuery = (name: string): Promise<string> => documentedQueryOf(DOCS, name);

const at = (time: string): number => Date.parse(`2026-12-01T${time}Z`);
const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];
/** The histogram's bucket bounds, given to the SDK by this test. */
const BOUNDS = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000];

/** One instance of a service: its start time, and what it records between collections. */
interface Instance {
  service: string;
  start: number;
  collections: {
    at: number;
    requests: Record<string, number>;
    /** Latency observations, all on route /a. */
    latencies: number[];
  }[];
}

const repeat = (n: number, value: number): number[] => Array.from({ length: n }, () => value);

/**
 * The schedule. api: /a 69 and /b 138 in all, over two instances (a restart at 05:01);
 * web: /a 690 and /b 1380. Latencies: api 19 × 30 ms and one of 700 ms, web 10 × 3 and 10 × 200.
 */
const INSTANCES: Instance[] = [
  {
    service: 'api',
    start: at('04:50:00'),
    collections: [
      { at: at('04:55:00'), requests: { '/a': 10, '/b': 20 }, latencies: repeat(10, 30) },
      { at: at('05:00:30'), requests: { '/a': 20, '/b': 40 }, latencies: [] },
    ],
  },
  {
    service: 'api',
    start: at('05:01:00'),
    collections: [
      {
        at: at('05:10:00'),
        requests: { '/a': 39, '/b': 78 },
        latencies: [...repeat(9, 30), 700],
      },
    ],
  },
  {
    service: 'web',
    start: at('04:50:00'),
    collections: [
      { at: at('04:55:00'), requests: { '/a': 300, '/b': 600 }, latencies: repeat(10, 3) },
      { at: at('05:10:00'), requests: { '/a': 390, '/b': 780 }, latencies: repeat(10, 200) },
    ],
  },
];

/** Every amount added, with the service, the collection that exported it and the one before. */
const added = INSTANCES.flatMap((instance) =>
  instance.collections.flatMap((c, i) =>
    Object.entries(c.requests).map(([route, n]) => ({
      service: instance.service,
      route,
      n,
      collectedAt: c.at,
      // The interval the collection's increase covers: since the previous one, or the start.
      since: i === 0 ? instance.start : (instance.collections[i - 1] as { at: number }).at,
    })),
  ),
);

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const hourOf = (ms: number) => new Date(ms - (ms % 3_600_000)).toISOString();

/** The ResourceMetrics with every point's start and end times set to the schedule's. */
function retimed(rm: ResourceMetrics, start: number, end: number): ResourceMetrics {
  return {
    ...rm,
    scopeMetrics: rm.scopeMetrics.map((sm) => ({
      ...sm,
      metrics: sm.metrics.map(
        (m) =>
          ({
            ...m,
            dataPoints: m.dataPoints.map((p) => ({
              ...p,
              startTime: hrTime(start),
              endTime: hrTime(end),
            })),
          }) as MetricData,
      ),
    })),
  };
}

describeS3('the DuckDB queries of docs/parquet.md, run verbatim on a mirror of the bucket', () => {
  let client: S3Client;
  let mirror: string;
  let pointsExported = 0;

  /**
   * Runs SQL in a fresh DuckDB database whose working directory is the mirror: the documented
   * view first, as a reader of the docs would.
   */
  async function query(sql: string): Promise<Record<string, unknown>[]> {
    const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
    const connection = await db.connect();
    try {
      await connection.run(`SET file_search_path = '${mirror}'`);
      // Hours in UTC, as the partitions are (the docs say date_trunc follows the session's zone).
      await connection.run(`SET TimeZone = 'UTC'`);
      await connection.run(await documentedQuery('view'));
      const result = await connection.runAndReadAll(sql);
      return result.getRowObjectsJson() as Record<string, unknown>[];
    } finally {
      connection.closeSync();
      db.closeSync();
    }
  }
  const run = async (name: string) => query(await documentedQuery(name));

  beforeAll(async () => {
    client = testClient();
    const bucket = await freshBucket(client, 'parquet-docs');
    const exporter = new S3MetricExporter({
      bucket,
      prefix: 'lake',
      format: 'parquet',
      partitionTime: 'data',
      ...connection(),
    });
    for (const instance of INSTANCES) {
      const { provider, collect } = collectingProvider(instance.service);
      const meter = provider.getMeter('http');
      const requests = meter.createCounter('http.server.requests');
      const duration = meter.createHistogram('http.server.request.duration', {
        unit: 'ms',
        advice: { explicitBucketBoundaries: BOUNDS },
      });
      for (const c of instance.collections) {
        for (const [route, n] of Object.entries(c.requests)) {
          requests.add(n, { 'http.route': route });
        }
        for (const ms of c.latencies) duration.record(ms, { 'http.route': '/a' });
        const rm = retimed(await collect(), instance.start, c.at);
        pointsExported += sum(
          rm.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.dataPoints.length)),
        );
        await new Promise((resolve) => exporter.export(rm, resolve));
        await exporter.forceFlush(); // one object per collection
      }
      await provider.shutdown();
    }
    await exporter.shutdown();
    // Spans under the same prefix, as the README's Quick start has the three signals: their
    // table's folder (traces/) is inside the metrics' location, and the view must not read it.
    const spans = new S3SpanExporter({
      bucket,
      prefix: 'lake',
      format: 'parquet',
      ...connection(),
    });
    await new Promise((resolve) => spans.export(syntheticSpans(3, 1), resolve));
    await spans.shutdown();
    // `aws s3 sync s3://{bucket}/lake metrics`
    mirror = await mkdtemp(join(tmpdir(), 'otel-s3-parquet-docs-'));
    const objects = await listAndFetch(client, bucket, 'lake/');
    expect(objects.map((o) => o.key.startsWith('lake/traces/')).sort()).toEqual([
      ...Array<boolean>(5).fill(false),
      true,
    ]);
    for (const object of objects) {
      const path = join(mirror, 'metrics', ...object.key.slice('lake/'.length).split('/'));
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, object.bytes);
    }
  });
  afterAll(async () => {
    client?.destroy();
    if (mirror !== undefined) await rm(mirror, { recursive: true, force: true });
  });

  test('request rate per service per hour: every increase since the start, resets included', async () => {
    const rows = await run('request-rate');
    const expected = [...new Set(added.map((a) => `${a.service} ${hourOf(a.collectedAt)}`))].map(
      (group) => {
        const [service, hour] = group.split(' ') as [string, string];
        const inGroup = added.filter(
          (a) => a.service === service && hourOf(a.collectedAt) === hour,
        );
        // The time the group's increases cover: from the earliest interval start to the last point.
        const seconds =
          (Math.max(...inGroup.map((a) => a.collectedAt)) -
            Math.min(...inGroup.map((a) => a.since))) /
          1000;
        const requests = sum(inGroup.map((a) => a.n));
        return [service, hour, requests, requests / seconds];
      },
    );
    expect(expected).toEqual([
      ['api', '2026-12-01T04:00:00.000Z', 30, 30 / 300],
      ['api', '2026-12-01T05:00:00.000Z', 177, 177 / 900],
      ['web', '2026-12-01T04:00:00.000Z', 900, 900 / 300],
      ['web', '2026-12-01T05:00:00.000Z', 1170, 1170 / 900],
    ]);
    expect(
      rows.map((r) => [
        r.ServiceName,
        new Date(String(r.hour_start)).toISOString(),
        Number(r.requests),
        Number(r.per_second),
      ]),
    ).toEqual(expected);
    // Over both hours, each service's recorded total: api 69 + 138, web 690 + 1380.
    for (const service of ['api', 'web']) {
      const total = sum(
        rows.filter((r) => r.ServiceName === service).map((r) => Number(r.requests)),
      );
      expect(total).toBe(sum(added.filter((a) => a.service === service).map((a) => a.n)));
    }
  });

  test('the increase over a time window: what was recorded in the collections inside it', async () => {
    const rows = await run('increase-window');
    // The documented window is (05:00, 06:00].
    const inWindow = (ms: number) => ms > at('05:00:00') && ms <= at('06:00:00');
    const expected = ['api', 'web'].map((service) => [
      service,
      sum(added.filter((a) => a.service === service && inWindow(a.collectedAt)).map((a) => a.n)),
    ]);
    expect(expected).toEqual([
      ['api', 177],
      ['web', 1170],
    ]);
    expect(rows.map((r) => [r.ServiceName, Number(r.requests)])).toEqual(expected);
  });

  test('p95 from histogram buckets: the bucket of the observation at rank ⌈0.95 n⌉', async () => {
    const expected = ['api', 'web'].map((service) => {
      const observed = INSTANCES.filter((i) => i.service === service)
        .flatMap((i) => i.collections.flatMap((c) => c.latencies))
        .sort((a, b) => a - b);
      const p95 = observed[Math.ceil(0.95 * observed.length) - 1] as number;
      return { ServiceName: service, p95_upper_bound: BOUNDS.find((bound) => bound >= p95) };
    });
    expect(expected).toEqual([
      { ServiceName: 'api', p95_upper_bound: 50 },
      { ServiceName: 'web', p95_upper_bound: 250 },
    ]);
    expect(await run('p95')).toEqual(expected);
  });

  test('top routes: the sum over every series (service, instance, attributes) of its latest value', async () => {
    const rows = await run('top-routes');
    const expected = ['/b', '/a'].map((route) => [
      route,
      sum(added.filter((a) => a.route === route).map((a) => a.n)),
    ]);
    expect(expected).toEqual([
      ['/b', 138 + 1380],
      ['/a', 69 + 690],
    ]);
    expect(rows.map((r) => [r.route, Number(r.requests)])).toEqual(expected);
  });

  test('the partition columns are integers through the documented view, and day = 1 prunes to the day', async () => {
    const [types] = await query(
      'SELECT DISTINCT typeof(year) AS year, typeof(month) AS month, typeof(day) AS day, typeof(hour) AS hour FROM otel_metrics',
    );
    expect(types).toEqual({ year: 'INTEGER', month: 'INTEGER', day: 'INTEGER', hour: 'INTEGER' });
    // The documented pruning example: the files are under day=01 (the points' day).
    const [day] = await query(
      'SELECT count(*)::INTEGER AS points FROM otel_metrics WHERE year = 2026 AND month = 12 AND day = 1',
    );
    expect(day).toEqual({ points: pointsExported });
    const hours = await query(
      'SELECT hour, count(*)::INTEGER AS points FROM otel_metrics GROUP BY hour ORDER BY hour',
    );
    expect(hours.map((r) => r.hour)).toEqual([4, 5]);
  });
});
