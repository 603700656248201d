import fc from 'fast-check';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { describe, expect, test } from 'vitest';
import { readHybrid } from '../../../src/parquet/hybrid-decode.js';
import { varint } from '../../support/hostile-parquet.js';

/** A run of the hybrid encoding: `count` times `value`, or bit-packed `values` (a multiple of 8). */
type Run = { rle: true; value: number; count: number } | { rle: false; values: number[] };

/** The runs' bytes, as the format spells them (written here, not by the package's writer). */
function encode(runs: Run[], width: number): number[] {
  const out: number[] = [];
  for (const run of runs) {
    if (run.rle) {
      out.push(...varint(run.count * 2));
      for (let b = 0; b < width; b += 8) out.push((run.value >>> b) & 0xff);
      continue;
    }
    out.push(...varint((run.values.length / 8) * 2 + 1));
    const packed = new Array<number>((run.values.length / 8) * width).fill(0);
    run.values.forEach((v, k) => {
      for (let bit = 0; bit < width; bit++) {
        if ((v >>> bit) & 1) {
          const at = k * width + bit;
          packed[at >> 3] = (packed[at >> 3] as number) | (1 << (at & 7));
        }
      }
    });
    out.push(...packed);
  }
  return out;
}

/**
 * Runs as a writer makes them. Not a bit-packed run of 0 groups: hyparquet reads a byte for it
 * all the same, which puts it out of step with what follows (an RLE run of a count in the
 * billions, which it writes value by value: seconds); the test below has one at the end.
 */
const runs = (width: number) =>
  fc.array(
    fc.oneof(
      fc.record({
        rle: fc.constant(true as const),
        value: fc.integer({ min: 0, max: 2 ** width - 1 }),
        count: fc.integer({ min: 0, max: 300 }),
      }),
      fc.record({
        rle: fc.constant(false as const),
        values: fc.integer({ min: 1, max: 6 }).chain((groups) =>
          fc.array(fc.integer({ min: 0, max: 2 ** width - 1 }), {
            minLength: 8 * groups,
            maxLength: 8 * groups,
          }),
        ),
      }),
    ),
    { maxLength: 12 },
  );

/** Reads `bytes` (after `skip` other bytes) both ways: each one's values and end, or its throw. */
function bothWays(bytes: number[], width: number, count: number, prefixed: boolean) {
  const body = prefixed
    ? [...new Uint8Array(Uint32Array.of(bytes.length).buffer), ...bytes]
    : bytes;
  const buffer = Uint8Array.from([9, 9, 9, ...body]);
  const read = (f: typeof readHybrid) => {
    const reader = { view: new DataView(buffer.buffer), offset: 3 };
    const output = new Int32Array(count);
    try {
      f(reader, width, output, prefixed ? undefined : bytes.length);
      return { values: Array.from(output), offset: reader.offset };
    } catch {
      return 'throws';
    }
  };
  return [read(readHybrid), read(readRleBitPackedHybrid as typeof readHybrid)] as const;
}

describe('readHybrid against hyparquet', () => {
  // Widths 0 and above 24 are hyparquet's own read (which takes seconds on some runs of those).
  test('the same values and end for any runs, widths 1 to 24, as many values or fewer or more', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 24 })
          .chain((width) =>
            fc.tuple(
              fc.constant(width),
              runs(width),
              fc.integer({ min: -20, max: 20 }),
              fc.boolean(),
            ),
          ),
        ([width, rs, more, prefixed]) => {
          const total = rs.reduce((n, r) => n + (r.rle ? r.count : r.values.length), 0);
          const count = Math.max(0, total + more);
          const [ours, theirs] = bothWays(encode(rs, width), width, count, prefixed);
          expect(ours).toEqual(theirs);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a bit-packed run cut short, and one of 0 groups at the end, throw as in hyparquet', () => {
    for (const width of [1, 3, 8, 13, 16, 24]) {
      const full = encode(
        [{ rle: false, values: Array.from({ length: 16 }, (_, k) => k % 2) }],
        width,
      );
      const [ours, theirs] = bothWays(full.slice(0, -1), width, 16, false);
      expect([ours, theirs]).toEqual(['throws', 'throws']);
      // A header of 0 groups, and nothing after it.
      const [o0, t0] = bothWays([1], width, 1, false);
      expect([o0, t0]).toEqual(['throws', 'throws']);
    }
  });
});
