import { S3Client } from '@aws-sdk/client-s3';
import { test } from 'vitest';
import { compactMetrics } from '../../src/reader.js';
import { compactOptions } from '../support/compaction-data.js';
import {
  compactedOutputs,
  exportedHour,
  interceptPuts,
  readerPoints,
  SHORT_LEASE,
} from '../support/compaction-hour.js';
import { connection, describeS3, withS3 } from '../support/s3.js';
import { SETTLED_HOUR } from '../support/time.js';

/**
 * A compactor whose output PUT is slow while another compactor waits for its hour: the lease
 * is kept through the PUT, and where it cannot be, the PUT is abandoned when the lease runs
 * out, so that an output never lands beside the other's for the same inputs (every point
 * twice, for good once a later run merged both).
 */
describeS3('compaction: the lease through a slow output PUT', () => {
  let client: S3Client;
  let bucket: string;
  withS3('lease-stall', (s) => ({ client, bucket } = s));

  /** A client whose output PUTs wait `millis` before they go (a slow link, a paused process). */
  function slowClient(millis: number, alsoLeases: boolean): S3Client {
    const c = connection();
    let slowed = false;
    return interceptPuts(
      new S3Client({
        endpoint: c.endpoint,
        region: c.region ?? 'us-east-1',
        forcePathStyle: true,
        ...(c.credentials === undefined ? {} : { credentials: c.credentials }),
      }),
      async (key, _command, go) => {
        if (key.endsWith('.compacted.parquet') || (alsoLeases && key.endsWith('.lease'))) {
          // A lease write is slow only once the output's PUT started: taking it is quick.
          if (key.endsWith('.compacted.parquet')) slowed = true;
          if (slowed) await new Promise((r) => setTimeout(r, millis));
        }
        return go();
      },
    );
  }

  // Each test compacts a prefix of its own with clients of its own, and spends most of its time
  // in the slowed PUT: the two run at once.
  for (const renewable of [true, false]) {
    test.concurrent(renewable
      ? 'a PUT slower than the lease: the lease is renewed through it, the other compactor finds the hour busy'
      : 'a PUT slower than the lease that cannot be renewed: the PUT is abandoned when the lease runs out, the other compactor writes the hour once', {
      timeout: 60_000,
    }, async ({ expect }) => {
      const { prefix, where, expected } = await exportedHour(bucket, `stall-${renewable}`, 6);
      const first = compactMetrics(
        compactOptions({ s3Client: slowClient(6_000, !renewable) }, where, SHORT_LEASE),
      );
      // The first run's lease would have run out by now without renewal.
      await new Promise((r) => setTimeout(r, 3_500));
      const second = await compactMetrics(compactOptions(connection(), where, SHORT_LEASE));
      const firstReport = await first;
      expect(await compactedOutputs(client, bucket, prefix)).toHaveLength(1);
      expect(await readerPoints(bucket, prefix, new Date(SETTLED_HOUR - 3_600_000))).toBe(expected);
      const [one] = firstReport.partitions;
      const [two] = second.partitions;
      if (renewable) {
        expect(one?.status).toBe('compacted');
        expect(two?.status).toBe('busy');
      } else {
        expect(one?.status).toBe('failed');
        expect(one?.error).toMatch(
          /lost the compaction lease .*ran out while an output was being written/,
        );
        expect(two?.status).toBe('compacted');
      }
    });
  }
});
