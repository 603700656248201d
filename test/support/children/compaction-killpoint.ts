/**
 * Child process: compacts one hour (S3_PREFIX, COMPACT_FROM) through an S3 client that stops at
 * a named point: KILL_POINT=before-deletes stops at the first DeleteObjects after an output's
 * PUT (the output is stored and verified, its inputs still there). There it prints
 * {"killpoint":...} and hangs, for the parent's SIGKILL. COMPACT_SIGNAL names the signal
 * (metrics unless set: traces, logs).
 */
import { DeleteObjectsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { compactionOf } from '../../../src/compact/compact-metrics.js';
import type { SignalName } from '../../../src/layout/formats.js';
import { childConnection } from './connection.js';

const env = process.env;
const { bucket, endpoint, credentials } = childConnection();
const client = new S3Client({
  endpoint,
  credentials,
  region: 'us-east-1',
  forcePathStyle: true,
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});
let outputStored: string | undefined;
const send = client.send.bind(client) as (command: unknown, options?: unknown) => Promise<unknown>;
(client as { send: unknown }).send = async (command: unknown, options?: unknown) => {
  if (
    env.KILL_POINT === 'before-deletes' &&
    command instanceof DeleteObjectsCommand &&
    outputStored !== undefined
  ) {
    console.log(JSON.stringify({ killpoint: env.KILL_POINT, output: outputStored }));
    await new Promise<never>(() => {});
  }
  const result = await send(command, options);
  const key = command instanceof PutObjectCommand ? command.input.Key : undefined;
  if (key?.endsWith('.compacted.parquet') === true) outputStored = key;
  return result;
};
await compactionOf((env.COMPACT_SIGNAL ?? 'metrics') as SignalName)({
  bucket,
  s3Client: client,
  prefix: env.S3_PREFIX as string,
  format: 'parquet',
  partitionTime: 'data',
  from: new Date(env.COMPACT_FROM as string),
  leaseMillis: 2_000,
  leaseClockSkewMillis: 0,
});
console.log(JSON.stringify({ done: true }));
