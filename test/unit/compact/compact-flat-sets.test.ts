import { describe, expect, test } from 'vitest';
import { appendFlatColumns } from '../../../src/compact/flat-append-columns.js';
import { SPAN_ROWS } from '../../../src/compact/flat-rows.js';
import type { FlatRepeated } from '../../../src/parquet/flat-columns.js';
import type { ColumnsRead } from '../../../src/parquet/read.js';
import { FlatStore } from '../../../src/signals/flat-parquet/store.js';
import type { SealedFlat } from '../../../src/signals/flat-parquet/table.js';
import { LOG, LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
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

describe("the compactor's append of a row group read flat and coded (dictionary indices)", () => {
  test('maps: a key given twice keeps its first place and its last value, null values, codes past the dictionary, a row equal to the one before', () => {
    const dictionary = ['k1', 'k2', 'v1', 'v2', '😀'];
    // Row entries as codes into `dictionary` (-1: null), keys and values of LogAttributes.
    const rows: [number, number][][] = [
      [
        [0, 2],
        [1, -1],
      ],
      [
        [0, 2],
        [1, -1],
      ],
      [
        [0, 2],
        [1, 3],
        [0, 4],
      ],
      [[4, 9]],
      [],
    ];
    const expected: [string, string | null][][] = [
      [
        ['k1', 'v1'],
        ['k2', null],
      ],
      [
        ['k1', 'v1'],
        ['k2', null],
      ],
      [
        ['k1', '😀'],
        ['k2', 'v2'],
      ],
      // A code past the dictionary: no value (flat-columns.ts refuses such a file before this).
      [['😀', null]],
      [],
    ];
    const n = rows.length;
    const offsets = new Int32Array(n + 1);
    rows.forEach((r, i) => {
      offsets[i + 1] = (offsets[i] as number) + r.length;
    });
    const entries = rows.flat();
    const plain = (v: unknown) => Array.from({ length: n }, () => v);
    const columns = new Map<string, ArrayLike<unknown>>(
      LOG_RECORDS.columns
        .filter((c) => c.kind !== 'map')
        .map((c) => [
          c.name,
          c.kind === 'timestamp'
            ? plain(1n)
            : c.kind === 'int32'
              ? plain(9)
              : c.kind === 'text'
                ? plain('text')
                : new Int32Array(n).fill(4),
        ]),
    );
    const dictionaries = new Map(
      LOG_RECORDS.columns.filter((c) => c.kind === 'string').map((c) => [c.name, dictionary]),
    );
    const empty: FlatRepeated = { keys: [], values: [], offsets: new Int32Array(n + 1) };
    const read: ColumnsRead = {
      columns,
      dictionaries,
      flat: new Map([
        ['ResourceAttributes', empty],
        ['ScopeAttributes', empty],
        [
          'LogAttributes',
          {
            keys: Int32Array.from(entries, ([k]) => k),
            values: Int32Array.from(entries, ([, v]) => v),
            offsets,
            keyDictionary: dictionary,
            valueDictionary: dictionary,
          },
        ],
      ]),
      rows: n,
      rawBytes: 0,
    };
    const store = new FlatStore(LOG_RECORDS);
    expect(appendFlatColumns(store, LOG_RECORDS, read)).toBe(n);
    const sealed = store.seal();
    const sets = sealed.columns[LOG.LOG_ATTRIBUTES] as Uint32Array;
    expect(Array.from({ length: n }, (_, r) => entriesOf(sealed, sets[r] as number))).toEqual(
      expected,
    );
    // The same map as the row before is the same set.
    expect(sets[1]).toBe(sets[0]);
    // Coded strings: the dictionary's fifth entry in every string column.
    const text = (id: number) =>
      Buffer.from(
        sealed.strings.subarray(sealed.stringOffsets[id], sealed.stringOffsets[id + 1]),
      ).toString('utf8');
    expect(text((sealed.columns[LOG.SERVICE_NAME] as Uint32Array)[3] as number)).toBe('😀');
  });

  test('attribute values nearly all new in the batch get ids without a lookup, and each row keeps its own', () => {
    // 400 rows of two row groups; `user.id` new in every row (but a few repeats), `method` one
    // of three. Each row group's dictionary holds every text once, as a file's does.
    const n = 200;
    const rowsOf = (group: number) =>
      Array.from({ length: n }, (_, r) => {
        const i = group * n + r;
        return [
          ['method', ['GET', 'PUT', 'POST'][i % 3] as string],
          ['user.id', i % 50 === 7 ? 'u-7' : `u-${i}`],
        ] as [string, string][];
      });
    const appendGroup = (store: FlatStore, rows: [string, string][][]) => {
      const dictionary = [...new Set(rows.flat().flat())];
      const code = (t: string) => dictionary.indexOf(t);
      const entries = rows.flat();
      const offsets = Int32Array.from({ length: n + 1 }, (_, r) => 2 * r);
      const plain = (v: unknown) => Array.from({ length: n }, () => v);
      const read: ColumnsRead = {
        columns: new Map<string, ArrayLike<unknown>>(
          LOG_RECORDS.columns
            .filter((c) => c.kind !== 'map')
            .map((c) => [
              c.name,
              c.kind === 'timestamp' ? plain(1n) : c.kind === 'int32' ? plain(9) : plain('x'),
            ]),
        ),
        dictionaries: new Map(),
        flat: new Map<string, FlatRepeated>([
          ['ResourceAttributes', { keys: [], values: [], offsets: new Int32Array(n + 1) }],
          ['ScopeAttributes', { keys: [], values: [], offsets: new Int32Array(n + 1) }],
          [
            'LogAttributes',
            {
              keys: Int32Array.from(entries, ([k]) => code(k)),
              values: Int32Array.from(entries, ([, v]) => code(v)),
              offsets,
              keyDictionary: dictionary,
              valueDictionary: dictionary,
            },
          ],
        ]),
        rows: n,
        rawBytes: 0,
      };
      expect(appendFlatColumns(store, LOG_RECORDS, read)).toBe(n);
    };
    const store = new FlatStore(LOG_RECORDS);
    const expected = [...rowsOf(0), ...rowsOf(1)];
    appendGroup(store, rowsOf(0));
    appendGroup(store, rowsOf(1));
    const sealed = store.seal();
    const sets = sealed.columns[LOG.LOG_ATTRIBUTES] as Uint32Array;
    expect(Array.from({ length: 2 * n }, (_, r) => entriesOf(sealed, sets[r] as number))).toEqual(
      expected,
    );
    // Without lookups: 'u-7' of the second group is a string of its own (the dictionary of a
    // file keeps one of equal bytes); looked up, the batch would hold each text once.
    const texts = Array.from({ length: sealed.stringCount }, (_, i) =>
      Buffer.from(
        sealed.strings.subarray(sealed.stringOffsets[i], sealed.stringOffsets[i + 1]),
      ).toString('utf8'),
    );
    expect(texts.filter((t) => t === 'u-7')).toHaveLength(2);
  });
});
