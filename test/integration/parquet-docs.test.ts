import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { S3MetricExporter } from '../../src/index.js';
import { connection, describeS3, freshBucket, listAndFetch, testClient } from '../support/s3.js';
import { collectingProvider } from '../support/service.js';

const DOCS = new URL('../../docs/parquet.md', import.meta.url);

/** The SQL block that follows `<!-- query: name -->` in docs/parquet.md, exactly as written. */
async function documentedQuery(name: string): Promise<string> {
  const text = await readFile(DOCS, 'utf8');
  const match = new RegExp(`<!-- query: ${name} -->\\n\`\`\`sql\\n([\\s\\S]*?)\`\`\``).exec(text);
  if (match === null) throw new Error(`docs/parquet.md has no query ${name}`);
  return match[1] as string;
}

describeS3('the DuckDB queries of docs/parquet.md, run verbatim on a mirror of the bucket', () => {
  let client: S3Client;
  let mirror: string;
  let db: DuckDBInstance;

  /** Runs a documented query with the mirror as DuckDB's working directory. */
  async function run(name: string): Promise<Record<string, unknown>[]> {
    const connection = await db.connect();
    try {
      await connection.run(`SET file_search_path = '${mirror}'`);
      const result = await connection.runAndReadAll(await documentedQuery(name));
      return result.getRowObjectsJson() as Record<string, unknown>[];
    } finally {
      connection.closeSync();
    }
  }

  beforeAll(async () => {
    client = testClient();
    const bucket = await freshBucket(client, 'parquet-docs');
    const exporter = new S3MetricExporter({
      bucket,
      prefix: 'lake',
      format: 'parquet',
      ...connection(),
    });
    const { provider, collect } = collectingProvider('checkout');
    const meter = provider.getMeter('http');
    const requests = meter.createCounter('http.server.requests');
    const duration = meter.createHistogram('http.server.request.duration', { unit: 'ms' });
    const exportNow = async () => {
      const rm = await collect();
      await new Promise((resolve) => exporter.export(rm, resolve));
      await exporter.forceFlush(); // one object per collection
    };
    // Two collections of the cumulative counter: /checkout 5 then 12, /cart 1 then 3.
    requests.add(5, { 'http.route': '/checkout' });
    requests.add(1, { 'http.route': '/cart' });
    await exportNow();
    requests.add(7, { 'http.route': '/checkout' });
    requests.add(2, { 'http.route': '/cart' });
    // 19 requests of 30 ms and one of 700 ms: the 95th percentile is in the (25, 50] bucket.
    for (let i = 0; i < 19; i++) duration.record(30, { 'http.route': '/checkout' });
    duration.record(700, { 'http.route': '/checkout' });
    await exportNow();
    await exporter.shutdown();
    await provider.shutdown();
    // `aws s3 sync s3://{bucket}/lake metrics`
    mirror = await mkdtemp(join(tmpdir(), 'otel-s3-parquet-docs-'));
    const objects = await listAndFetch(client, bucket, 'lake/');
    expect(objects.length).toBe(2);
    for (const object of objects) {
      const path = join(mirror, 'metrics', ...object.key.slice('lake/'.length).split('/'));
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, object.bytes);
    }
    db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
  });
  afterAll(async () => {
    db?.closeSync();
    client?.destroy();
    if (mirror !== undefined) await rm(mirror, { recursive: true, force: true });
  });

  test('request rate per service per hour from a cumulative counter', async () => {
    const rows = await run('request-rate');
    // (12 - 5) + (3 - 1) requests in the hour of the two collections.
    expect(rows.map((r) => [r.ServiceName, Number(r.requests), Number(r.per_second)])).toEqual([
      ['checkout', 9, 9 / 3600],
    ]);
  });

  test('p95 from histogram buckets', async () => {
    expect(await run('p95')).toEqual([{ ServiceName: 'checkout', p95_upper_bound: 50 }]);
  });

  test('top routes by requests', async () => {
    const rows = await run('top-routes');
    expect(rows.map((r) => [r.route, Number(r.requests)])).toEqual([
      ['/checkout', 12],
      ['/cart', 3],
    ]);
  });
});
