import { PassThrough } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { CsvFields, csvField, TableWriter } from '../../../src/cli/format.js';
import { LineWriter } from '../../../src/cli/output.js';
import {
  CSV_COLUMNS,
  csvRow,
  type PointRecord,
  tableCells,
  valueText,
} from '../../../src/cli/point-record.js';
import { cutToCells, textCells } from '../../../src/cli/terminal-text.js';
import { attributes, instrumentKind, nanosToIso } from '../../../src/signals/metrics/rows.js';

function collector() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { out: new LineWriter(stream), text: () => text };
}

const base: PointRecord = {
  time: '2026-11-30T04:00:00.000000001Z',
  start: '',
  resource: { 'service.name': 'svc' },
  scope: 's',
  metric: 'm',
  type: 'counter',
  unit: '',
  temporality: 'cumulative',
  attributes: {},
};

describe('nanosToIso', () => {
  test('keeps every nanosecond, in UTC', () => {
    expect(nanosToIso('1796013380316000123')).toBe('2026-11-30T04:36:20.316000123Z');
    expect(nanosToIso('1000000000')).toBe('1970-01-01T00:00:01.000000000Z');
  });
  test('an unset timestamp is empty', () => {
    expect(nanosToIso('0')).toBe('');
    expect(nanosToIso('')).toBe('');
  });
});

describe('instrumentKind', () => {
  test.each([
    ['sum', true, 'counter'],
    ['sum', false, 'up-down-counter'],
    ['gauge', false, 'gauge'],
    ['histogram', false, 'histogram'],
    ['exponentialHistogram', false, 'exponential-histogram'],
  ] as const)('%s (monotonic %s) is a %s', (type, monotonic, kind) => {
    expect(instrumentKind({ type, monotonic })).toBe(kind);
  });
});

describe('CSV', () => {
  test('fields with commas, quotes or line breaks are quoted, quotes doubled (RFC 4180)', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
  });

  test('a row has every column; objects are JSON text, absent values empty', () => {
    const row = csvRow({ ...base, attributes: { route: '/a,b' }, value: 12 }, new CsvFields(false));
    expect(row).toBe(
      '2026-11-30T04:00:00.000000001Z,,"{""service.name"":""svc""}",s,m,counter,,cumulative,"{""route"":""/a,b""}",12,,,,,',
    );
    expect(CSV_COLUMNS).toHaveLength(15);
  });
});

describe('valueText', () => {
  /** valueText of an exponential histogram of `count` values in `buckets`. */
  const exponentialText = (count: number, buckets: PointRecord['buckets']) =>
    valueText({ ...base, type: 'exponential-histogram', count, buckets });

  test('a counter or gauge shows its value', () => {
    expect(valueText({ ...base, value: 42.5 })).toBe('42.5');
  });

  test('a histogram shows its statistics and its non-empty buckets by upper bound', () => {
    const text = valueText({
      ...base,
      type: 'histogram',
      count: 4,
      sum: 1333,
      min: 3,
      max: 1000,
      buckets: { explicitBounds: [5, 50, 500], bucketCounts: [1, 0, 2, 1] },
    });
    expect(text).toBe('count=4 sum=1333 min=3 max=1000 | ≤5:1 ≤500:2 >500:1');
  });

  test('an exponential histogram shows each bucket as (low,high] from its scale and offset', () => {
    // Scale 0: base 2, bucket i is (2^i, 2^(i+1)].
    const text = exponentialText(4, {
      scale: 0,
      zeroCount: 1,
      positive: { offset: 1, bucketCounts: [1, 0, 1] },
      negative: { offset: 0, bucketCounts: [1] },
    });
    expect(text).toBe('count=4 | [-2,-1):1 0:1 (2,4]:1 (8,16]:1');
  });

  test('bounds get the digits it takes to tell them apart at fine scales', () => {
    const text = exponentialText(1, {
      scale: 20,
      zeroCount: 0,
      positive: { offset: 8463204, bucketCounts: [1] },
      negative: { offset: 0, bucketCounts: [] },
    });
    const [, low, high] = /\((.*),(.*)\]:1$/.exec(text) ?? [];
    expect(Number(low)).toBeLessThan(268.94);
    expect(Number(high)).toBeGreaterThanOrEqual(268.94);
    expect(low).not.toBe(high);
  });
});

describe('TableWriter', () => {
  test('aligns columns over the rows of a block; right-aligned columns pad left', async () => {
    const { out, text } = collector();
    const table = new TableWriter(out, ['name', 'n'], new Set([1]));
    await table.row(['a', '1']);
    await table.row(['longer', '100']);
    await table.end();
    await out.flush();
    expect(text()).toBe('name       n\na          1\nlonger   100\n');
  });

  test('later blocks keep the widths seen so far and widen for longer cells', async () => {
    const { out, text } = collector();
    const table = new TableWriter(out, ['a', 'b'], new Set(), 1);
    await table.row(['x', '1']);
    await table.row(['wider', '2']);
    await table.end();
    await out.flush();
    expect(text().split('\n')).toEqual(['a   b', 'x   1', 'wider   2', '']);
  });

  test('no rows: the header alone', async () => {
    const { out, text } = collector();
    await new TableWriter(out, ['time', 'value'], new Set()).end();
    await out.flush();
    expect(text()).toBe('time   value\n');
  });
});

describe('LineWriter', () => {
  test('when the reader goes away (EPIPE) it closes once, calls back, and drops further lines', async () => {
    const stream = new PassThrough();
    let closed = 0;
    const out = new LineWriter(stream, () => closed++);
    stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await out.line('dropped');
    await out.flush();
    expect([out.closed, closed, out.failure]).toEqual([true, 1, undefined]);
  });

  test('another write error is kept as the failure to report', () => {
    const stream = new PassThrough();
    const out = new LineWriter(stream);
    stream.emit('error', Object.assign(new Error('no space left'), { code: 'ENOSPC' }));
    expect(out.failure?.message).toBe('no space left');
  });
});

// The waterfall's name column: 60 cells at most, `…` included. Wide characters take two cells
// each, a combining accent none (as a terminal shows them).
describe('cutToCells', () => {
  test('cuts by cells, not characters, and never splits a character', () => {
    expect(cutToCells('a'.repeat(60), 60)).toBe('a'.repeat(60));
    expect(cutToCells('a'.repeat(61), 60)).toBe(`${'a'.repeat(59)}…`);
    // 40 CJK characters are 80 cells: 29 of them (58 cells) and the `…` fit in 60.
    expect(cutToCells('注'.repeat(40), 60)).toBe(`${'注'.repeat(29)}…`);
    expect(cutToCells('注'.repeat(30), 60)).toBe('注'.repeat(30));
    // An emoji outside the BMP is one character of two cells, never half a surrogate pair.
    expect(cutToCells(`${'a'.repeat(58)}😀`, 59)).toBe(`${'a'.repeat(58)}…`);
    // A combining accent takes no cell.
    expect(cutToCells(`${'e\u0301'.repeat(60)}`, 60)).toBe('e\u0301'.repeat(60));
  });
});

describe('textCells', () => {
  test("the waterfall's lines and bars are one cell each, beside any other character", () => {
    expect(textCells('│  ├─ └─ █▏…◆ ab')).toBe(16);
    // Beside a wide character, an emoji, a combining accent: each counted as it is.
    expect(textCells('│  ├─ 数据')).toBe(10);
    expect(textCells('└─ 👍 e\u0301')).toBe(7);
    // A raw ANSI sequence (which `printable` escapes before anything is shown) takes no cell,
    // nor a control character.
    expect(textCells('├─ \u001b[31mx')).toBe(4);
    expect(textCells('├─ x\u0007')).toBe(4);
    expect(cutToCells('│  ├─ 数据库查询', 8)).toBe('│  ├─ …');
    expect(cutToCells('█'.repeat(41), 40)).toBe(`${'█'.repeat(39)}…`);
  });
});

describe('tableCells', () => {
  test('attribute values read as the Parquet tables store them (docs/parquet.md)', () => {
    const record: PointRecord = {
      ...base,
      attributes: attributes([
        {
          key: 'ids',
          value: {
            arrayValue: { values: [{ intValue: '1152921504606846976' }, { doubleValue: 'NaN' }] },
          },
        },
        {
          key: 'm',
          value: {
            kvlistValue: {
              values: [
                { key: 'b', value: { intValue: '1' } },
                { key: 'a', value: { doubleValue: -0 } },
              ],
            },
          },
        },
        { key: 'd', value: { doubleValue: -0 } },
      ]),
    };
    expect(tableCells(record)[4]).toBe('ids=[1152921504606846976,"NaN"] m={"a":-0,"b":1} d=-0');
  });
});
