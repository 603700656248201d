import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import lockfile from 'proper-lockfile';
import { log } from '../log.js';

interface Owner {
  pid: number;
  host: string;
  since: string;
}

/** Thrown at construction when another live exporter owns the spool directory. */
export class SpoolLockedError extends Error {
  constructor(dir: string, owner: Owner | undefined) {
    const who = owner ? ` by pid ${owner.pid} on ${owner.host} since ${owner.since}` : '';
    super(
      `otel-s3-exporter: spoolDir ${dir} is in use${who}; each exporter needs a spool directory of its own ` +
        "(two owners would upload and delete each other's files)",
    );
    this.name = 'SpoolLockedError';
  }
}

/** Spool directories locked by this process. */
const lockedHere = new Set<string>();

function readOwner(path: string): Owner | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Owner;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the spool directory for this process (proper-lockfile: a lock directory whose mtime is
 * kept fresh). A lock left by a dead process on this host is taken over at once, so a service
 * restarted right after a crash does not wait for the lock to go stale; a pid equal to ours is
 * a previous incarnation (containers restart as pid 1). Returns the release function.
 */
export function lockSpoolDir(dir: string): () => void {
  const key = resolve(dir);
  // Two exporters of this very process: the pid rule below must not let the second one in.
  if (lockedHere.has(key)) throw new SpoolLockedError(dir, readOwner(join(dir, 'owner.json')));
  const lockPath = join(dir, 'owner.lock');
  const ownerPath = join(dir, 'owner.json');
  const options = {
    lockfilePath: lockPath,
    realpath: false,
    stale: 10_000,
    update: 2_000,
    onCompromised: (error: Error) =>
      log.error(
        `the lock of spoolDir ${dir} was lost (${error.message}); another process may use it now`,
      ),
  };
  let release: () => void;
  try {
    release = lockfile.lockSync(dir, options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    const owner = readOwner(ownerPath);
    const previous =
      owner !== undefined &&
      owner.host === hostname() &&
      (owner.pid === process.pid || !alive(owner.pid));
    if (!previous) throw new SpoolLockedError(dir, owner);
    log.warn(`spoolDir ${dir}: taking over the lock of pid ${owner.pid}, which is gone`);
    rmSync(lockPath, { recursive: true, force: true });
    release = lockfile.lockSync(dir, options);
  }
  writeFileSync(
    ownerPath,
    JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }),
  );
  lockedHere.add(key);
  return () => {
    lockedHere.delete(key);
    try {
      if (existsSync(ownerPath)) unlinkSync(ownerPath);
      release();
    } catch (error) {
      log.warn(`could not release the lock of spoolDir ${dir}: ${(error as Error).message}`);
    }
  };
}
