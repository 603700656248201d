import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { byteOrder, dictionaryOfIds, StringPool } from '../../../src/parquet/dictionaries.js';
import { AttributeSets, addObjectSet, SetShape, Strings } from '../../../src/parquet/tables.js';
import { prng } from '../../support/prng.js';

/**
 * A dictionary's strings are sorted by their UTF-8 bytes (unsigned, a prefix first), which is
 * Buffer.compare's order: the expected order here is Buffer.compare's, ties by index. The strings
 * are drawn from a few bytes (0, 1, '/', 'a', 0x80, 0xff) with shared prefixes, so that runs of
 * one 4-byte digit, strings that end inside a digit or are prefixes of others, and runs long
 * enough for the radix passes (more than 12) all occur.
 */

const pack = (views: Uint8Array[]) => {
  const starts = new Uint32Array(views.length);
  const ends = new Uint32Array(views.length);
  let total = 0;
  views.forEach((v, i) => {
    starts[i] = total;
    total += v.length;
    ends[i] = total;
  });
  const bytes = new Uint8Array(total);
  views.forEach((v, i) => {
    bytes.set(v, starts[i]);
  });
  return { bytes, starts, ends };
};

const expected = (views: Uint8Array[]) =>
  views
    .map((_, i) => i)
    .sort((a, b) => Buffer.compare(views[a] as Uint8Array, views[b] as Uint8Array) || a - b);

const bytesOf = fc
  .tuple(
    fc.constantFrom([], [0x2f, 0x61, 0x70, 0x69, 0x2f], [0x2f, 0x61, 0x70, 0x69]),
    fc.array(fc.constantFrom(0, 1, 0x2f, 0x61, 0x80, 0xff), { maxLength: 11, size: 'max' }),
  )
  .map(([prefix, rest]) => Uint8Array.from([...prefix, ...rest]));

describe('dictionary order', () => {
  test('byteOrder sorts as Buffer.compare does, equal strings in their order', () => {
    fc.assert(
      fc.property(fc.array(bytesOf, { minLength: 13, maxLength: 400, size: 'max' }), (views) => {
        const { bytes, starts, ends } = pack(views);
        expect(Array.from(byteOrder(bytes, starts, ends))).toEqual(expected(views));
      }),
      { numRuns: 200 },
    );
  });

  test('a dictionary of pool strings and a schema name: its page in Buffer.compare order', () => {
    const strings = [
      '/api/v1/orders/7',
      '/api/v1/orders',
      '10.0.3.17',
      'é',
      '',
      '/api/v1/orders/12',
    ];
    const views = strings.map((s) => Buffer.from(s));
    const { bytes, starts } = pack(views);
    const offsets = new Uint32Array(views.length + 1);
    offsets.set(starts);
    offsets[views.length] = bytes.length;
    const pool = new StringPool(bytes, offsets, views.length, ['Unset']);
    const ids = [0, 1, 2, 3, 4, 5, 6]; // 6: the name 'Unset'
    const all = [...views, Buffer.from('Unset')];
    const want = expected(all).map((i) => ids[i]);
    const dict = dictionaryOfIds(pool, ids);
    expect(dict.ids).toEqual(want);
    want.forEach((id, rank) => {
      expect(dict.rank[id as number]).toBe(rank);
    });
    const page: Buffer[] = [];
    for (const id of want) {
      const b = all[id as number] as Buffer;
      const length = Buffer.alloc(4);
      length.writeUInt32LE(b.length);
      page.push(length, b);
    }
    expect(Buffer.from(dict.page)).toEqual(Buffer.concat(page));
  });
});

describe('a dictionary of ids that share bytes', () => {
  test('holds each string once, in order; every id indexes its bytes', () => {
    fc.assert(
      fc.property(
        fc.array(bytesOf, { minLength: 1, maxLength: 300, size: 'max' }),
        fc.array(fc.nat(), { maxLength: 300 }),
        (distinctish, picks) => {
          // A pool with repeats: strings.fresh gives a value seen twice two ids.
          const views = [...distinctish, ...picks.map((p) => distinctish[p % distinctish.length])];
          const { bytes, starts } = pack(views as Uint8Array[]);
          const offsets = new Uint32Array(views.length + 1);
          offsets.set(starts);
          offsets[views.length] = bytes.length;
          const pool = new StringPool(bytes, offsets, views.length);
          const ids = views.map((_, i) => i).reverse();
          const dict = dictionaryOfIds(pool, ids);
          const hex = (v: Uint8Array) => Buffer.from(v).toString('hex');
          const want = [...new Set(views.map((v) => hex(v as Uint8Array)))].sort((a, b) =>
            Buffer.compare(Buffer.from(a, 'hex'), Buffer.from(b, 'hex')),
          );
          expect(dict.ids.map((id) => hex(pool.bytes(id)))).toEqual(want);
          ids.forEach((id) => {
            expect(want[dict.rank[id] as number]).toBe(hex(pool.bytes(id)));
          });
          const page: Buffer[] = [];
          for (const h of want) {
            const length = Buffer.alloc(4);
            length.writeUInt32LE(h.length / 2);
            page.push(length, Buffer.from(h, 'hex'));
          }
          expect(Buffer.from(dict.page)).toEqual(Buffer.concat(page));
          expect(dict.width).toBe(Math.max(1, (want.length - 1).toString(2).length));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('attribute value ids of a batch', () => {
  /** The strings of a batch after objects { k: values(i) } of one column, i from 0 to n - 1. */
  const afterObjects = (n: number, values: (i: number) => unknown) => {
    const strings = new Strings();
    const sets = new AttributeSets();
    const shape = new SetShape();
    for (let i = 0; i < n; i++) addObjectSet(sets, strings, { k: values(i) }, ['k'], shape);
    return strings.count;
  };

  test('a key of a few hundred values is looked up: each value once in the batch', () => {
    // 200 values drawn at random: about 45 of the 64 looked up after the first 64 are new.
    const random = prng(5);
    expect(afterObjects(4_000, () => `user-${Math.floor(random() * 200)}`)).toBe(1 + 200);
  });

  test('a key whose values are nearly all new is no longer looked up', () => {
    // 1,000 values, then again: all new at first, so the repeats get ids of their own.
    expect(afterObjects(4_000, (i) => `path-${i % 1000}`)).toBe(1 + 4_000);
    // Numbers are looked up by number whatever the key: each once.
    expect(afterObjects(4_000, (i) => i % 1000)).toBe(1 + 1000);
  });

  test('a number keeps one id (its text made once), spelled as pcommon spells it', () => {
    const strings = new Strings();
    const text = (v: unknown) => {
      const id = strings.valueId(v);
      return id < 0 ? null : strings.text(id);
    };
    // Go: strconv.FormatInt for integers (the SDK writes -0 as intValue 0), float64AsString else.
    expect([1.5, 1.5, 0, -0, 2 ** 60, Number.NaN, 443, 443].map(text)).toEqual([
      '1.5',
      '1.5',
      '0',
      '0',
      '1152921504606846976',
      'NaN',
      '443',
      '443',
    ]);
    expect(strings.valueId(443)).toBe(strings.valueId(443));
    // Each string's UTF-8 as written, a leading U+FEFF and a lone surrogate (U+FFFD) too.
    expect(['\uFEFFx', 'é\uD800', '😀'].map((t) => strings.text(strings.id(t)))).toEqual([
      '\uFEFFx',
      'é\uFFFD',
      '😀',
    ]);
    expect([true, null, undefined, 'x'].map(text)).toEqual(['true', null, null, 'x']);
  });
});
