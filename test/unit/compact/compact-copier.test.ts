import { describe, expect, test } from 'vitest';
import { SPAN_ROWS } from '../../../src/compact/flat-rows.js';
import { FlatStore } from '../../../src/signals/flat-parquet/store.js';
import type { SealedFlat } from '../../../src/signals/flat-parquet/table.js';
import { SPAN, SPANS } from '../../../src/signals/traces/parquet-schema.js';

/** Set `id` of a sealed batch as [key, value text or null] pairs, read from its tables. */
function entriesOf(s: SealedFlat, id: number): [string, string | null][] {
  const text = (i: number) =>
    Buffer.from(s.strings.subarray(s.stringOffsets[i], s.stringOffsets[i + 1])).toString('utf8');
  const out: [string, string | null][] = [];
  for (let e = s.setOffsets[id] as number; e < (s.setOffsets[id + 1] as number); e++) {
    const value = s.setEntries[2 * e + 1] as number;
    out.push([text(s.setEntries[2 * e] as number), value < 0 ? null : text(value)]);
  }
  return out;
}

describe("the compactor's copy of spans into a batch of its own (row groups, merged runs)", () => {
  test('each span keeps its attribute sets: empty values, shared and astral keys, a value equal to a key', () => {
    const sets: [string, string | null][][] = [
      [
        ['http.route', '/a'],
        ['empty', null],
        ['😀 key', 'é'],
      ],
      [],
      [
        ['http.route', 'empty'],
        ['empty', '/a'],
      ],
      [
        ['😀 key', null],
        ['only', '😀 key'],
      ],
    ];
    const source = new FlatStore(SPANS);
    source.strings.id('first');
    sets.forEach((entries) => {
      const r = source.addRow();
      const id = source.newSet(
        entries.map(([k]) => k),
        entries.map(([, v]) => v),
      );
      source.set(SPAN.SPAN_ATTRIBUTES, r, id);
    });
    const sealed = source.seal();
    // Copied in another order, twice over from the same batch (its string ids mapped once).
    const order = Uint32Array.from([3, 0, 2, 1]);
    const copier = SPAN_ROWS.copier(8);
    copier.add(sealed, 0, 4, order);
    copier.add(sealed, 0, 4);
    const copy = copier.seal() as SealedFlat;
    const attributes = copy.columns[SPAN.SPAN_ATTRIBUTES] as Uint32Array;
    const got = Array.from({ length: 8 }, (_, r) => entriesOf(copy, attributes[r] as number));
    expect(got).toEqual([3, 0, 2, 1, 0, 1, 2, 3].map((i) => sets[i]));
  });
});
