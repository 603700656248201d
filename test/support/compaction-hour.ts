import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { dataPointRows, readMetrics } from '../../src/reader.js';
import { batchAt, exportBatches, listing, pointsOf } from './compaction-data.js';
import { connection } from './s3.js';
import { SETTLED_HOUR } from './time.js';

/**
 * For the tests of two compactors racing for one hour: the hour's objects, a client whose
 * PUTs the test controls, and what the bucket holds afterwards.
 */

/** A lease that runs out 2 s after it was taken or renewed, no clock skew allowed. */
export const SHORT_LEASE = { leaseMillis: 2_000, leaseClockSkewMillis: 0 };

/**
 * `count` batches exported as Parquet under a new prefix `{label}-{now}`: batch i from service
 * svc{i % 2}, 4 series, seed i + 1, at minute 5i of SETTLED_HOUR. Returns the prefix, where to
 * compact (the prefix, from SETTLED_HOUR) and how many points the batches hold.
 */
export async function exportedHour(
  bucket: string,
  label: string,
  count: number,
): Promise<{
  prefix: string;
  where: { bucket: string; prefix: string; fromMillis: number };
  expected: number;
}> {
  const prefix = `${label}-${Date.now().toString(36)}`;
  const batches = Array.from({ length: count }, (_, i) =>
    batchAt(`svc${i % 2}`, SETTLED_HOUR + i * 5 * 60_000 + 123, 4, i + 1),
  );
  await exportBatches({ bucket, prefix, format: 'parquet' }, connection(), batches);
  return {
    prefix,
    where: { bucket, prefix, fromMillis: SETTLED_HOUR },
    expected: pointsOf(batches).length,
  };
}

/**
 * Makes `client` hand each PutObject to `put`, with its key and `go()`, which sends it as the
 * client would; every other command goes as it would.
 */
export function interceptPuts(
  client: S3Client,
  put: (key: string, command: PutObjectCommand, go: () => Promise<unknown>) => Promise<unknown>,
): S3Client {
  const send = client.send.bind(client) as (
    command: unknown,
    options?: unknown,
  ) => Promise<unknown>;
  Object.assign(client, {
    send: async (command: unknown, options?: unknown) =>
      command instanceof PutObjectCommand
        ? put(command.input.Key ?? '', command, () => send(command, options))
        : send(command, options),
  });
  return client;
}

/** The compaction outputs (`*.compacted.parquet`) under `prefix/`. */
export async function compactedOutputs(client: S3Client, bucket: string, prefix: string) {
  return (await listing(client, bucket, `${prefix}/`)).filter((o) =>
    o.key.endsWith('.compacted.parquet'),
  );
}

/** How many data points readMetrics() reads under `prefix` (by the data's time, from `from`). */
export async function readerPoints(bucket: string, prefix: string, from?: Date): Promise<number> {
  let points = 0;
  for await (const object of readMetrics({
    bucket,
    ...connection(),
    prefix,
    partitionTime: 'data',
    ...(from === undefined ? {} : { from }),
  })) {
    points += dataPointRows(object.request).length;
  }
  return points;
}
