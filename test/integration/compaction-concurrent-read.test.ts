import type { S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import {
  compactMetrics,
  dataPointRows,
  ObjectGoneError,
  readMetrics,
  type UnreadableObject,
} from '../../src/reader.js';
import { lines, runCliChild } from '../support/cli-child.js';
import {
  type Batch,
  batchAt,
  compactOptions,
  exportBatches,
  listing,
  pointsOf,
} from '../support/compaction-data.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import { cliEnvironment, connection, describeS3, s3Environment, withS3 } from '../support/s3.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../support/time.js';
import { waitFor } from '../support/wait.js';

const at = (minute: number) => HOUR + minute * 60_000 + 123;
const GONE =
  'deleted after it was listed (a compaction replaced it during this read?): read again for exact counts';

/**
 * A read that lists an hour before a compaction of it and fetches its Parquet objects after:
 * the compactor has deleted them (they are always deleted once an output replaces them).
 */
describeS3('a read while a compaction replaces the hour it reads', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  let prefixSeq = 0;
  withS3('concurrent-read', { kind: 'pass' }, (s) => ({ client, bucket, proxy } = s));

  const batches: Batch[] = [
    batchAt('api', at(5), 4, 1),
    batchAt('web', at(15), 3, 2),
    batchAt('api', at(25), 4, 3),
  ];

  /**
   * Exports the batches to a fresh prefix; runs `read` through the proxy, which holds the GETs
   * of the inputs until the hour is compacted (straight to the server). What `read` gave, the
   * inputs, and the points a read after the compaction counts.
   */
  async function readDuringCompaction<T>(read: (prefix: string) => Promise<T>) {
    const prefix = `g${++prefixSeq}-${Date.now().toString(36)}`;
    await exportBatches({ bucket, prefix, format: 'parquet' }, connection(), batches);
    const inputs = (await listing(client, bucket, `${prefix}/`)).map((o) => o.key);
    let compacted: () => void = () => {};
    const until = new Promise<void>((resolve) => (compacted = resolve));
    for (const key of inputs) {
      proxy.once((r) => r.method === 'GET' && r.key === key, { kind: 'hold', until });
    }
    const reading = read(prefix);
    const held = () => proxy.attempts.filter((a) => a.fault === 'hold').length;
    const before = held();
    await waitFor(() => held() === before + inputs.length, 20_000, "the read's GETs");
    const report = await compactMetrics(
      compactOptions(connection(), { bucket, prefix, fromMillis: HOUR }),
    );
    expect(report.partitions.map((p) => [p.status, p.deleted])).toEqual([
      ['compacted', inputs.length],
    ]);
    compacted();
    const result = await reading;
    let after = 0;
    const options = { bucket, ...connection(), prefix, partitionTime: 'data' } as const;
    for await (const object of readMetrics(options)) after += dataPointRows(object.request).length;
    return { result, inputs, after };
  }

  test('readMetrics: each input deleted under it goes to onError as deleted since the listing, counted unreadable; the next read is exact', async () => {
    const { result, inputs, after } = await readDuringCompaction(async (prefix) => {
      const problems: UnreadableObject[] = [];
      const stream = readMetrics({
        bucket,
        ...connection(),
        endpoint: proxy.endpoint,
        prefix,
        partitionTime: 'data',
        onError: (p) => problems.push(p),
      });
      let points = 0;
      for await (const object of stream) points += dataPointRows(object.request).length;
      return { points, problems, stats: stream.stats };
    });
    expect(result.points).toBe(0);
    expect(result.problems.map((p) => [p.key, p.stage, p.error.message])).toEqual(
      inputs.map((key) => [key, 'fetch', GONE]),
    );
    expect(result.problems.every((p) => p.error instanceof ObjectGoneError)).toBe(true);
    expect(result.stats).toMatchObject({
      objects: inputs.length,
      objectsRead: 0,
      objectsUnreadable: inputs.length,
    });
    expect(after).toBe(pointsOf(batches).length);
  });

  test('otel-s3 stats: each input deleted under it is named as deleted since the listing; exit code 1', async () => {
    const cwd = await makeTempDir('otel-s3-concurrent-read-');
    const { result, inputs, after } = await readDuringCompaction((prefix) =>
      runCliChild(['stats', '--partition-time', 'data'], {
        cwd,
        env: { ...cliEnvironment(bucket, prefix), ...s3Environment(proxy.endpoint) },
      }).finally(() => removeDir(cwd)),
    );
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      ...inputs.map((key) => `otel-s3: cannot read ${key} (fetch): ${GONE}`),
      `otel-s3: ${inputs.length} objects of ${inputs.length} objects could not be read and were skipped (see above)`,
    ]);
    expect(after).toBe(pointsOf(batches).length);
  });
  test('readMetrics: an output whose footer read failed (503s) is not read after its kept inputs: every point once, the output named', async () => {
    const prefix = `f${++prefixSeq}-${Date.now().toString(36)}`;
    // OTLP inputs, kept by the compaction: the output replaces them for good.
    await exportBatches({ bucket, prefix, format: 'otlp-json' }, connection(), batches);
    await compactMetrics(compactOptions(connection(), { bucket, prefix, fromMillis: HOUR }));
    const [output] = (await listing(client, bucket, `${prefix}/`))
      .map((o) => o.key)
      .filter((key) => key.endsWith('.compacted.parquet'));
    // The footer's GET and the SDK's two retries answered 503; the next GET of it would pass.
    for (let attempt = 0; attempt < 3; attempt++) {
      proxy.once((r) => r.method === 'GET' && r.key === output, {
        kind: 'status',
        status: 503,
        code: 'SlowDown',
      });
    }
    const problems: UnreadableObject[] = [];
    const stream = readMetrics({
      bucket,
      ...connection(),
      endpoint: proxy.endpoint,
      prefix,
      partitionTime: 'data',
      onError: (p) => problems.push(p),
    });
    let points = 0;
    for await (const object of stream) points += dataPointRows(object.request).length;
    // Was twice the points: the inputs (the footer's list unknown) and then the output.
    expect(points).toBe(pointsOf(batches).length);
    expect(problems.map((p) => [p.key, p.stage])).toEqual([[output, 'fetch']]);
    expect(problems[0]?.error.message).toMatch(/read again for exact counts/);
  });
  test('compactMetrics: an output whose footer GETs fail (503s) holds back its hour; its kept inputs are never merged into a second output', async () => {
    const prefix = `h${++prefixSeq}-${Date.now().toString(36)}`;
    await exportBatches({ bucket, prefix, format: 'otlp-json' }, connection(), batches);
    const where = { bucket, prefix, fromMillis: HOUR };
    await compactMetrics(compactOptions(connection(), where));
    const outputs = async () =>
      (await listing(client, bucket, `${prefix}/`))
        .map((o) => o.key)
        .filter((key) => key.endsWith('.compacted.parquet'));
    const [output] = await outputs();
    // Both listings of the run (the plan's, then the hour's under its lease) find the footer's
    // GET and the SDK's two retries answered 503.
    for (let attempt = 0; attempt < 6; attempt++) {
      proxy.once((r) => r.method === 'GET' && r.key === output, {
        kind: 'status',
        status: 503,
        code: 'SlowDown',
      });
    }
    await compactMetrics(compactOptions({ ...connection(), endpoint: proxy.endpoint }, where));
    // Was a second output of the kept OTLP objects beside the first: every point twice.
    expect(await outputs()).toEqual([output]);
    const again = await compactMetrics(compactOptions(connection(), where));
    expect(again.partitions.map((p) => p.written.length)).toEqual([]);
    let points = 0;
    const options = { bucket, ...connection(), prefix, partitionTime: 'data' } as const;
    for await (const object of readMetrics(options)) points += dataPointRows(object.request).length;
    expect(points).toBe(pointsOf(batches).length);
  });
});
