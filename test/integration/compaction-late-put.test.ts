import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { compactMetrics } from '../../src/reader.js';
import { compactOptions } from '../support/compaction-data.js';
import {
  compactedOutputs,
  exportedHour,
  interceptPuts,
  readerPoints,
  SHORT_LEASE,
} from '../support/compaction-hour.js';
import { connection, describeS3, testClient, withS3 } from '../support/s3.js';
import { s3Error } from '../support/s3-error.js';

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

  test('the hour stays leased until the lease runs out; the output that lands is the only one', {
    timeout: 60_000,
  }, async () => {
    const { prefix, where, expected } = await exportedHour(bucket, 'late-put', 4);

    const late: Promise<unknown>[] = [];
    const direct = testClient();
    const lagging = interceptPuts(testClient(), async (key, command, go) => {
      if (!key.endsWith('.compacted.parquet')) return go();
      // The write in flight lands 1.5 s later, whatever the client does meanwhile.
      const input = command.input;
      late.push(
        new Promise((r) => setTimeout(r, 1_500)).then(() =>
          direct.send(new PutObjectCommand(input)),
        ),
      );
      throw s3Error('ConditionalRequestConflict', 409);
    });
    const first = await compactMetrics(compactOptions({ s3Client: lagging }, where, SHORT_LEASE));
    expect(first.partitions[0]?.status).toBe('failed');
    expect(first.partitions[0]?.error).toMatch(/exists already/);
    // Another run right after: the hour is still the first run's.
    const second = await compactMetrics(compactOptions(connection(), where, SHORT_LEASE));
    await Promise.all(late);
    // Once the lease ran out, a run finds the output that landed and finishes it.
    await new Promise((r) => setTimeout(r, 2_100));
    await compactMetrics(compactOptions(connection(), where, SHORT_LEASE));

    const outputs = await compactedOutputs(client, bucket, prefix);
    expect(await readerPoints(bucket, prefix)).toBe(expected);
    expect(outputs).toHaveLength(1);
    expect(second.partitions[0]?.status).toBe('busy');
    lagging.destroy();
    direct.destroy();
  });
});
