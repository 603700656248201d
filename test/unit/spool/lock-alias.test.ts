import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { claimSpoolDir, type SpoolLock, tryLockSpoolDir } from '../../../src/spool/lock.js';
import { captureDiag } from '../../support/diag-capture.js';
import { tempDir } from '../../support/temp-dir.js';

captureDiag();

let dir: string;
beforeEach(() => tempDir('otel-s3-lock-alias-', (path) => (dir = path)));

describe('one directory under two names in one process', () => {
  // A symbolic link (or a bind mount, or a case-insensitive file system) gives the directory
  // another path: the claim, by path, does not see it. The lock, which names this process, must
  // not be taken over from a live lock of this very process as if an earlier one had left it.
  test("a lock this process holds is not taken under the directory's other name", async () => {
    const real = join(dir, 'spool');
    mkdirSync(real);
    const alias = join(dir, 'alias');
    symlinkSync(real, alias);
    const claims = [claimSpoolDir(real), claimSpoolDir(alias)];
    const locks: SpoolLock[] = [];
    try {
      const first = await tryLockSpoolDir(real);
      expect(first.kind).toBe('taken');
      if (first.kind === 'taken') locks.push(first.lock);
      const second = await tryLockSpoolDir(alias);
      if (second.kind === 'taken') locks.push(second.lock);
      expect(second).toMatchObject({ kind: 'held', holder: { verdict: 'alive' } });
      // Released, the lock is free to take again in this process.
      await locks.shift()?.release();
      const third = await tryLockSpoolDir(alias);
      if (third.kind === 'taken') locks.push(third.lock);
      expect(third.kind).toBe('taken');
    } finally {
      for (const lock of locks) await lock.release();
      for (const claim of claims) claim.release();
    }
  });
});
