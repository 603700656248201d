import { rm } from 'node:fs/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeEach, expect, test } from 'vitest';
import {
  type CompactMetricsOptions,
  ConditionalWritesUnsupportedError,
  compactMetrics,
} from '../../src/compact/index.js';
import { dataPointRows, readMetrics } from '../../src/reader.js';
import {
  type Batch,
  batchAt,
  compactOptions,
  duckdbPointTexts,
  exportBatches,
  listing,
  mirrorOf,
  pointsOf,
  putRaw,
  sorted,
} from '../support/compaction-data.js';
import { duckdbRows } from '../support/duckdb.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import {
  connection,
  describeS3,
  s3Environment,
  s3Server,
  testClient,
  withS3,
} from '../support/s3.js';
import { SETTLED_HOUR } from '../support/time.js';

/** The hour the tests compact: two days ago, long settled. */
const HOUR = SETTLED_HOUR;
const at = (minute: number) => HOUR + minute * 60_000 + 123;

describeS3('compaction against a real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  const dirs: string[] = [];
  let prefixSeq = 0;
  let prefix: string;

  withS3('compaction', { kind: 'pass' }, (s) => ({ client, bucket, proxy } = s));
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    prefix = `c${++prefixSeq}-${Date.now().toString(36)}`;
    await proxy.set({ kind: 'pass' });
  });

  /** The compactor's options for this test's prefix and hour; through the proxy unless told. */
  const options = (extra: Partial<CompactMetricsOptions> = {}) =>
    compactOptions(
      connection(),
      { bucket, prefix, fromMillis: HOUR },
      { endpoint: proxy.endpoint, ...extra },
    );
  const exportAs = (
    format: 'parquet' | 'otlp-json' | 'otlp-proto',
    batches: Batch[],
    compression?: 'zstd' | 'gzip' | 'none',
  ) => exportBatches({ bucket, prefix, format, compression }, connection(), batches);
  const keys = async () => (await listing(client, bucket, `${prefix}/`)).map((o) => o.key);
  const outputs = async () => (await keys()).filter((k) => k.endsWith('.compacted.parquet'));
  /** The Parquet files of the prefix as DuckDB reads them (a mirror of the bucket). */
  const duckdbPoints = async () => {
    const dir = await mirrorOf(client, bucket, `${prefix}/`);
    dirs.push(dir);
    return sorted(await duckdbPointTexts(dir, `${prefix}/**/*.parquet`));
  };
  /** Data points as this package's reader counts them, in both default layouts. */
  const readerPoints = async (format: 'parquet' | 'otlp-json') => {
    let points = 0;
    const stream = readMetrics({ bucket, ...connection(), prefix, format, partitionTime: 'data' });
    for await (const object of stream) points += dataPointRows(object.request).length;
    return points;
  };
  const writes = () => proxy.attempts.filter((a) => a.method !== 'GET' && a.method !== 'HEAD');

  test('Parquet and OTLP inputs of every format and compression become one sorted output that DuckDB reads as recorded', async () => {
    const parquet = [
      batchAt('api', at(1), 5, 1),
      batchAt('web', at(11), 4, 2),
      batchAt('api', at(21), 5, 3),
    ];
    await exportAs('parquet', parquet);
    const otlp: Batch[] = [];
    let minute = 30;
    for (const format of ['otlp-json', 'otlp-proto'] as const) {
      for (const compression of ['zstd', 'gzip', 'none'] as const) {
        const batch = batchAt(`${format}-${compression}`, at(minute++), 3, minute);
        otlp.push(batch);
        await exportAs(format, [batch], compression);
      }
    }
    const before = await keys();
    expect(before).toHaveLength(9);

    const report = await compactMetrics(options());
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted']);
    const [partition] = report.partitions;
    expect(partition?.read.points).toBe(pointsOf([...parquet, ...otlp]).length);
    expect(partition?.skipped).toEqual([]);

    const after = await keys();
    const written = await outputs();
    expect(written).toHaveLength(1);
    // The exporter's Parquet files are gone; the OTLP objects are kept.
    expect(after.filter((k) => k.endsWith('.parquet') && !written.includes(k))).toEqual([]);
    expect(
      after.filter((k) => !k.endsWith('.parquet') && !k.includes('/_otel_s3_compaction/')),
    ).toEqual(before.filter((k) => !k.endsWith('.parquet')));
    expect(await duckdbPoints()).toEqual(pointsOf([...parquet, ...otlp]));
    // This package's reader reads the output and skips the kept OTLP objects it replaces.
    expect(await readerPoints('otlp-json')).toBe(pointsOf([...parquet, ...otlp]).length);

    // Sorted by service then metric: the row order DuckDB reads from the file.
    const dir = await mirrorOf(client, bucket, written[0] as string);
    dirs.push(dir);
    const order = (
      await duckdbRows(`SELECT ServiceName, MetricName FROM read_parquet('${dir}/${written[0]}')`)
    ).map((r) => [String(r.ServiceName), String(r.MetricName)] as const);
    const byServiceThenMetric = (a: readonly [string, string], b: readonly [string, string]) =>
      a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
    expect(order).toEqual([...order].sort(byServiceThenMetric));
  });

  test('a compactor killed after the output PUT, before the deletes: the reader counts once, a rerun deletes the inputs and writes no second output', async () => {
    const { spawnTs } = await import('../support/child.js');
    const { childConnectionEnv } = await import('../support/children/connection.js');
    const batches = [
      batchAt('api', at(2), 4, 1),
      batchAt('api', at(12), 4, 2),
      batchAt('db', at(22), 3, 3),
    ];
    await exportAs('parquet', batches);
    const inputs = await keys();
    const child = spawnTs('test/support/children/compaction-killpoint.ts', {
      ...childConnectionEnv(s3Server?.endpoint, bucket, s3Server),
      S3_PREFIX: prefix,
      COMPACT_FROM: new Date(HOUR).toISOString(),
      KILL_POINT: 'before-deletes',
    });
    const stopped = await child.waitForJson<{ killpoint?: string; output: string }>(
      (v) => v.killpoint !== undefined,
    );
    child.process.kill('SIGKILL');
    await child.exited;
    // The window: the output and its inputs both stored.
    expect(await outputs()).toEqual([stopped.output]);
    expect(inputs.every((k) => k !== stopped.output)).toBe(true);
    expect((await keys()).filter((k) => inputs.includes(k))).toEqual(inputs);
    expect(await readerPoints('parquet')).toBe(pointsOf(batches).length);
    // An engine that globs *.parquet sees both until the rerun (documented).
    expect((await duckdbPoints()).length).toBe(2 * pointsOf(batches).length);

    await new Promise((resolve) => setTimeout(resolve, 2_100)); // the dead run's lease expires
    const report = await compactMetrics(options());
    expect(report.partitions.map((p) => [p.status, p.deleted, p.written.length])).toEqual([
      ['finished', inputs.length, 0],
    ]);
    expect(await outputs()).toEqual([stopped.output]);
    expect((await keys()).filter((k) => inputs.includes(k))).toEqual([]);
    expect(await duckdbPoints()).toEqual(pointsOf(batches));
  });

  test('two compactors racing on one hour: one writes, the other finds the hour busy', async () => {
    const batches = [batchAt('api', at(3), 4, 1), batchAt('web', at(13), 4, 2)];
    await exportAs('parquet', batches);
    // Both reach the lease at the same moment: each waits at its first lease PUT for the other.
    let arrived = 0;
    let release: () => void = () => {};
    const bothThere = new Promise<void>((resolve) => {
      release = resolve;
    });
    const racer = () => {
      const c = testClient();
      const send = c.send.bind(c) as (command: unknown, o?: unknown) => Promise<unknown>;
      let waited = false;
      (c as { send: unknown }).send = async (command: unknown, o?: unknown) => {
        if (
          !waited &&
          command instanceof PutObjectCommand &&
          command.input.Key?.includes('/leases/')
        ) {
          waited = true;
          if (++arrived === 2) release();
          await bothThere;
        }
        return send(command, o);
      };
      return compactMetrics(options({ s3Client: c, endpoint: undefined }));
    };
    const [a, b] = await Promise.all([racer(), racer()]);
    const statuses = [a.partitions[0]?.status, b.partitions[0]?.status].sort();
    expect(statuses).toEqual(['busy', 'compacted']);
    expect(await outputs()).toHaveLength(1);
    expect(await duckdbPoints()).toEqual(pointsOf(batches));
  });

  test('a late file is merged by the next run into a new output that replaces the old one; kept OTLP objects stay replaced', async () => {
    const first = [batchAt('api', at(4), 4, 1)];
    const otlp = [batchAt('edge', at(14), 3, 2)];
    await exportAs('parquet', first);
    await exportAs('otlp-json', otlp);
    await compactMetrics(options());
    const [old] = await outputs();

    const late = [batchAt('api', at(54), 4, 9)];
    await exportAs('parquet', late);
    const report = await compactMetrics(options());
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted']);
    const now = await outputs();
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(old);
    expect(await duckdbPoints()).toEqual(pointsOf([...first, ...otlp, ...late]));
    // The first output replaced the OTLP object; the new one replaces it still.
    expect(await readerPoints('otlp-json')).toBe(pointsOf([...first, ...otlp, ...late]).length);
  });

  test('corrupt inputs are skipped, named and kept; the rest is compacted; the next run writes nothing', async () => {
    const good = [batchAt('api', at(5), 4, 1), batchAt('web', at(15), 4, 2)];
    await exportAs('parquet', good);
    const [sample] = await keys();
    const hourDir = (sample as string).slice(0, (sample as string).lastIndexOf('/'));
    const badParquet = `${hourDir}/metrics_${uuidv7()}.parquet`;
    await putRaw(client, bucket, badParquet, new TextEncoder().encode('PAR1 not really PAR1'));
    const badZstd = `${hourDir}/minute=40/metrics_${uuidv7()}.json.zst`;
    await putRaw(client, bucket, badZstd, new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]));

    const report = await compactMetrics(options());
    const [partition] = report.partitions;
    expect(partition?.status).toBe('compacted');
    expect(partition?.skipped.map((s) => s.key).sort()).toEqual([badParquet, badZstd].sort());
    const left = await keys();
    expect(left).toContain(badParquet);
    expect(left).toContain(badZstd);
    // DuckDB would refuse the bad file: read the outputs only.
    const dir = await mirrorOf(client, bucket, `${prefix}/`);
    dirs.push(dir);
    expect(sorted(await duckdbPointTexts(dir, `${prefix}/**/*.compacted.parquet`))).toEqual(
      pointsOf(good),
    );

    proxy.attempts.length = 0;
    const snapshot = await listing(client, bucket, `${prefix}/`);
    const again = await compactMetrics(options());
    expect(again.partitions.map((p) => [p.status, p.skippedEarlier])).toEqual([
      ['nothing-to-do', 2],
    ]);
    expect(writes()).toEqual([]);
    expect(await listing(client, bucket, `${prefix}/`)).toEqual(snapshot);
  });

  test('--dry-run prints the plan and writes nothing', async () => {
    const { compactInChild } = await import('../support/cli-child.js');
    await exportAs('parquet', [batchAt('api', at(6), 3, 1), batchAt('api', at(16), 3, 2)]);
    const snapshot = await listing(client, bucket, `${prefix}/`);
    proxy.attempts.length = 0;
    const run = await compactInChild(
      { bucket, prefix, fromMillis: HOUR },
      s3Environment(proxy.endpoint),
      ['--dry-run'],
    );
    expect(run.stderr).toContain('nothing was written');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/hour=\d\d {2}planned {2}merge 2 objects/);
    expect(writes()).toEqual([]);
    expect(await listing(client, bucket, `${prefix}/`)).toEqual(snapshot);
  });

  test('a second run changes nothing: same listing, same ETags, no write requests', async () => {
    await exportAs('parquet', [batchAt('api', at(7), 3, 1), batchAt('web', at(17), 3, 2)]);
    await exportAs('otlp-proto', [batchAt('edge', at(27), 3, 3)]);
    await compactMetrics(options());
    const snapshot = await listing(client, bucket, `${prefix}/`);
    proxy.attempts.length = 0;
    const again = await compactMetrics(options());
    expect(again.partitions).toEqual([]);
    expect(again.partitionsSelected).toBe(1);
    expect(writes()).toEqual([]);
    expect(await listing(client, bucket, `${prefix}/`)).toEqual(snapshot);
  });

  test('the probe PUT answered 412 for a key nothing has: the run refuses; answered 412 by the SDK retry of a probe that landed: the run compacts', async () => {
    const batches = [batchAt('api', at(9), 3, 1), batchAt('web', at(19), 3, 2)];
    await exportAs('parquet', batches);
    const snapshot = await listing(client, bucket, `${prefix}/`);
    const probePut = (r: { method: string; key: string }) =>
      r.method === 'PUT' && r.key.endsWith('.probe');
    proxy.once(probePut, { kind: 'status', status: 412, code: 'PreconditionFailed' });
    await expect(compactMetrics(options())).rejects.toThrow(ConditionalWritesUnsupportedError);
    expect(await listing(client, bucket, `${prefix}/`)).toEqual(snapshot);

    proxy.attempts.length = 0;
    proxy.once(probePut, { kind: 'lose-response' });
    const report = await compactMetrics(options());
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted']);
    // The first PUT landed unanswered; the SDK's retry and the second write were refused.
    expect(proxy.attempts.filter(probePut).map((a) => [a.outcome, a.upstreamStatus])).toEqual([
      ['lost-response', 200],
      ['upstream 412', 412],
      ['upstream 412', 412],
    ]);
    expect((await keys()).filter((k) => k.endsWith('.probe'))).toEqual([]);
    expect(await duckdbPoints()).toEqual(pointsOf(batches));
  });

  test("an output's name taken by another object stops the hour, that object untouched; taken by our own PUT (its answer lost, the SDK retried) the output is checked and replaces its inputs", async () => {
    const batches = [batchAt('api', at(4), 4, 1), batchAt('db', at(14), 3, 2)];
    await exportAs('parquet', batches);
    const inputs = await keys();
    const isOutput = (key: string | undefined) => key?.endsWith('.compacted.parquet') === true;
    // Another object lands at the output's name just before its PUT.
    const squatter = testClient();
    const send = squatter.send.bind(squatter) as (c: unknown, o?: unknown) => Promise<unknown>;
    (squatter as { send: unknown }).send = async (command: unknown, o?: unknown) => {
      if (command instanceof PutObjectCommand && isOutput(command.input.Key)) {
        const { Key } = command.input;
        await send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'not an output' }));
      }
      return send(command, o);
    };
    const refused = await compactMetrics(options({ s3Client: squatter, endpoint: undefined }));
    expect(refused.partitions.map((p) => [p.status, p.error])).toEqual([
      ['failed', expect.stringMatching(/exists already$/)],
    ]);
    const [squatted] = await outputs();
    const body = await client.send(new GetObjectCommand({ Bucket: bucket, Key: squatted }));
    expect(await body.Body?.transformToString()).toBe('not an output');
    expect((await keys()).filter((k) => inputs.includes(k))).toEqual(inputs);
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: squatted }));

    proxy.attempts.length = 0;
    proxy.once((r) => r.method === 'PUT' && isOutput(r.key), { kind: 'lose-response' });
    const report = await compactMetrics(options());
    expect(report.partitions.map((p) => [p.status, p.written.length, p.deleted])).toEqual([
      ['compacted', 1, inputs.length],
    ]);
    const outputPuts = proxy.attempts.filter((a) => a.method === 'PUT' && isOutput(a.key));
    expect(outputPuts.map((a) => [a.outcome, a.upstreamStatus])).toEqual([
      ['lost-response', 200],
      ['upstream 412', 412],
    ]);
    expect(await outputs()).toEqual([outputPuts[0]?.key]);
    expect(await duckdbPoints()).toEqual(pointsOf(batches));
    expect(await readerPoints('parquet')).toBe(pointsOf(batches).length);
  });

  test('a server without conditional writes: the run refuses and writes nothing, unless it is the only writer', async () => {
    const batches = [batchAt('api', at(8), 3, 1), batchAt('api', at(18), 3, 2)];
    await exportAs('parquet', batches);
    const snapshot = await listing(client, bucket, `${prefix}/`);
    await proxy.set({ kind: 'reject-conditional' });
    await expect(compactMetrics(options())).rejects.toThrow(ConditionalWritesUnsupportedError);
    expect(await listing(client, bucket, `${prefix}/`)).toEqual(snapshot);

    const report = await compactMetrics(options({ singleWriter: true }));
    expect(report.partitions.map((p) => p.status)).toEqual(['compacted']);
    expect(await duckdbPoints()).toEqual(pointsOf(batches));
  });
});
