import { Agent, request } from 'node:http';
import type { S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { dataPointRows, type HistogramBuckets, type PointRow } from '../../src/reader.js';
import { spawnTs } from '../support/child.js';
import { decodeStored, describeS3, listAndFetch, s3Server, withS3 } from '../support/s3.js';

function get(port: number, path: string, agent: Agent | false = false): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    })
      .on('error', reject)
      .end();
  });
}

describeS3('examples/http-service.ts with installShutdownHooks', () => {
  let client: S3Client;
  let bucket: string;
  withS3('http-service', (s) => ({ client, bucket } = s));

  /** The example, started against the test's bucket under `prefix`, and the port it listens on. */
  async function startService(prefix: string) {
    const server = s3Server;
    if (server === undefined) throw new Error('unreachable');
    const child = spawnTs('examples/http-service.ts', {
      PORT: '0',
      S3_ENDPOINT: server.endpoint,
      S3_ACCESS_KEY_ID: server.accessKeyId,
      S3_SECRET_ACCESS_KEY: server.secretAccessKey,
      S3_REGION: server.region,
      S3_BUCKET: bucket,
      S3_PREFIX: prefix,
    });
    const { listening: port } = await child.waitForJson<{ listening?: number }>(
      (v) => typeof v.listening === 'number',
    );
    if (port === undefined) throw new Error('unreachable');
    return { child, port };
  }

  /** The request counter's rows of the newest collection stored under `prefix` (cumulative: the totals). */
  async function newestCounts(prefix: string): Promise<{ rows: PointRow[]; counts: PointRow[] }> {
    const objects = await listAndFetch(client, bucket, `${prefix}/`);
    const rows = objects.flatMap((o) => dataPointRows(decodeStored(o)));
    const all = rows.filter((r) => r.metric === 'http.server.request.count');
    const newest = all
      .map((r) => r.time)
      .sort()
      .at(-1);
    return { rows, counts: all.filter((r) => r.time === newest) };
  }

  test('SIGTERM flushes every request metric to S3 and the process exits 0 on its own', async () => {
    const { child, port } = await startService('svc');
    const statuses = await Promise.all([
      ...Array.from({ length: 20 }, () => get(port, '/')),
      ...Array.from({ length: 3 }, () => get(port, '/slow')),
      ...Array.from({ length: 5 }, () => get(port, '/missing')),
    ]);
    expect(statuses.filter((s) => s === 200)).toHaveLength(23);

    const signalled = performance.now();
    child.process.kill('SIGTERM');
    const exit = await child.exited;
    expect(exit.code, child.stderr()).toBe(0);
    expect(exit.at - signalled).toBeLessThan(12_000 + 500);

    const { rows, counts } = await newestCounts('svc');
    const total = (route: string) =>
      counts
        .filter((r) => r.attributes['http.route'] === route)
        .reduce((n, r) => n + (r.value ?? 0), 0);
    expect(total('/')).toBe(20);
    expect(total('/slow')).toBe(3);
    expect(total('other')).toBe(5);
    // The exporter's own metrics rode along.
    expect(rows.some((r) => r.metric === 's3_exporter.exports')).toBe(true);

    // Durations in seconds, in the buckets the HTTP semantic conventions advise for them (the
    // SDK's default boundaries, 0 to 10000, are for milliseconds: every request would fall in
    // the first bucket, 0 to 5 s). /slow waits 50 ms: none of it in a bucket up to 25 ms.
    const newest = counts[0]?.time;
    const slow = rows.find(
      (r) =>
        r.metric === 'http.server.request.duration' &&
        r.time === newest &&
        r.attributes['http.route'] === '/slow',
    );
    const buckets = slow?.buckets as HistogramBuckets | undefined;
    expect(buckets?.explicitBounds).toEqual([
      0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
    ]);
    expect(buckets?.bucketCounts.slice(0, 3)).toEqual([0, 0, 0]);
    expect(slow?.count).toBe(3);
  });

  test('SIGTERM under keep-alive traffic that never pauses: every answered request is in S3, exit 0', async () => {
    // A load balancer keeps its connections busy: server.close() alone would wait for them for
    // good (before: exit 1 at the 12 s deadline, nothing stored, nothing said).
    const { child, port } = await startService('keep-alive');
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    let answered = 0;
    let stopped = false;
    // Four clients, each sending its next request as soon as the last is answered, until the
    // service stops answering; a slow request (50 ms) keeps each connection busy most of the time.
    const clients = Array.from({ length: 4 }, async (_, i) => {
      for (let n = i; !stopped; n++) {
        const status = await get(port, n % 2 === 0 ? '/slow' : '/', agent).catch(() => 0);
        if (status === 200) answered++;
        else if (status === 0) await new Promise((r) => setTimeout(r, 20));
      }
    });
    await new Promise((r) => setTimeout(r, 500));
    const signalled = performance.now();
    child.process.kill('SIGTERM');
    const exit = await child.exited;
    stopped = true;
    await Promise.all(clients);
    agent.destroy();
    expect(exit.code, child.stderr()).toBe(0);
    expect(exit.at - signalled).toBeLessThan(12_000 + 500);
    expect(answered).toBeGreaterThan(0);

    const { counts } = await newestCounts('keep-alive');
    const stored = counts
      .filter((r) => r.attributes['http.response.status_code'] === 200)
      .reduce((n, r) => n + (r.value ?? 0), 0);
    expect(stored).toBe(answered);
  });
});
