import { CopyObjectCommand, DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { UUID } from 'uuidv7';
import { expect, test } from 'vitest';
import { uuidv7Millis } from '../../src/layout/key-template.js';
import {
  compactMetrics,
  dataPointRows,
  readMetrics,
  type UnreadableObject,
} from '../../src/reader.js';
import {
  type Batch,
  batchAt,
  compactOptions,
  exportBatches,
  listing,
} from '../support/compaction-data.js';
import type { FaultProxy } from '../support/fault-proxy.js';
import { connection, describeS3, testClient, withS3 } from '../support/s3.js';
import { SETTLED_HOUR as HOUR } from '../support/time.js';
import { waitFor } from '../support/wait.js';

const at = (minute: number) => HOUR + minute * 60_000 + 123;
const UUID_IN_KEY = /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/;

/** A UUIDv7 of this millisecond whose random bits are the largest less `below`. */
const idAt = (millis: number, below: number) =>
  UUID.fromFieldsV7(millis, 0xfff, 2 ** 30 - 1, 2 ** 32 - 1 - below).toString();

/**
 * A reader pages through an hour while a compaction replaces an output of it with a new one.
 * Objects of one millisecond sort by their random bits: were the new output named below an
 * object the reader has listed, and the output it replaces above it, the reader would list
 * neither output and miss the replaced one's points without a word.
 */
describeS3('an output is named after every object it replaces', () => {
  let client: S3Client;
  let bucket: string;
  let proxy: FaultProxy;
  withS3('output-order', { kind: 'pass' }, (s) => ({ client, bucket, proxy } = s));

  /** Copies `from` to `to` (server side) and deletes `from`. */
  async function move(from: string, to: string): Promise<void> {
    await client.send(
      new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: `${bucket}/${from}` }),
    );
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: from }));
  }

  /** The one object exported under a scratch prefix, moved into the hour beside `beside`. */
  async function exportedAs(scratch: string, beside: string, id: string): Promise<string> {
    const [exported] = await listing(client, bucket, `${scratch}/`);
    if (exported === undefined) throw new Error('nothing exported');
    const name = exported.key.slice(exported.key.lastIndexOf('/') + 1).replace(UUID_IN_KEY, id);
    const key = beside.slice(0, beside.lastIndexOf('/') + 1) + name;
    await move(exported.key, key);
    return key;
  }

  test('a read paging past an object of the same millisecond sees the new output: every point once', async () => {
    const prefix = `o-${Date.now().toString(36)}`;
    const first = batchAt('api', at(5), 3, 1);
    const late = batchAt('web', at(20), 2, 2);
    const seen = batchAt('db', at(40), 2, 3);
    const where = { bucket, prefix, fromMillis: HOUR };

    // The hour's first output A, named as if its random bits were the largest of its millisecond.
    await exportBatches({ bucket, prefix, format: 'parquet' }, connection(), [first]);
    await compactMetrics(compactOptions(connection(), where));
    const [made] = (await listing(client, bucket, `${prefix}/`))
      .map((o) => o.key)
      .filter((key) => key.endsWith('.compacted.parquet'));
    if (made === undefined) throw new Error('no output');
    const millis = uuidv7Millis(UUID_IN_KEY.exec(made)?.[0] ?? '');
    const output = made.replace(UUID_IN_KEY, idAt(millis, 0));
    await move(made, output);

    // A late object sealed in A's millisecond, just below A: the next compaction merges the two.
    await exportBatches({ bucket, prefix: `${prefix}-late`, format: 'parquet' }, connection(), [
      late,
    ]);
    const lateKey = await exportedAs(`${prefix}-late`, output, idAt(millis, 1));
    await exportBatches({ bucket, prefix: `${prefix}-seen`, format: 'parquet' }, connection(), [
      seen,
    ]);

    // The compaction's output PUT waits until the reader has listed `seen`.
    let listed: () => void = () => {};
    const readerListed = new Promise<void>((resolve) => (listed = resolve));
    proxy.once((r) => r.method === 'PUT' && r.key.endsWith('.compacted.parquet'), {
      kind: 'hold',
      until: readerListed,
    });
    const compacting = compactMetrics(
      compactOptions({ ...connection(), endpoint: proxy.endpoint }, where),
    );
    const held = () => proxy.attempts.some((a) => a.outcome === 'held');
    await waitFor(held, 20_000, "the compaction's output PUT");
    // Sealed in the same millisecond and stored after the compaction listed the hour: the
    // reader lists it first, the compaction neither reads nor deletes it.
    const seenKey = await exportedAs(`${prefix}-seen`, output, idAt(millis, 2));

    // The reader lists one key a page; the page after the one with `seen` waits for the compaction.
    const reader = testClient();
    let pastSeen = false;
    let compacted: Promise<unknown> | undefined;
    reader.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'ListObjectsV2Command') return next(args);
        (args.input as { MaxKeys?: number }).MaxKeys = 1;
        if (pastSeen && compacted === undefined) {
          listed();
          compacted = compacting;
          await compacting;
        }
        const answer = await next(args);
        const contents = (answer.output as { Contents?: { Key?: string }[] }).Contents ?? [];
        if (contents.some((c) => c.Key === seenKey)) pastSeen = true;
        return answer;
      },
      { step: 'initialize', name: 'onePerPage' },
    );
    const problems: UnreadableObject[] = [];
    const points = new Map<string, number>();
    try {
      const stream = readMetrics({
        bucket,
        s3Client: reader,
        prefix,
        partitionTime: 'data',
        onError: (p) => problems.push(p),
      });
      for await (const object of stream) {
        for (const row of dataPointRows(object.request)) {
          const service = String(row.resource['service.name']);
          points.set(service, (points.get(service) ?? 0) + 1);
        }
      }
    } finally {
      reader.destroy();
    }
    expect(compacted).toBeDefined();
    const after = (await listing(client, bucket, `${prefix}/`)).map((o) => o.key);
    expect(after).not.toContain(output);
    expect(after).not.toContain(lateKey);
    expect(after).toContain(seenKey);
    expect(problems.map((p) => [p.key, p.stage])).toEqual([]);
    // Was the points of `seen` alone: A and the late object deleted, the new output behind.
    expect(Object.fromEntries(points)).toEqual(countsOf([first, late, seen]));
  });
});

/** Points by service, as the test exported them. */
function countsOf(batches: Batch[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const b of batches)
    for (const p of b.points) counts[p.service] = (counts[p.service] ?? 0) + 1;
  return counts;
}
