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
  | { lease: Lease }
  | { busy: { holder: string; expiresAt: number | undefined } };

/** The lease was taken over (its holder overran it): the work must stop before its next step. */
export class LeaseLostError extends Error {
  constructor(directory: string, why = 'another compactor took it over') {
    super(`lost the compaction lease ${directory}: ${why}`);
    this.name = 'LeaseLostError';
  }
}

const GENERATION = /\/(\d{12})\.lease$/;
const MAX_LEASE_BYTES = 64 * 1024;

export async function acquireLease(
  options: LeaseOptions,
  signal: AbortSignal,
): Promise<LeaseAttempt> {
  const now = options.now ?? Date.now;
  const generations = await listGenerations(options, signal);
  const top = generations.at(-1);
  if (top !== undefined) {
    const body = await readLease(options, top, signal);
    if (body === undefined) return { busy: { holder: 'unknown', expiresAt: undefined } };
    if (body.expiresAt + options.clockSkewMillis > now()) {
      return { busy: { holder: body.holder, expiresAt: body.expiresAt } };
    }
  }
  const lease = new Lease(options, (top ?? -1) + 1, now() + options.durationMillis);
  const won = await lease.claim(lease.generation, lease.expiresAt, signal);
  if (won !== true) return { busy: won };
  return { lease };
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
  const generations: number[] = [];
  for await (const { key } of options.store.source.list(options.directory, undefined, signal)) {
    const match = GENERATION.exec(key);
    if (match !== null) generations.push(Number(match[1]));
  }
  return generations.sort((a, b) => a - b);
}

/** A generation's body; undefined when it cannot be read (gone since the listing, garbled). */
async function readLease(
  options: LeaseOptions,
  generation: number,
  signal: AbortSignal,
): Promise<LeaseBody | undefined> {
  try {
    const bytes = await options.store.source.get(
      keyOf(options.directory, generation),
      signal,
      MAX_LEASE_BYTES,
    );
    const body = JSON.parse(new TextDecoder().decode(bytes)) as Partial<LeaseBody>;
    if (typeof body.holder !== 'string' || typeof body.expiresAt !== 'number') return undefined;
    return { holder: body.holder, generation, expiresAt: body.expiresAt };
  } catch (error) {
    signal.throwIfAborted();
    if ((error as { name?: unknown }).name === 'ReadAccessError') throw error;
    return undefined;
  }
}
