import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import type { SpoolOwner } from '../../../src/spool/lock.js';
import { captureDiag } from '../../support/diag-capture.js';
import { spoolStateOf, spoolTestDirs } from '../../support/spool-exporter.js';
import { lockDirOf, lockOwnerOf } from '../../support/spool-lock.js';
import { waitFor } from '../../support/wait.js';

// Owners in other processes (a live one, a dead one, two in pid namespaces, a race of takers):
// test/integration/spool-lock-processes.test.ts.
captureDiag();

let dir: string;
const { exporterOn } = spoolTestDirs('otel-s3-lock-test-', (path) => (dir = path));

const stateOf = spoolStateOf;

const lockDir = () => lockDirOf(dir);
const ownerOf = () => lockOwnerOf(dir);

describe('the spool lock of an earlier incarnation', () => {
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
    await waitFor(() => stateOf(exporter) === 'active', 5_000, 'active');
    expect(ownerOf().token).not.toBe(owner.token);
    await exporter.shutdown();
  });
});

describe('a failed constructor leaves nothing behind', () => {
  test('nothing of the spool outlives a constructor that throws: no lock, no claim in this process', async () => {
    const body = await import('../../../src/body/body-maker.js');
    const spy = vi.spyOn(body, 'createBodyMaker').mockImplementationOnce(() => {
      throw new Error('zstd engine missing (simulated)');
    });
    try {
      expect(() => exporterOn()).toThrow('zstd engine missing (simulated)');
    } finally {
      spy.mockRestore();
    }
    expect(existsSync(lockDir())).toBe(false);
    // A retry in the same process is not refused by its own leftover claim, and takes the lock.
    const exporter = exporterOn();
    await waitFor(() => stateOf(exporter) === 'active', 5_000, 'active');
    await exporter.shutdown();
  });
});
