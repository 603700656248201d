import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CEPH_SCRIPT = new URL('../../scripts/ceph-rgw.sh', import.meta.url).pathname;

/** Where the integration tests find their S3 server. Plain data: it crosses to the test workers. */
export interface S3ServerInfo {
  kind: 'external' | 'minio' | 'ceph';
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** An SSE-KMS key id the server accepts, if it supports SSE-KMS (S3_TEST_KMS_KEY_ID). */
  kmsKeyId?: string;
}

export interface RunningS3Server {
  info: S3ServerInfo;
  stop(): Promise<void>;
}

/** Why no server could be had, for the skip message (or the failure in CI). */
export class NoS3Server extends Error {}

function fromEnvironment(): S3ServerInfo | undefined {
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) return undefined;
  const accessKeyId = process.env.S3_ACCESS_KEY_ID ?? process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.S3_SECRET_ACCESS_KEY ?? process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new NoS3Server(
      'S3_ENDPOINT is set but S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) are not',
    );
  }
  const kmsKeyId = process.env.S3_TEST_KMS_KEY_ID;
  return {
    kind: 'external',
    endpoint,
    region: process.env.S3_REGION ?? 'us-east-1',
    accessKeyId,
    secretAccessKey,
    ...(kmsKeyId ? { kmsKeyId } : {}),
  };
}

export async function dockerAvailable(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

export async function startMinio(): Promise<RunningS3Server> {
  const { MinioContainer } = await import('@testcontainers/minio');
  const container = await new MinioContainer('minio/minio:RELEASE.2025-04-22T22-12-26Z').start();
  return {
    info: {
      kind: 'minio',
      endpoint: container.getConnectionUrl(),
      region: 'us-east-1',
      accessKeyId: container.getUsername(),
      secretAccessKey: container.getPassword(),
    },
    stop: async () => {
      await container.stop();
    },
  };
}

async function cephInstalled(): Promise<boolean> {
  try {
    await run('sh', ['-c', 'command -v radosgw && command -v ceph-mon && command -v ceph-osd']);
    return true;
  } catch {
    return false;
  }
}

async function startCeph(): Promise<RunningS3Server> {
  const dir = await mkdtemp(join(tmpdir(), 'otel-s3-ceph-'));
  const env = { ...process.env, RGW_PORT: 'auto', MON_PORT: 'auto', MON_PORT_V1: 'auto' };
  const stop = async () => {
    await run('bash', [CEPH_SCRIPT, 'stop', dir], { env }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await run('bash', [CEPH_SCRIPT, 'start', dir], { env, timeout: 180_000 });
  } catch (error) {
    await stop();
    const e = error as { stderr?: string; message: string };
    throw new Error(`starting Ceph RGW failed: ${e.stderr || e.message}`);
  }
  const vars = Object.fromEntries(
    (await readFile(join(dir, 's3.env'), 'utf8'))
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return {
    info: {
      kind: 'ceph',
      endpoint: vars.S3_ENDPOINT as string,
      region: vars.S3_REGION ?? 'us-east-1',
      accessKeyId: vars.S3_ACCESS_KEY_ID as string,
      secretAccessKey: vars.S3_SECRET_ACCESS_KEY as string,
      ...(vars.S3_TEST_KMS_KEY_ID ? { kmsKeyId: vars.S3_TEST_KMS_KEY_ID } : {}),
    },
    stop,
  };
}

/**
 * A real S3 server, in this order: the one S3_ENDPOINT names; MinIO in a container when a
 * Docker engine answers; a throwaway Ceph RGW when Ceph is installed. Throws NoS3Server when
 * there is none.
 */
export async function acquireS3Server(): Promise<RunningS3Server> {
  const external = fromEnvironment();
  if (external !== undefined) return { info: external, stop: async () => {} };
  if (await dockerAvailable()) return startMinio();
  if (await cephInstalled()) return startCeph();
  throw new NoS3Server(
    'no S3 server: set S3_ENDPOINT (+ S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY), run a Docker engine (MinIO via testcontainers), ' +
      'or install Ceph with `sudo scripts/ceph-rgw.sh install` (Debian/Ubuntu)',
  );
}
