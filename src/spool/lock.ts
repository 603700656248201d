import {
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { readFile, rename, rm, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { settleWithin } from '../deadline.js';
import { alert, log } from '../log.js';

/** Who holds a spool directory. Written inside the lock directory before it appears. */
export interface SpoolOwner {
  pid: number;
  host: string;
  /** Linux: this boot of the machine (a reboot ends every owner). */
  bootId: string | undefined;
  /** Linux: the pid namespace the pid belongs to (containers have their own; both are often pid 1). */
  pidNamespace: string | undefined;
  /** Unique per lock taken: tells our own lock from a successor's. */
  token: string;
  since: string;
}

/** How often the owner touches its lock, and after how long without a touch it is stale. */
const LOCK_REFRESH_MILLIS = 2_000;
export const LOCK_STALE_MILLIS = 10_000;
/** Shutdown waits this long for the lock directory to be removed (a hung disk must not hang it). */
const RELEASE_GRACE_MILLIS = 1_000;

const LOCK = 'owner.lock';
const OWNER = 'owner.json';

/** Thrown at construction when another live exporter owns the spool directory. */
export class SpoolLockedError extends Error {
  constructor(dir: string, owner: SpoolOwner | undefined, ageMillis: number | undefined) {
    const who = owner ? ` by pid ${owner.pid} on ${owner.host} since ${owner.since}` : '';
    const fresh =
      ageMillis === undefined
        ? ''
        : `; its lock was refreshed ${(ageMillis / 1000).toFixed(1)} s ago (a lock not refreshed for ${LOCK_STALE_MILLIS / 1000} s is taken over)`;
    super(
      `otel-s3-exporter: spoolDir ${dir} is in use${who}${fresh}; each exporter needs a spool directory of its own ` +
        "(two owners would upload and delete each other's files)",
    );
    this.name = 'SpoolLockedError';
  }
}

/** Spool directories locked by this process, by resolved path. */
const lockedHere = new Set<string>();

function readQuietly(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** This process as a lock owner. */
function identity(): SpoolOwner {
  let pidNamespace: string | undefined;
  try {
    pidNamespace = readlinkSync('/proc/self/ns/pid');
  } catch {
    pidNamespace = undefined;
  }
  return {
    pid: process.pid,
    host: hostname(),
    bootId: readQuietly('/proc/sys/kernel/random/boot_id'),
    pidNamespace,
    token: uuidv7(),
    since: new Date().toISOString(),
  };
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
 * True when the owner is certainly gone: the same machine, boot and pid namespace, and its pid
 * is not running (or is ours, from an earlier incarnation). Anything else (another host, another
 * pid namespace) cannot be checked from here: only a lock left unrefreshed proves it gone.
 */
function provablyGone(owner: SpoolOwner, me: SpoolOwner): boolean {
  if (owner.host !== me.host) return false;
  if (owner.bootId !== undefined && me.bootId !== undefined && owner.bootId !== me.bootId)
    return true; // the machine rebooted since
  if (owner.pidNamespace !== me.pidNamespace) return false;
  return owner.pid === me.pid || !alive(owner.pid);
}

function readOwner(lockDir: string): SpoolOwner | undefined {
  const text = readQuietly(join(lockDir, OWNER));
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as SpoolOwner;
  } catch {
    return undefined;
  }
}

/** A spool directory held by this process. */
export interface SpoolLock {
  /** Stops refreshing and removes the lock, if it is still ours; bounded in time. */
  release(): Promise<void>;
  /** The same at once, for a constructor that failed right after taking the lock. */
  releaseNow(): void;
}

/**
 * Takes the spool directory for this process. The lock is a directory that appears atomically
 * (rename) with its owner already inside, so nobody ever reads a lock without its owner. It is
 * taken over only when provably stale: not refreshed for LOCK_STALE_MILLIS, or its owner is
 * certainly gone (see provablyGone). Taking it is synchronous (construction must fail at once
 * when the directory is in use); refreshing and releasing it are not, so a slow disk never
 * stalls the event loop.
 */
export function lockSpoolDir(dir: string): SpoolLock {
  const key = resolve(dir);
  const lockDir = join(dir, LOCK);
  // Two exporters of this very process: the pid rule must not let the second one in.
  if (lockedHere.has(key)) throw new SpoolLockedError(dir, readOwner(lockDir), undefined);
  const me = identity();
  const candidate = join(dir, `${LOCK}.${me.token}.tmp`);
  mkdirSync(candidate);
  try {
    writeFileSync(join(candidate, OWNER), JSON.stringify(me));
    // A lock directory without an owner inside is an earlier version's (proper-lockfile's, kept
    // fresh the same way); rename(2) would replace an empty directory, so judge it first.
    if (existsSync(lockDir) && readOwner(lockDir) === undefined) takeOverIfStale(dir, lockDir, me);
    if (!tryRename(candidate, lockDir)) {
      takeOverIfStale(dir, lockDir, me);
      if (!tryRename(candidate, lockDir)) {
        // Someone else took it over at the same moment.
        throw new SpoolLockedError(dir, readOwner(lockDir), undefined);
      }
    }
  } catch (error) {
    rmSync(candidate, { recursive: true, force: true });
    throw error;
  }
  lockedHere.add(key);
  return new HeldLock(dir, key, lockDir, me);
}

/** rename(2) of a directory onto a path that exists fails: exactly one taker wins. */
function tryRename(from: string, to: string): boolean {
  try {
    renameSync(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EISDIR') return false;
    throw error;
  }
}

function takeOverIfStale(dir: string, lockDir: string, me: SpoolOwner): void {
  let ageMillis: number;
  try {
    ageMillis = Date.now() - statSync(lockDir).mtimeMs;
  } catch {
    return; // gone meanwhile: the next rename decides
  }
  const owner = readOwner(lockDir);
  const stale = ageMillis > LOCK_STALE_MILLIS;
  if (!stale && (owner === undefined || !provablyGone(owner, me)))
    throw new SpoolLockedError(dir, owner, ageMillis);
  log.warn(
    `spoolDir ${dir}: taking over the lock of pid ${owner?.pid ?? '?'} on ${owner?.host ?? '?'}, ` +
      (stale ? `not refreshed for ${(ageMillis / 1000).toFixed(1)} s` : 'which is gone'),
  );
  // Moved aside first: if two processes take over at once, only one rename finds it.
  const aside = join(dir, `${LOCK}.${me.token}.stale`);
  if (tryRename(lockDir, aside)) rmSync(aside, { recursive: true, force: true });
}

class HeldLock implements SpoolLock {
  readonly #owner: SpoolOwner;
  readonly #dir: string;
  readonly #key: string;
  readonly #lockDir: string;
  readonly #timer: NodeJS.Timeout;
  #refreshing = false;
  #lost = false;

  constructor(dir: string, key: string, lockDir: string, owner: SpoolOwner) {
    this.#owner = owner;
    this.#dir = dir;
    this.#key = key;
    this.#lockDir = lockDir;
    this.#timer = setInterval(() => void this.#refresh(), LOCK_REFRESH_MILLIS);
    this.#timer.unref();
  }

  /** Touches the lock, off the event loop; one at a time, so a hung disk piles nothing up. */
  async #refresh(): Promise<void> {
    if (this.#refreshing || this.#lost) return;
    this.#refreshing = true;
    try {
      if (!(await this.#stillOurs())) {
        this.#lost = true;
        alert(
          'error',
          'OTEL_S3_SPOOL_LOCK_LOST',
          `the lock of spoolDir ${this.#dir} was taken by another process; another exporter may use the directory now`,
        );
        return;
      }
      const now = new Date();
      await utimes(this.#lockDir, now, now);
    } catch (error) {
      log.warn(`could not refresh the lock of spoolDir ${this.#dir}: ${(error as Error).message}`);
    } finally {
      this.#refreshing = false;
    }
  }

  async #stillOurs(): Promise<boolean> {
    try {
      const owner = JSON.parse(await readFile(join(this.#lockDir, OWNER), 'utf8')) as SpoolOwner;
      return owner.token === this.#owner.token;
    } catch {
      return false;
    }
  }

  releaseNow(): void {
    clearInterval(this.#timer);
    if (readOwner(this.#lockDir)?.token === this.#owner.token)
      rmSync(this.#lockDir, { recursive: true, force: true });
    lockedHere.delete(this.#key);
  }

  async release(): Promise<void> {
    clearInterval(this.#timer);
    const removed = (async () => {
      if (this.#lost || !(await this.#stillOurs())) return;
      // Moved aside before removal: a successor's lock can never be the one deleted.
      const aside = `${this.#lockDir}.${this.#owner.token}.released`;
      await rename(this.#lockDir, aside);
      await rm(aside, { recursive: true, force: true });
    })();
    const done = await settleWithin(
      removed.catch((error: unknown) =>
        log.warn(
          `could not release the lock of spoolDir ${this.#dir}: ${(error as Error).message}`,
        ),
      ),
      RELEASE_GRACE_MILLIS,
    );
    // Still running (a hung disk): keep the directory marked as ours, so this process cannot
    // take it again and have the late removal delete its new lock.
    if (done) lockedHere.delete(this.#key);
  }
}
