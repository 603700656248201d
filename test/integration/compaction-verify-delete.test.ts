import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { compactMetrics, dataPointRows, readMetrics } from '../../src/reader.js';
import {
  type Batch,
  batchAt,
  compactOptions,
  exportBatches,
  listing,
  pointsOf,
  putRaw,
} from '../support/compaction-data.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import { connection, describeS3, withS3 } from '../support/s3.js';
import { SETTLED_HOUR as HOUR } from '../support/time.js';

const at = (minute: number) => HOUR + minute * 60_000 + 123;

/**
 * Verify before delete: a Parquet input that an output replaces is deleted only once its footer
 * was read and its rows equal those the output recorded for it. A check that cannot be done
 * keeps the object for a later run.
 */
describeS3('compaction deletes nothing it has not checked', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  let prefixSeq = 0;
  withS3('verify-delete', { kind: 'pass' }, (s) => ({ client, bucket, proxy } = s));

  const batches: Batch[] = [
    batchAt('api', at(5), 4, 1),
    batchAt('web', at(15), 3, 2),
    batchAt('api', at(25), 4, 3),
  ];

  const bytesOf = async (key: string): Promise<Uint8Array> => {
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
  };
  const keys = async (prefix: string) =>
    (await listing(client, bucket, `${prefix}/`)).map((o) => o.key);
  const points = async (prefix: string) => {
    let n = 0;
    const options = { bucket, ...connection(), prefix, partitionTime: 'data' } as const;
    for await (const object of readMetrics(options)) n += dataPointRows(object.request).length;
    return n;
  };

  /**
   * The batches exported as Parquet and compacted; then the inputs put back as they were, the
   * state of a run that stopped after its output and before its deletes. The inputs' keys and
   * bytes.
   */
  async function stoppedBeforeDeletes(prefix: string) {
    await exportBatches({ bucket, prefix, format: 'parquet' }, connection(), batches);
    const inputs = await keys(prefix);
    const saved = await Promise.all(inputs.map(bytesOf));
    const first = await compactMetrics(
      compactOptions(connection(), { bucket, prefix, fromMillis: HOUR }),
    );
    expect(first.partitions.map((p) => [p.status, p.deleted])).toEqual([
      ['compacted', inputs.length],
    ]);
    for (const [i, key] of inputs.entries())
      await putRaw(client, bucket, key, saved[i] as Uint8Array);
    return { inputs, saved };
  }

  test('a footer GET that fails (503s) at check time keeps its input for the next run', async () => {
    const prefix = `f${++prefixSeq}-${Date.now().toString(36)}`;
    const { inputs } = await stoppedBeforeDeletes(prefix);
    const [victim] = inputs as [string];
    // The footer's GET and the SDK's two retries answered 503.
    for (let attempt = 0; attempt < 3; attempt++) {
      proxy.once((r) => r.method === 'GET' && r.key === victim, {
        kind: 'status',
        status: 503,
        code: 'SlowDown',
      });
    }
    const where = { bucket, prefix, fromMillis: HOUR };
    const faulted = await compactMetrics(
      compactOptions({ ...connection(), endpoint: proxy.endpoint }, where),
    );
    const refused = proxy.attempts.filter((a) => a.key === victim && a.fault === 'status');
    expect(refused.length).toBe(3);
    // Was: deleted with the others, its rows never checked.
    expect(await keys(prefix)).toContain(victim);
    expect(faulted.partitions.map((p) => p.deleted)).toEqual([inputs.length - 1]);
    expect(faulted.partitions.flatMap((p) => p.notDeleted.map((n) => n.key))).toEqual([victim]);
    // The next run checks it and deletes it.
    const next = await compactMetrics(compactOptions(connection(), where));
    expect(next.partitions.map((p) => [p.deleted, p.notDeleted.length])).toEqual([[1, 0]]);
    expect(await keys(prefix)).not.toContain(victim);
    expect(await points(prefix)).toBe(pointsOf(batches).length);
  });

  test('an input kept by its check is not deleted later as a superseded object', async () => {
    const prefix = `s${++prefixSeq}-${Date.now().toString(36)}`;
    const { inputs, saved } = await stoppedBeforeDeletes(prefix);
    const [odd] = inputs as [string];
    // Under the first input's key, other rows (the second input's: 3 series, not 4): its check
    // against the count the output recorded fails, and it is kept.
    const oddBytes = saved[1] as Uint8Array;
    await putRaw(client, bucket, odd, oddBytes);
    // A late object of the hour: the next run merges it, with the earlier output if it can.
    const late = batchAt('late', at(45), 2, 4);
    await exportBatches({ bucket, prefix, format: 'parquet' }, connection(), [late]);
    const where = { bucket, prefix, fromMillis: HOUR };
    const second = await compactMetrics(compactOptions(connection(), where));
    expect(second.partitions.flatMap((p) => p.notDeleted.map((n) => n.key))).toEqual([odd]);
    const third = await compactMetrics(compactOptions(connection(), where));
    // Was: the second run merged the earlier output (the only record of the rows it read from
    // `odd`) into a new one that lists `odd` as superseded, and the third deleted it unchecked.
    expect(await keys(prefix)).toContain(odd);
    expect(await bytesOf(odd)).toEqual(oddBytes);
    expect(third.partitions.map((p) => p.deleted)).toEqual([0]);
    expect(await points(prefix)).toBe(pointsOf([...batches, late]).length);
  });
});
