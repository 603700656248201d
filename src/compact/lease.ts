import type { CompactionStore } from './store.js';

/**
 * A lease on one hour partition, so that two compactors never write outputs for it at once.
 *
 * Leases are numbered objects `{directory}/{generation}.lease` (JSON), each created with `If-None-Match:
 * *` and never overwritten; the highest generation is the lease. To take the partition, a
 * compactor reads the highest; if it is unexpired (by its `expiresAt` plus a clock-skew
 * allowance) the partition is busy, else it creates the next generation. Of two that try at
 * once, the server lets one create it. The winner then lists again and holds the lease only if
 * its generation is still the highest (one that read an older listing and created a lower
 * generation sees the higher one and backs off). Renewing is creating the next generation
 * before expiry; releasing is creating one that has already expired. Lower generations are
 * deleted as they are superseded; the highest is never deleted, so numbers never go back.
 *
 * A highest generation that cannot be read (garbled, not a lease) says no expiry. Its object's
 * age does: a holder renews by creating the next generation, so the highest of a lease still
 * held is never older than the lease. It is taken as expired once the store's time of its write
 * is `durationMillis` plus the clock-skew allowance past (this run's lease: compactors of one
 * prefix must not use a shorter one than any other), and said so either way.
 */

/** What a lease object holds. */
interface LeaseBody {
  holder: string;
  generation: number;
  /** Unix milliseconds, by the holder's clock; 0 once released. */
  expiresAt: number;
}

export interface LeaseOptions {
  store: CompactionStore;
  /** Where the partition's generations live (leaseDirectory()). */
  directory: string;
  /** Who is asking, for messages: host, process and run. */
  holder: string;
  durationMillis: number;
  /** How far apart compactors' clocks may be: an expired lease is taken this much later. */
  clockSkewMillis: number;
  now?: () => number;
}

export type LeaseAttempt =
  | { lease: Lease; tookOver?: UnreadableLease }
  | { busy: { holder: string; expiresAt: number | undefined; unreadable?: UnreadableLease } };

/** The highest generation, which cannot be read: what is wrong, and when it counts as expired. */
export interface UnreadableLease {
  key: string;
  reason: string;
  /** Its write's time plus a lease and the skew allowance; undefined if the store gave none. */
  expiredAt: number | undefined;
}

/** The lease was taken over (its holder overran it): the work must stop before its next step. */
export class LeaseLostError extends Error {
  constructor(directory: string, why = 'another compactor took it over') {
    super(`lost the compaction lease ${directory}: ${why}`);
    this.name = 'LeaseLostError';
  }
}

const GENERATION = /\/(\d{12})\.lease$/;
const MAX_LEASE_BYTES = 64 * 1024;

/**
 * Who holds the partition now, as acquireLease would find it, without writing: busy, or free
 * from `generation` on (tookOver: the unreadable highest generation it would take over).
 */
export async function leaseState(
  options: LeaseOptions,
  signal: AbortSignal,
): Promise<
  Extract<LeaseAttempt, { busy: unknown }> | { next: number; tookOver?: UnreadableLease }
> {
  const now = options.now ?? Date.now;
  const listed = await listGenerationsAt(options, signal);
  const top = listed.at(-1);
  let tookOver: UnreadableLease | undefined;
  if (top !== undefined) {
    const body = await readLeaseOrProblem(options, top.generation, signal);
    if (typeof body === 'string') {
      const written = top.lastModified;
      const unreadable: UnreadableLease = {
        key: keyOf(options.directory, top.generation),
        reason: body,
        expiredAt:
          written === undefined
            ? undefined
            : written + options.durationMillis + options.clockSkewMillis,
      };
      if (unreadable.expiredAt === undefined || unreadable.expiredAt >= now()) {
        return { busy: { holder: 'unknown', expiresAt: undefined, unreadable } };
      }
      tookOver = unreadable;
    } else if (body.expiresAt + options.clockSkewMillis > now()) {
      return { busy: { holder: body.holder, expiresAt: body.expiresAt } };
    }
  }
  const next = (top?.generation ?? -1) + 1;
  return tookOver === undefined ? { next } : { next, tookOver };
}

export async function acquireLease(
  options: LeaseOptions,
  signal: AbortSignal,
): Promise<LeaseAttempt> {
  const now = options.now ?? Date.now;
  const state = await leaseState(options, signal);
  if ('busy' in state) return state;
  const { next, tookOver } = state;
  const lease = new Lease(options, next, now() + options.durationMillis);
  const won = await lease.claim(lease.generation, lease.expiresAt, signal);
  if (won !== true) return { busy: won };
  return tookOver === undefined ? { lease } : { lease, tookOver };
}

export class Lease {
  readonly #options: LeaseOptions;
  #generation: number;
  #expiresAt: number;

  constructor(options: LeaseOptions, generation: number, expiresAt: number) {
    this.#options = options;
    this.#generation = generation;
    this.#expiresAt = expiresAt;
  }

  get generation(): number {
    return this.#generation;
  }

  get expiresAt(): number {
    return this.#expiresAt;
  }

  /** Renews the lease when less than `millis` of it is left; LeaseLostError if it was taken. */
  async keep(millis: number, signal: AbortSignal): Promise<void> {
    const now = this.#options.now ?? Date.now;
    if (this.#expiresAt - now() >= millis) return;
    const next = this.#generation + 1;
    const expiresAt = now() + this.#options.durationMillis;
    if ((await this.claim(next, expiresAt, signal)) !== true) {
      throw new LeaseLostError(this.#options.directory);
    }
  }

  /**
   * Runs `step` (an output's PUT) under the lease: its signal aborts when the lease runs out by
   * this clock, and the lease is renewed while the step runs. Another compactor takes the hour
   * only the clock-skew allowance after that, so an output never lands after it listed the hour
   * (it would then replace the same inputs, and every point would be there twice). A process
   * frozen through its renewals finds the step aborted when it wakes. LeaseLostError when the
   * lease ran out or was taken.
   */
  async during<T>(step: (signal: AbortSignal) => Promise<T>, outer: AbortSignal): Promise<T> {
    const o = this.#options;
    const now = o.now ?? Date.now;
    const controller = new AbortController();
    const stop = () => controller.abort(outer.reason);
    if (outer.aborted) stop();
    else outer.addEventListener('abort', stop, { once: true });
    let deadline: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(deadline);
      deadline = setTimeout(
        () =>
          controller.abort(
            new LeaseLostError(o.directory, 'it ran out while an output was being written'),
          ),
        Math.max(0, this.#expiresAt - now()),
      );
    };
    arm();
    let renewal: Promise<void> | undefined;
    const renew = setInterval(() => {
      renewal ??= this.keep(o.durationMillis / 2, controller.signal).then(
        () => {
          renewal = undefined;
          if (!controller.signal.aborted) arm();
        },
        (error: unknown) => {
          renewal = undefined;
          controller.abort(error);
        },
      );
    }, o.durationMillis / 4);
    try {
      return await step(controller.signal);
    } catch (error) {
      const reason: unknown = controller.signal.reason;
      throw reason instanceof LeaseLostError ? reason : error;
    } finally {
      clearTimeout(deadline);
      clearInterval(renew);
      outer.removeEventListener('abort', stop);
      await renewal;
    }
  }

  /** Gives the partition back: a generation that has already expired. */
  async release(signal: AbortSignal): Promise<void> {
    await this.claim(this.#generation + 1, 0, signal);
  }

  /**
   * Creates `generation` (If-None-Match), checks it is the highest, deletes the lower ones; true
   * when this lease holds it now, else who does.
   */
  async claim(
    generation: number,
    expiresAt: number,
    signal: AbortSignal,
  ): Promise<true | { holder: string; expiresAt: number | undefined }> {
    const o = this.#options;
    const body: LeaseBody = { holder: o.holder, generation, expiresAt };
    const bytes = new TextEncoder().encode(`${JSON.stringify(body)}\n`);
    const key = keyOf(o.directory, generation);
    if ((await o.store.put(key, bytes, true, signal)) === 'exists') {
      // Ours after all if an earlier attempt of this request landed (the SDK retried it).
      const there = await readLease(o, generation, signal);
      if (there?.holder !== o.holder) {
        return { holder: there?.holder ?? 'unknown', expiresAt: there?.expiresAt };
      }
    }
    const generations = await listGenerations(o, signal);
    const highest = generations.at(-1) ?? generation;
    if (highest > generation) {
      const there = await readLease(o, highest, signal);
      return { holder: there?.holder ?? 'unknown', expiresAt: there?.expiresAt };
    }
    this.#generation = generation;
    this.#expiresAt = expiresAt;
    const older = generations.filter((g) => g < generation).map((g) => keyOf(o.directory, g));
    if (older.length > 0) await o.store.delete(older, signal);
    return true;
  }
}

function keyOf(directory: string, generation: number): string {
  return `${directory}/${String(generation).padStart(12, '0')}.lease`;
}

async function listGenerations(options: LeaseOptions, signal: AbortSignal): Promise<number[]> {
  return (await listGenerationsAt(options, signal)).map((g) => g.generation);
}

/** The generations in order, each with the store's time of its write where it says. */
async function listGenerationsAt(
  options: LeaseOptions,
  signal: AbortSignal,
): Promise<{ generation: number; lastModified: number | undefined }[]> {
  const generations: { generation: number; lastModified: number | undefined }[] = [];
  for await (const { key, lastModified } of options.store.source.list(
    options.directory,
    undefined,
    signal,
  )) {
    const match = GENERATION.exec(key);
    if (match !== null) generations.push({ generation: Number(match[1]), lastModified });
  }
  return generations.sort((a, b) => a.generation - b.generation);
}

/** A generation's body; undefined when it cannot be read (gone since the listing, garbled). */
async function readLease(
  options: LeaseOptions,
  generation: number,
  signal: AbortSignal,
): Promise<LeaseBody | undefined> {
  const body = await readLeaseOrProblem(options, generation, signal);
  return typeof body === 'string' ? undefined : body;
}

/** A generation's body, or why it cannot be read. */
async function readLeaseOrProblem(
  options: LeaseOptions,
  generation: number,
  signal: AbortSignal,
): Promise<LeaseBody | string> {
  try {
    const bytes = await options.store.source.get(
      keyOf(options.directory, generation),
      signal,
      MAX_LEASE_BYTES,
    );
    const body = JSON.parse(new TextDecoder().decode(bytes)) as Partial<LeaseBody> | null;
    if (typeof body?.holder !== 'string' || typeof body.expiresAt !== 'number') {
      return 'not a lease: no holder or expiresAt';
    }
    return { holder: body.holder, generation, expiresAt: body.expiresAt };
  } catch (error) {
    signal.throwIfAborted();
    if ((error as { name?: unknown }).name === 'ReadAccessError') throw error;
    return error instanceof Error ? error.message : String(error);
  }
}
