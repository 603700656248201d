import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { expect, test } from 'vitest';
import { hourPath } from '../../src/compact/bookkeeping.js';
import { BOOKKEEPING_DIR } from '../../src/layout/outputs.js';
import { compactMetrics } from '../../src/reader.js';
import { compactOptions } from '../support/compaction-data.js';
import {
  compactedOutputs,
  exportedHour,
  readerPoints,
  SHORT_LEASE,
} from '../support/compaction-hour.js';
import { connection, describeS3, withS3 } from '../support/s3.js';
import { SETTLED_HOUR } from '../support/time.js';

/**
 * A damaged lease object (not JSON) as the highest generation of an hour: it holds the hour, said
 * in the report, until the server's time of its write is a lease and the skew allowance past;
 * then the next run takes the hour over and compacts it.
 */
describeS3('compaction: a lease object that cannot be read', () => {
  let client: S3Client;
  let bucket: string;
  withS3('lease-unreadable', (s) => ({ client, bucket } = s));

  test('holds the hour until a lease and the skew after its write, then is taken over', {
    timeout: 60_000,
  }, async () => {
    const { prefix, where, expected } = await exportedHour(bucket, 'unreadable-lease', 3);
    const directory = `${prefix}/${BOOKKEEPING_DIR}/leases/${hourPath(new Date(SETTLED_HOUR))}`;
    const key = `${directory}/000000000007.lease`;
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'garbled' }));
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `${directory}/` }),
    );
    const written = listed.Contents?.[0]?.LastModified?.getTime() as number;
    const options = compactOptions(connection(), where, SHORT_LEASE);
    const held = await compactMetrics(options);
    expect(held.partitions).toMatchObject([
      {
        status: 'busy',
        unreadableLease: {
          key,
          reason: expect.stringMatching(/JSON/),
          expiredAt: new Date(written + SHORT_LEASE.leaseMillis),
          tookOver: false,
        },
      },
    ]);
    await new Promise((r) => setTimeout(r, Math.max(0, written + 2_100 - Date.now())));
    const taken = await compactMetrics(options);
    expect(taken.partitions).toMatchObject([
      { status: 'compacted', unreadableLease: { key, tookOver: true } },
    ]);
    expect(await compactedOutputs(client, bucket, prefix)).toHaveLength(1);
    expect(await readerPoints(bucket, prefix, new Date(SETTLED_HOUR - 3_600_000))).toBe(expected);
  });
});
