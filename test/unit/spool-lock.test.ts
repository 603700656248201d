import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { S3MetricExporter } from '../../src/index.js';
import { LOCK_STALE_MILLIS, SpoolLockedError, type SpoolOwner } from '../../src/spool/lock.js';
import { captureDiag } from '../support/diag-capture.js';
import { ScriptedS3 } from '../support/scripted-s3.js';
import { waitFor } from '../support/wait.js';

const messages = captureDiag();
const ROOT = new URL('../../', import.meta.url).pathname;
const HOLDER = 'test/support/children/spool-holder.ts';

let dir: string;
const children: ReturnType<typeof spawn>[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'otel-s3-lock-test-'));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface HolderLine {
  ready?: boolean;
  pid?: number;
  error?: string;
  message?: string;
}

/** Starts the holder child (optionally as pid 1 of a pid namespace of its own) on `dir`. */
function holder(ownPidNamespace = false): {
  first: Promise<HolderLine>;
  exited: Promise<number | null>;
} {
  const node = [process.execPath, '--import', 'tsx', HOLDER, dir];
  const child = ownPidNamespace
    ? // --kill-child: killing unshare (afterEach) must take the namespace's node with it.
      spawn('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', ...node], { cwd: ROOT })
    : spawn(node[0] as string, node.slice(1), { cwd: ROOT });
  children.push(child);
  const first = new Promise<HolderLine>((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) =>
      resolve(JSON.parse(line) as HolderLine),
    );
    child.once('exit', () => reject(new Error(`holder exited without a line: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { first, exited };
}

const exporterOn = () =>
  new S3MetricExporter({
    bucket: 'unit',
    s3Client: new ScriptedS3().client,
    compression: 'none',
    spoolDir: dir,
  });

const lockDir = () => join(dir, 'owner.lock');
const ownerOf = () => JSON.parse(readFileSync(join(lockDir(), 'owner.json'), 'utf8')) as SpoolOwner;
const backdate = (millis: number) => {
  const t = new Date(Date.now() - millis);
  utimesSync(lockDir(), t, t);
};

describe('the spool lock across processes', () => {
  test('a live owner in another process keeps the directory: the file lock says so, not an in-process set', async () => {
    const child = holder();
    const line = await child.first;
    expect(line.ready).toBe(true);
    expect(ownerOf().pid).toBe(line.pid);
    expect(() => exporterOn()).toThrow(SpoolLockedError);
    expect(() => exporterOn()).toThrow(new RegExp(`in use by pid ${line.pid} on ${hostname()}`));
  });

  test("a dead owner's lock (same machine and pid namespace) is taken over at once", async () => {
    const child = holder();
    const line = await child.first;
    process.kill(line.pid as number, 'SIGKILL');
    await child.exited;
    const exporter = exporterOn();
    expect(ownerOf().pid).toBe(process.pid);
    expect(
      messages.some((m) => /taking over the lock of pid \d+ .*which is gone/.test(m.text)),
    ).toBe(true);
    await exporter.shutdown();
    expect(existsSync(lockDir())).toBe(false);
  });

  test('a lock held by our own pid (a container restarted as pid 1 in the same namespace) is taken over at once', async () => {
    const owner: SpoolOwner = {
      pid: process.pid,
      host: hostname(),
      bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      pidNamespace: readlinkSync('/proc/self/ns/pid'),
      token: 'an-earlier-incarnation',
      since: new Date().toISOString(),
    };
    mkdirSync(lockDir());
    writeFileSync(join(lockDir(), 'owner.json'), JSON.stringify(owner));
    const exporter = exporterOn();
    expect(ownerOf().token).not.toBe(owner.token);
    await exporter.shutdown();
  });

  test('two owners that both are pid 1 on the same host, in separate pid namespaces: the second gets SpoolLockedError while the first lives', async () => {
    const first = holder(true);
    const line = await first.first;
    expect(line).toMatchObject({ ready: true, pid: 1 });
    const second = holder(true);
    const refused = await second.first;
    expect(refused.error).toBe('SpoolLockedError');
    expect(refused.message).toMatch(/in use by pid 1 on .* refreshed \d+\.\d s ago/);
    expect(await second.exited).toBe(3);
    // The first keeps its lock fresh (asynchronously) while it lives: even an old-looking lock
    // is touched again within the refresh interval.
    backdate(60_000);
    await waitFor(() => Date.now() - statSync(lockDir()).mtimeMs < 5_000, 5_000, 'a refresh');
    // Killed: nothing can prove from another namespace that it is gone, until its lock goes stale.
    const pidNamespaceOwner = ownerOf();
    const killer = spawn('pkill', ['-KILL', '-f', `${HOLDER} ${dir}`]);
    await new Promise((r) => killer.once('exit', r));
    await first.exited;
    const third = holder(true);
    expect((await third.first).error).toBe('SpoolLockedError');
    backdate(LOCK_STALE_MILLIS + 1_000);
    const fourth = holder(true);
    expect((await fourth.first).ready).toBe(true);
    expect(ownerOf().token).not.toBe(pidNamespaceOwner.token);
  });

  test('of many processes taking a free directory at once, exactly one wins', async () => {
    const racers = Array.from({ length: 4 }, () => holder());
    const lines = await Promise.all(racers.map((r) => r.first));
    expect(lines.filter((l) => l.ready === true)).toHaveLength(1);
    expect(lines.filter((l) => l.error === 'SpoolLockedError')).toHaveLength(3);
    // The owner is inside the lock from the moment it exists: no half-made lock is ever left.
    expect(readdirSync(dir).filter((n) => n.startsWith('owner.lock'))).toEqual(['owner.lock']);
  });
});

describe('a failed constructor leaves nothing behind', () => {
  test('the spool lock is released when a later step of the constructor throws', async () => {
    const body = await import('../../src/compression/body-maker.js');
    const spy = vi.spyOn(body, 'createBodyMaker').mockImplementationOnce(() => {
      throw new Error('zstd engine missing (simulated)');
    });
    try {
      expect(() => exporterOn()).toThrow('zstd engine missing (simulated)');
    } finally {
      spy.mockRestore();
    }
    expect(existsSync(lockDir())).toBe(false);
    // A retry in the same process is not refused by its own leftover lock.
    const exporter = exporterOn();
    await exporter.shutdown();
  });
});
