/**
 * The order of a comparison's timed runs (bench/lake-lookups.ts): every item, ours, the baseline
 * and DuckDB's floors alike, once untimed first, then interleaved rounds, each item as often as
 * the others.
 */

export interface RoundsOptions<T> {
  /** Timed rounds; every item runs in each. */
  rounds: number;
  /** Runs in a row in each round of an item whose untimed run took under `fastMillis`. */
  repeats: number;
  fastMillis: number;
  /** Runs one item and returns its time in milliseconds; `round` is -1 for the untimed run. */
  run: (item: T, round: number) => Promise<number>;
  /** Called after each timed round, with how many runs in a row each item had in it. */
  afterRound?: (round: number, repeatsOf: (item: T) => number) => Promise<void>;
}

/**
 * Runs every item once untimed (code loaded, files in the page cache: no item's first timed run is
 * its cold one), then `rounds` rounds, in order and reversed in turn (no item always runs right
 * after the same other). An item whose untimed run took under `fastMillis` runs `repeats` times
 * in a row in each round, so that one preemption of a busy machine is not its median; the rule is
 * the same for every item. Returns the runs in a row of each item.
 */
export async function interleavedRounds<T>(
  items: readonly T[],
  o: RoundsOptions<T>,
): Promise<Map<T, number>> {
  const repeats = new Map<T, number>();
  for (const item of items) {
    const millis = await o.run(item, -1);
    repeats.set(item, millis < o.fastMillis ? o.repeats : 1);
  }
  const repeatsOf = (item: T) => repeats.get(item) ?? 1;
  for (let round = 0; round < o.rounds; round++) {
    for (const item of round % 2 === 0 ? items : [...items].reverse()) {
      for (let i = repeatsOf(item); i > 0; i--) await o.run(item, round);
    }
    await o.afterRound?.(round, repeatsOf);
  }
  return repeats;
}

/** One timed step of a lookup comparison: a read, or DuckDB's floor over the read's files. */
export interface Step<T> {
  read: T;
  floor: boolean;
}

/**
 * The reads and, for each read that `hasFloor`, DuckDB's floor over its files, on one schedule
 * (interleavedRounds): each floor is a step as its read is, right after it, so it too runs once
 * untimed first (its first timed run is not its cold one), in every round in the alternating
 * order, and by the same repeat rule (its own untimed run under `fastMillis`: `repeats` in a row).
 */
export async function readsAndFloors<T>(
  reads: readonly T[],
  hasFloor: (read: T) => boolean,
  o: RoundsOptions<Step<T>>,
): Promise<Map<Step<T>, number>> {
  const steps = reads.flatMap((read): Step<T>[] =>
    hasFloor(read)
      ? [
          { read, floor: false },
          { read, floor: true },
        ]
      : [{ read, floor: false }],
  );
  return interleavedRounds(steps, o);
}
