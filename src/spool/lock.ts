import { mkdir, readFile, readlink, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { settleWithin } from '../base/deadline.js';
import { alert, log } from '../base/log.js';

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

/** The lock's intervals; the exporter runs on LOCK_TIMING, tests on shorter ones. */
export interface LockTiming {
  /** How often the owner touches its lock. */
  readonly refreshMillis: number;
  /** After how long without a touch a lock is stale. */
  readonly staleMillis: number;
  /** How often a directory that is not ours yet (held by another, or unusable) is tried again. */
  readonly retryMillis: number;
}

export const LOCK_TIMING: LockTiming = Object.freeze({
  refreshMillis: 2_000,
  staleMillis: 10_000,
  retryMillis: 1_000,
});

/**
 * Where a test gives an exporter shorter lock intervals: a symbol-keyed property of its options
 * (`{ ...options, [LOCK_TIMING_OPTION]: timing }`). It is no option: Object.keys does not list
 * it, so the option checks never see it, and the package does not export the symbol. Without
 * it, an exporter runs on LOCK_TIMING.
 */
export const LOCK_TIMING_OPTION: unique symbol = Symbol('otel-s3-exporter lock timing');

/** The lock intervals an exporter's options carry (LOCK_TIMING_OPTION), if any. */
export function lockTimingOf(options: object): LockTiming | undefined {
  return (options as { [LOCK_TIMING_OPTION]?: LockTiming })[LOCK_TIMING_OPTION];
}

/** Shutdown waits this long for the lock directory to be removed (a hung disk must not hang it). */
const RELEASE_GRACE_MILLIS = 1_000;

const LOCK = 'owner.lock';
const OWNER = 'owner.json';

/**
 * Thrown at construction when another exporter of this very process has the spool directory:
 * a certain misconfiguration that waiting cannot resolve.
 */
export class SpoolLockedError extends Error {
  constructor(dir: string) {
    super(
      `otel-s3-exporter: spoolDir ${dir} is already used by another exporter of this process (pid ${process.pid}); ` +
        "each exporter needs a spool directory of its own (two owners would upload and delete each other's files)",
    );
    this.name = 'SpoolLockedError';
  }
}

/**
 * Tokens of the locks this process holds (until their removal ends): a directory reached under
 * another path (a symbolic link, a bind mount, a case-insensitive file system) escapes the claim
 * by path, and a lock naming this pid would otherwise be taken for an earlier incarnation's.
 */
const heldHere = new Set<string>();

/** Spool directories claimed by exporters of this process, by resolved path. */
const claimedHere = new Set<string>();

/** A spool directory reserved for one exporter of this process (no file-system call made). */
export interface SpoolClaim {
  release(): void;
}

/**
 * Reserves `dir` for one exporter of this process, at once and without touching the disk; throws
 * SpoolLockedError if another exporter of this process has it. The file lock (the pid rule
 * below would let a second exporter of this process take over the first one's lock) is taken
 * later, off the event loop, by tryLockSpoolDir.
 */
export function claimSpoolDir(dir: string): SpoolClaim {
  const key = resolve(dir);
  if (claimedHere.has(key)) throw new SpoolLockedError(dir);
  claimedHere.add(key);
  let held = true;
  return {
    release() {
      if (held) claimedHere.delete(key);
      held = false;
    },
  };
}

async function readQuietly(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** What identifies this process, read once: the pid namespace and boot do not change. */
let self: Promise<Omit<SpoolOwner, 'token' | 'since'>> | undefined;

/** This process as the owner of a lock about to be taken. */
async function identity(): Promise<SpoolOwner> {
  self ??= (async () => ({
    pid: process.pid,
    host: hostname(),
    bootId: await readQuietly('/proc/sys/kernel/random/boot_id'),
    pidNamespace: await readlink('/proc/self/ns/pid').catch(() => undefined),
  }))();
  return { ...(await self), token: uuidv7(), since: new Date().toISOString() };
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
 * What can be known from here of a lock's owner. `gone`: the machine rebooted since, or the
 * same machine, boot and pid namespace with its pid not running (or ours, from an earlier
 * incarnation). `alive`: that pid runs (ours: a lock this process holds, under another path).
 * `unverifiable`: another host or pid namespace (another
 * container), or a lock without an owner (an earlier version's): only a lock left unrefreshed
 * for the stale interval (LockTiming) proves it gone.
 */
export type OwnerVerdict = 'gone' | 'alive' | 'unverifiable';

function judge(owner: SpoolOwner | undefined, me: SpoolOwner): OwnerVerdict {
  if (owner === undefined || owner.host !== me.host) return 'unverifiable';
  if (owner.bootId !== undefined && me.bootId !== undefined && owner.bootId !== me.bootId)
    return 'gone';
  if (owner.pidNamespace !== me.pidNamespace) return 'unverifiable';
  if (owner.pid === me.pid) return heldHere.has(owner.token) ? 'alive' : 'gone';
  return alive(owner.pid) ? 'alive' : 'gone';
}

/** Someone else's lock on the directory, as found. */
export interface LockHolder {
  owner: SpoolOwner | undefined;
  /** Time since the owner last refreshed the lock. */
  ageMillis: number;
  verdict: Exclude<OwnerVerdict, 'gone'>;
}

export type LockAttempt = { kind: 'taken'; lock: SpoolLock } | { kind: 'held'; holder: LockHolder };

interface Found {
  owner: SpoolOwner | undefined;
  ageMillis: number;
  verdict: OwnerVerdict;
  stale: boolean;
}

async function inspect(
  lockDir: string,
  me: SpoolOwner,
  timing: LockTiming,
): Promise<Found | undefined> {
  let ageMillis: number;
  try {
    ageMillis = Date.now() - (await stat(lockDir)).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let owner: SpoolOwner | undefined;
  try {
    owner = JSON.parse(await readFile(join(lockDir, OWNER), 'utf8')) as SpoolOwner;
  } catch {
    owner = undefined;
  }
  const verdict = judge(owner, me);
  return { owner, ageMillis, verdict, stale: ageMillis > timing.staleMillis };
}

const takeable = (found: Found) => found.stale || found.verdict === 'gone';

function heldBy(found: Found | undefined): LockAttempt {
  // Found gone again after losing a race: whoever won is about to show up; judge it next time.
  const verdict = found?.verdict === 'alive' ? 'alive' : 'unverifiable';
  return {
    kind: 'held',
    holder: { owner: found?.owner, ageMillis: found?.ageMillis ?? 0, verdict },
  };
}

/**
 * Tries once to take the spool directory for this process, off the event loop. The lock is a
 * directory that appears atomically (rename) with its owner already inside, so nobody ever
 * reads a lock without its owner. It is taken over only when provably stale: not refreshed for
 * `timing.staleMillis`, or its owner is certainly gone (see OwnerVerdict). Otherwise it answers who
 * holds it; the caller decides whether to wait. Call only with a claim on `dir` (claimSpoolDir).
 */
export async function tryLockSpoolDir(
  dir: string,
  timing: LockTiming = LOCK_TIMING,
): Promise<LockAttempt> {
  const lockDir = join(dir, LOCK);
  const me = await identity();
  let found = await inspect(lockDir, me, timing);
  // While someone holds it, a try costs a stat and a read, and writes nothing.
  if (found !== undefined && !takeable(found)) return heldBy(found);
  const candidate = join(dir, `${LOCK}.${me.token}.tmp`);
  await mkdir(candidate);
  try {
    await writeFile(join(candidate, OWNER), JSON.stringify(me));
    for (let round = 0; round < 3; round++) {
      if (found !== undefined) {
        if (!takeable(found)) return heldBy(found);
        await takeOver(dir, lockDir, me, found, timing);
      }
      // A lock directory without an owner inside (an earlier version's) was judged above:
      // rename(2) would replace an empty directory.
      if (await tryRename(candidate, lockDir)) {
        return { kind: 'taken', lock: new HeldLock(dir, lockDir, me, timing.refreshMillis) };
      }
      found = await inspect(lockDir, me, timing); // someone else took it at the same moment
    }
    return heldBy(found);
  } finally {
    // Gone already when the rename won; a failure here must not hide a lock we hold.
    await rm(candidate, { recursive: true, force: true }).catch(() => {});
  }
}

/** rename(2) of a directory onto a path that exists fails: exactly one taker wins. */
async function tryRename(from: string, to: string): Promise<boolean> {
  try {
    await rename(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EISDIR') return false;
    throw error;
  }
}

async function takeOver(
  dir: string,
  lockDir: string,
  me: SpoolOwner,
  found: Found,
  timing: LockTiming,
): Promise<void> {
  // One takeover at a time: a taker that judged the lock stale may otherwise move aside the
  // fresh lock another taker has just put in its place (both would then hold the directory).
  const mutex = join(dir, `${LOCK}.takeover`);
  try {
    await mkdir(mutex);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another takeover runs now; one a crash left behind goes once it is stale.
    const age = await stat(mutex).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > timing.staleMillis) await rm(mutex, { recursive: true, force: true });
    return;
  }
  try {
    // Judged again under the mutex: still the lock judged before, and still takeable.
    const now = await inspect(lockDir, me, timing);
    if (now === undefined || !takeable(now) || now.owner?.token !== found.owner?.token) return;
    const owner = now.owner;
    log.warn(
      `spoolDir ${dir}: taking over the lock of pid ${owner?.pid ?? '?'} on ${owner?.host ?? '?'}, ` +
        (now.stale ? `not refreshed for ${(now.ageMillis / 1000).toFixed(1)} s` : 'which is gone'),
    );
    const aside = join(dir, `${LOCK}.${me.token}.stale`);
    if (await tryRename(lockDir, aside).catch(() => false))
      await rm(aside, { recursive: true, force: true });
  } finally {
    await rm(mutex, { recursive: true, force: true }).catch(() => {});
  }
}

/** A spool directory held by this process. */
export interface SpoolLock {
  /**
   * Stops refreshing and removes the lock, if it is still ours; bounded in time. True when it
   * is done; false while a hung disk still holds the removal (the directory must then stay
   * claimed, so this process cannot take it again and have the late removal delete that lock).
   */
  release(): Promise<boolean>;
}

class HeldLock implements SpoolLock {
  readonly #owner: SpoolOwner;
  readonly #dir: string;
  readonly #lockDir: string;
  readonly #timer: NodeJS.Timeout;
  #refreshing = false;
  #lost = false;

  constructor(dir: string, lockDir: string, owner: SpoolOwner, refreshMillis: number) {
    this.#owner = owner;
    this.#dir = dir;
    this.#lockDir = lockDir;
    this.#timer = setInterval(() => void this.#refresh(), refreshMillis);
    this.#timer.unref();
    heldHere.add(owner.token);
  }

  /** Touches the lock, off the event loop; one at a time, so a hung disk piles nothing up. */
  async #refresh(): Promise<void> {
    if (this.#refreshing || this.#lost) return;
    this.#refreshing = true;
    try {
      if (!(await this.#stillOurs())) {
        this.#lost = true;
        heldHere.delete(this.#owner.token);
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

  /**
   * Whether the lock still names us. Throws when its owner cannot be read now (EMFILE, EIO, ...):
   * that says nothing about who owns it, and the next refresh reads it again.
   */
  async #stillOurs(): Promise<boolean> {
    let json: string;
    try {
      json = await readFile(join(this.#lockDir, OWNER), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    try {
      return (JSON.parse(json) as SpoolOwner).token === this.#owner.token;
    } catch {
      return false;
    }
  }

  async release(): Promise<boolean> {
    clearInterval(this.#timer);
    const removed = (async () => {
      if (this.#lost || !(await this.#stillOurs())) return;
      // Moved aside before removal: a successor's lock can never be the one deleted.
      const aside = `${this.#lockDir}.${this.#owner.token}.released`;
      await rename(this.#lockDir, aside);
      await rm(aside, { recursive: true, force: true });
    })().then(() => {
      heldHere.delete(this.#owner.token);
    });
    return settleWithin(
      removed.catch((error: unknown) =>
        log.warn(
          `could not release the lock of spoolDir ${this.#dir}: ${(error as Error).message}`,
        ),
      ),
      RELEASE_GRACE_MILLIS,
    );
  }
}
