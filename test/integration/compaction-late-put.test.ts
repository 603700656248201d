import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { compactMetrics, dataPointRows, readMetrics } from '../../src/reader.js';
import {
  batchAt,
  compactOptions,
  exportBatches,
  listing,
  pointsOf,
} from '../support/compaction-data.js';
import { connection, describeS3, testClient, withS3 } from '../support/s3.js';
import { s3Error } from '../support/s3-error.js';
import { SETTLED_HOUR } from '../support/time.js';

/**
 * An output PUT whose fate the compactor cannot know: the server answers 409
 * ConditionalRequestConflict (a write of the key in flight: the SDK's first attempt, whose answer
 * was lost) and stores that write a moment later. The run stops the hour; it must not hand the
 * hour over before that write could land, or the next run merges the same inputs into an output
 * of its own, and both replace them (every point twice, for good).
 */
describeS3('compaction: an output PUT still in flight when its run stops', () => {
  let client: S3Client;
  let bucket: string;
  withS3('late-put', (s) => ({ client, bucket } = s));

  const at = (minute: number) => SETTLED_HOUR + minute * 60_000 + 123;
  const lease = { leaseMillis: 2_000, leaseClockSkewMillis: 0 };

  test('the hour stays leased until the lease runs out; the output that lands is the only one', {
    timeout: 60_000,
  }, async () => {
    const prefix = `late-put-${Date.now().toString(36)}`;
    const batches = Array.from({ length: 4 }, (_, i) =>
      batchAt(`svc${i % 2}`, at(i * 5), 4, i + 1),
    );
    await exportBatches({ bucket, prefix, format: 'parquet' }, connection(), batches);
    const expected = pointsOf(batches).length;
    const where = { bucket, prefix, fromMillis: SETTLED_HOUR };

    const late: Promise<unknown>[] = [];
    const lagging = testClient();
    const send = lagging.send.bind(lagging) as (c: unknown, o?: unknown) => Promise<unknown>;
    const direct = testClient();
    Object.assign(lagging, {
      send: async (command: unknown, options?: unknown) => {
        if (
          command instanceof PutObjectCommand &&
          command.input.Key?.endsWith('.compacted.parquet')
        ) {
          // The write in flight lands 1.5 s later, whatever the client does meanwhile.
          const input = command.input;
          late.push(
            new Promise((r) => setTimeout(r, 1_500)).then(() =>
              direct.send(new PutObjectCommand(input)),
            ),
          );
          throw s3Error('ConditionalRequestConflict', 409);
        }
        return send(command, options);
      },
    });
    const first = await compactMetrics(compactOptions({ s3Client: lagging }, where, lease));
    expect(first.partitions[0]?.status).toBe('failed');
    expect(first.partitions[0]?.error).toMatch(/exists already/);
    // Another run right after: the hour is still the first run's.
    const second = await compactMetrics(compactOptions(connection(), where, lease));
    await Promise.all(late);
    // Once the lease ran out, a run finds the output that landed and finishes it.
    await new Promise((r) => setTimeout(r, 2_100));
    await compactMetrics(compactOptions(connection(), where, lease));

    const outputs = (await listing(client, bucket, `${prefix}/`)).filter((o) =>
      o.key.endsWith('.compacted.parquet'),
    );
    let points = 0;
    for await (const object of readMetrics({
      bucket,
      ...connection(),
      prefix,
      partitionTime: 'data',
    })) {
      points += dataPointRows(object.request).length;
    }
    expect(points).toBe(expected);
    expect(outputs).toHaveLength(1);
    expect(second.partitions[0]?.status).toBe('busy');
    lagging.destroy();
    direct.destroy();
  });
});
