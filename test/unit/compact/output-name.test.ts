import { UUID } from 'uuidv7';
import { expect, test } from 'vitest';
import { uuidAbove } from '../../../src/compact/publish.js';
import { uuidv7Millis } from '../../../src/layout/key-template.js';

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MILLIS = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const id = (a: number, bHi: number, bLo: number) =>
  UUID.fromFieldsV7(MILLIS, a, bHi, bLo).toString();

// Objects of one millisecond sort by their random bits: an output must sort after every input
// (a reader paging past one of them must still find the output, see publish()).
test('uuidAbove: a UUIDv7 of the same millisecond that sorts after the id, random bits anywhere', () => {
  const ids = [
    id(0, 0, 0),
    id(0, 0, 1),
    id(0x7ff, 2 ** 29, 12345),
    id(0xfff, 2 ** 30 - 2, 2 ** 32 - 1),
    ...Array.from({ length: 200 }, () => UUID.fromFieldsV7(MILLIS, ...randomFields()).toString()),
  ];
  for (const before of ids) {
    const after = uuidAbove(before);
    expect(after).toMatch(UUIDV7);
    expect(after > before, `${after} > ${before}`).toBe(true);
    expect(uuidv7Millis(after)).toBe(MILLIS);
  }
});

test('uuidAbove: the next millisecond when the random bits leave no room above', () => {
  for (const before of [
    id(0xfff, 2 ** 30 - 1, 2 ** 32 - 1),
    id(0xfff, 2 ** 30 - 1, 2 ** 31),
    id(0xfff, 2 ** 30 - 1, 0),
  ]) {
    const after = uuidAbove(before);
    expect(after).toMatch(UUIDV7);
    expect(after > before).toBe(true);
    expect(uuidv7Millis(after)).toBe(MILLIS + 1);
  }
});

test('uuidAbove: fresh random bits, not a fixed successor', () => {
  const before = id(0x123, 456, 789);
  expect(new Set(Array.from({ length: 20 }, () => uuidAbove(before))).size).toBe(20);
});

function randomFields(): [number, number, number] {
  const r = (bits: number) => Math.floor(Math.random() * 2 ** bits);
  return [r(12), r(30), r(32)];
}
