import type { S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { compactMetrics, dataPointRows, readMetrics } from '../../src/reader.js';
import {
  type Batch,
  batchAt,
  compactOptions,
  exportBatches,
  listing,
  pointsOf,
} from '../support/compaction-data.js';
import type { FaultProxy, ProxyRequest } from '../support/fault-proxy.js';
import { connection, describeS3, withS3 } from '../support/s3.js';
import { SETTLED_HOUR as HOUR } from '../support/time.js';
import { waitFor } from '../support/wait.js';

const at = (minute: number) => HOUR + minute * 60_000 + 321;
/** The first attempt's deadline (5 s) and the read's own time, with slack for a busy machine. */
const BOUND_MILLIS = 15_000;

/**
 * A server that never answers one request (a request lost on its way, a server that dropped
 * it): the reader sends it again beside it after a few seconds, and stops the silent one once
 * that answers, instead of waiting the client's idle timeout (a minute) for that one object,
 * listing page or footer.
 */
describeS3('a read request the server never answers', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  let prefixSeq = 0;
  withS3('silent-server', { kind: 'pass' }, (s) => ({ client, bucket, proxy } = s));

  const batches: Batch[] = [batchAt('api', at(5), 3, 1), batchAt('web', at(25), 2, 2)];

  async function stored(format: 'otlp-json' | 'parquet', compact = false) {
    const prefix = `s${++prefixSeq}-${Date.now().toString(36)}`;
    await exportBatches({ bucket, prefix, format }, connection(), batches);
    if (compact) {
      await compactMetrics(compactOptions(connection(), { bucket, prefix, fromMillis: HOUR }));
    }
    const keys = (await listing(client, bucket, `${prefix}/`)).map((o) => o.key);
    return { prefix, keys: keys.filter((key) => key.includes('/metrics_')) };
  }

  /** Reads `prefix` through the proxy: its points, its time, the read's stats. */
  async function readThrough(prefix: string) {
    const started = Date.now();
    const stream = readMetrics({
      bucket,
      ...connection(),
      endpoint: proxy.endpoint,
      prefix,
      partitionTime: 'data',
      onError: (p) => {
        throw p.error;
      },
    });
    let points = 0;
    for await (const object of stream) points += dataPointRows(object.request).length;
    return { points, millis: Date.now() - started, stats: stream.stats };
  }

  /**
   * The next request `match` picks gets no answer; the requests it picks from then on, once the
   * silent one was given up (the read stops it once the one sent beside it has answered).
   */
  const silent = (match: (r: ProxyRequest) => boolean) => {
    const before = proxy.attempts.length;
    proxy.once(match, { kind: 'blackhole' });
    return async () => {
      const seen = () => proxy.attempts.slice(before).filter((a) => match(a));
      await waitFor(
        () => seen()[0]?.outcome === 'client-aborted',
        5_000,
        () => `the silent request given up (${JSON.stringify(seen()[0]?.outcome)})`,
      );
      return seen();
    };
  };

  test.each([
    [
      'an object GET',
      (keys: string[]) => (r: ProxyRequest) => r.method === 'GET' && r.key === keys[1],
    ],
    ['a listing page', () => (r: ProxyRequest) => r.method === 'GET' && r.key === ''],
  ] as const)(
    '%s: asked again, every point read within seconds',
    async (_, which) => {
      const { prefix, keys } = await stored('otlp-json');
      const attempts = silent(which(keys));
      const read = await readThrough(prefix);
      expect(read.points).toBe(pointsOf(batches).length);
      expect((await attempts()).map((a) => [a.fault, a.outcome])).toEqual([
        ['blackhole', 'client-aborted'],
        ['pass', 'upstream 200'],
      ]);
      expect(read.millis).toBeLessThan(BOUND_MILLIS);
    },
    90_000,
  );

  test("a compaction output's footer, read by range: asked again, every point read once", async () => {
    const { prefix, keys } = await stored('parquet', true);
    const output = keys.find((key) => key.endsWith('.compacted.parquet'));
    expect(output).toBeDefined();
    const attempts = silent((r) => r.method === 'GET' && r.key === output);
    const read = await readThrough(prefix);
    expect(read.points).toBe(pointsOf(batches).length);
    const [first, again] = await attempts();
    expect([first?.fault, first?.outcome, again?.outcome]).toEqual([
      'blackhole',
      'client-aborted',
      'upstream 206',
    ]);
    expect(first?.headers.range).toMatch(/^bytes=\d+-\d+$/);
    expect(again?.headers.range).toBe(first?.headers.range);
    expect(read.millis).toBeLessThan(BOUND_MILLIS);
  }, 90_000);
});
