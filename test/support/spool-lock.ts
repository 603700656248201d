import { readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import type * as Lock from '../../src/spool/lock.js';
import { type Child, spawnTs } from './child.js';

/**
 * The spool lock module with a short retry interval, for `vi.mock` in a test file:
 *
 *     vi.mock('../../../src/spool/lock.js', async (original) =>
 *       (await import('../../support/spool-lock.js')).shortLockRetry(original));
 *
 * The file's exporters then try a directory that is not theirs yet every 50 ms instead of every
 * second (the exporter reads LOCK_TIMING; LOCK_TIMING.retryMillis in the test reads the same).
 * A lock still goes stale after 10 s without a refresh: tests that need a stale lock backdate it.
 */
export async function shortLockRetry(original: () => Promise<typeof Lock>): Promise<typeof Lock> {
  const lock = await original();
  return { ...lock, LOCK_TIMING: Object.freeze({ ...lock.LOCK_TIMING, retryMillis: 50 }) };
}

/** The lock directory of the spool directory `dir`. */
export const lockDirOf = (dir: string) => join(dir, 'owner.lock');

/** Who holds `dir`'s lock, as its owner file says. */
export const lockOwnerOf = (dir: string) =>
  JSON.parse(readFileSync(join(lockDirOf(dir), 'owner.json'), 'utf8')) as Lock.SpoolOwner;

/** Makes `dir`'s lock look last refreshed `millis` ago. */
export function backdateLock(dir: string, millis: number): void {
  const t = new Date(Date.now() - millis);
  utimesSync(lockDirOf(dir), t, t);
}

/** What test/support/children/spool-holder.ts prints. */
export interface HolderLine {
  constructed?: boolean;
  state?: string;
  pid?: number;
  error?: string;
}

/**
 * The holder child (an exporter on `dir`, optionally as pid 1 of a pid namespace of its own),
 * added to `children` for the caller to kill.
 */
export function spawnHolder(dir: string, children: Child[], ownPidNamespace = false): Child {
  const child = spawnTs('test/support/children/spool-holder.ts', { SPOOL_DIR: dir }, [], {
    ownPidNamespace,
  });
  children.push(child);
  return child;
}

/** Resolves with the holder's first spool state other than `opening`. */
export const settledState = (child: Child) =>
  child.waitForJson<HolderLine>((l) => l.state !== undefined && l.state !== 'opening');
