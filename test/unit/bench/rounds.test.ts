import { describe, expect, test } from 'vitest';
import { interleavedRounds, readsAndFloors, type Step } from '../../../bench/lib/rounds.js';

/**
 * The lookups suite's schedule (bench/lib/rounds.ts): the baseline (read_json) is treated as our
 * side is: one untimed run first, then every timed round, the same repeat rule.
 */

interface Item {
  variant: string;
  millis: number;
}
const parquet: Item = { variant: 'parquet', millis: 20 };
const json: Item = { variant: 'json', millis: 5_000 };
const jsonHour: Item = { variant: 'json', millis: 200 };
const compacted: Item = { variant: 'compacted', millis: 300 };

async function schedule(items: Item[], rounds: number) {
  const calls: { item: Item; round: number }[] = [];
  const after: number[] = [];
  const repeats = await interleavedRounds(items, {
    rounds,
    repeats: 5,
    fastMillis: 250,
    run: async (item, round) => {
      calls.push({ item, round });
      return item.millis;
    },
    afterRound: async (round) => {
      after.push(round);
    },
  });
  return { calls, after, repeats };
}

describe('the rounds of a comparison', () => {
  test('every item, the baseline too, runs once untimed before any timed run', async () => {
    const { calls } = await schedule([parquet, json, compacted], 3);
    const untimed = calls.filter((c) => c.round === -1).map((c) => c.item);
    expect(untimed).toEqual([parquet, json, compacted]);
    const firstTimed = calls.findIndex((c) => c.round >= 0);
    expect(calls.slice(0, firstTimed).every((c) => c.round === -1)).toBe(true);
    expect(calls.slice(firstTimed).every((c) => c.round >= 0)).toBe(true);
  });

  test('every item runs in every round, as many times as the repeat rule says', async () => {
    const { calls, after } = await schedule([parquet, json, jsonHour, compacted], 3);
    const timed = (item: Item, round: number) =>
      calls.filter((c) => c.item === item && c.round === round).length;
    for (const round of [0, 1, 2]) {
      expect([parquet, json, jsonHour, compacted].map((i) => timed(i, round))).toEqual([
        5, 1, 5, 1,
      ]);
    }
    expect(after).toEqual([0, 1, 2]);
  });

  test('rounds alternate the order', async () => {
    const { calls } = await schedule([compacted, json], 2);
    expect(calls.map((c) => `${c.round} ${c.item.variant}`)).toEqual([
      '-1 compacted',
      '-1 json',
      '0 compacted',
      '0 json',
      '1 json',
      '1 compacted',
    ]);
  });

  test('the runs in a row of each item are returned', async () => {
    const { repeats } = await schedule([parquet, json], 1);
    expect(repeats.get(parquet)).toBe(5);
    expect(repeats.get(json)).toBe(1);
  });
});

describe("the rounds of the reads and DuckDB's floors over their files", () => {
  /** A read with files (a floor) or without (read_json); the floor is quicker than its read. */
  const reads = [
    { variant: 'parquet', millis: 300, floorMillis: 20 },
    { variant: 'json', millis: 5_000, floorMillis: undefined },
    { variant: 'compacted', millis: 100, floorMillis: 10 },
  ];
  type Read = (typeof reads)[number];

  async function scheduleWithFloors(rounds: number) {
    const calls: { step: string; round: number }[] = [];
    await readsAndFloors(reads, (r) => r.floorMillis !== undefined, {
      rounds,
      repeats: 5,
      fastMillis: 250,
      run: async (s: Step<Read>, round) => {
        calls.push({ step: `${s.read.variant}${s.floor ? ' floor' : ''}`, round });
        return (s.floor ? s.read.floorMillis : s.read.millis) as number;
      },
    });
    return calls;
  }

  test('every floor, as every read, runs once untimed before any timed run', async () => {
    const calls = await scheduleWithFloors(2);
    const firstTimed = calls.findIndex((c) => c.round >= 0);
    expect(calls.slice(0, firstTimed).map((c) => c.step)).toEqual([
      'parquet',
      'parquet floor',
      'json',
      'compacted',
      'compacted floor',
    ]);
    expect(calls.slice(firstTimed).every((c) => c.round >= 0)).toBe(true);
  });

  test('a floor runs in its round beside its read, by the repeat rule of every step', async () => {
    const calls = await scheduleWithFloors(2);
    const inRound = (round: number) =>
      calls
        .filter((c) => c.round === round)
        .map((c) => c.step)
        .filter((step, i, all) => step !== all[i - 1]); // runs in a row counted once
    expect(inRound(0)).toEqual([
      'parquet',
      'parquet floor',
      'json',
      'compacted',
      'compacted floor',
    ]);
    expect(inRound(1)).toEqual([
      'compacted floor',
      'compacted',
      'json',
      'parquet floor',
      'parquet',
    ]);
    const runs = (step: string) => calls.filter((c) => c.round === 0 && c.step === step).length;
    // Under 250 ms untimed: 5 in a row, the floors as the reads.
    expect(['parquet', 'parquet floor', 'json', 'compacted', 'compacted floor'].map(runs)).toEqual([
      1, 5, 1, 5, 5,
    ]);
  });
});
