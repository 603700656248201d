import { readFileSync } from 'node:fs';
import { expect, test, vi } from 'vitest';
import { SPAN_ROWS } from '../../../src/compact/flat-rows.js';
import { mergeRuns, Spill } from '../../../src/compact/spill.js';
import { Strings } from '../../../src/parquet/tables.js';
import { FlatStore } from '../../../src/signals/flat-parquet/store.js';
import type { SealedFlat } from '../../../src/signals/flat-parquet/table.js';
import * as table from '../../../src/signals/flat-parquet/table.js';
import { SPAN, SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { tmpdirEachTest } from '../../support/temp-dir.js';

// itemStarts counted: a run's copy into its chunks reads where each row's items start.
vi.mock('../../../src/signals/flat-parquet/table.js', async (original) => {
  const actual = await original<typeof import('../../../src/signals/flat-parquet/table.js')>();
  return { ...actual, itemStarts: vi.fn(actual.itemStarts) };
});

/** Spilled runs live under TMPDIR. */
tmpdirEachTest('otel-s3-spill-starts-');

test("a spilled run of spans reads its rows' item starts once, not once a chunk, and its chunks keep every span's attributes", () => {
  const rows = 1_000;
  const source = new FlatStore(SPANS);
  // Services in the reverse of their order, so that the sorted run takes rows from all over.
  for (let i = 0; i < rows; i++) {
    const r = source.addRow();
    source.int32(
      SPAN.SERVICE_NAME,
      r,
      source.strings.id(`svc-${String(rows - i).padStart(4, '0')}`),
    );
    source.set(SPAN.SPAN_ATTRIBUTES, r, source.newSet(['i'], [`${i}`]));
  }
  const sealed = source.seal();
  const starts = vi.mocked(table.itemStarts);
  starts.mockClear();
  const spill = new Spill(SPAN_ROWS, 64);
  try {
    spill.add(sealed);
    const run = spill.runs[0];
    expect(run?.chunks).toHaveLength(Math.ceil(rows / 64));
    // 16 chunks: 16 calls on the run without a cache of its starts.
    expect(starts.mock.calls.filter(([s]) => s === sealed)).toHaveLength(1);
    // Every chunk as spilled: the spans in the order of their services, each with its attribute.
    const file = readFileSync(run?.path as string);
    const got: string[] = [];
    for (const { offset, length } of run?.chunks ?? []) {
      const bytes = new Uint8Array(length);
      bytes.set(file.subarray(offset, offset + length));
      const chunk = SPAN_ROWS.decode(bytes) as SealedFlat;
      const text = (id: number) =>
        Buffer.from(
          chunk.strings.subarray(chunk.stringOffsets[id], chunk.stringOffsets[id + 1]),
        ).toString('utf8');
      const services = chunk.columns[SPAN.SERVICE_NAME] as Uint32Array;
      const attributes = chunk.columns[SPAN.SPAN_ATTRIBUTES] as Uint32Array;
      for (let r = 0; r < chunk.rows; r++) {
        const set = attributes[r] as number;
        const entry = chunk.setOffsets[set] as number;
        const value = text(chunk.setEntries[2 * entry + 1] as number);
        got.push(`${text(services[r] as number)}=${value}`);
      }
    }
    const expected = Array.from(
      { length: rows },
      (_, k) => `svc-${String(k + 1).padStart(4, '0')}=${rows - 1 - k}`,
    );
    expect(got).toEqual(expected);
  } finally {
    spill.remove();
  }
});

test('two copiers reading one batch in turn each copy its sets once, with their values', () => {
  const source = new FlatStore(SPANS);
  const values = ['a', 'b', 'c'];
  for (const v of values) {
    const r = source.addRow();
    source.set(SPAN.SPAN_ATTRIBUTES, r, source.newSet(['k'], [v]));
  }
  const sealed = source.seal();
  const first = SPAN_ROWS.copier();
  const second = SPAN_ROWS.copier();
  first.add(sealed, 0, 3);
  second.add(sealed, 0, 3);
  first.add(sealed, 0, 3);
  second.add(sealed, 0, 3);
  for (const copier of [first, second]) {
    const copy = copier.seal() as SealedFlat;
    // The empty set and one a value: a set copied again would be a set more.
    expect(copy.setCount).toBe(1 + values.length);
    const text = (id: number) =>
      Buffer.from(
        copy.strings.subarray(copy.stringOffsets[id], copy.stringOffsets[id + 1]),
      ).toString('utf8');
    const attributes = copy.columns[SPAN.SPAN_ATTRIBUTES] as Uint32Array;
    const got = Array.from({ length: copy.rows }, (_, r) => {
      const entry = copy.setOffsets[attributes[r] as number] as number;
      return `${text(copy.setEntries[2 * entry] as number)}=${text(copy.setEntries[2 * entry + 1] as number)}`;
    });
    expect(got).toEqual([...values, ...values].map((v) => `k=${v}`));
  }
});

test('a spilled and merged run copies its strings as their bytes: none decoded and looked up again, each the same text', async () => {
  // Names not ASCII, a leading U+FEFF (a character, not a byte order mark) and an astral
  // character: as a decode and encode would have to keep them.
  const services = ['\uFEFFcafé', 'svc-😀', 'plain'];
  const runs = [0, 1].map((run) => {
    const source = new FlatStore(SPANS);
    for (let i = 0; i < 300; i++) {
      const r = source.addRow();
      source.int32(SPAN.SERVICE_NAME, r, source.strings.id(services[i % 3] as string));
      source.set(SPAN.SPAN_ATTRIBUTES, r, source.newSet(['ключ'], [`${run}-${i}`]));
    }
    return source.seal();
  });
  const id = vi.spyOn(Strings.prototype, 'id');
  const spill = new Spill(SPAN_ROWS, 64);
  const got: string[] = [];
  try {
    for (const run of runs) spill.add(run);
    await mergeRuns(SPAN_ROWS, spill.runs, 1 << 30, async (batch) => {
      const b = batch as SealedFlat;
      const text = (i: number) =>
        Buffer.from(b.strings.subarray(b.stringOffsets[i], b.stringOffsets[i + 1])).toString(
          'utf8',
        );
      const names = b.columns[SPAN.SERVICE_NAME] as Uint32Array;
      const attributes = b.columns[SPAN.SPAN_ATTRIBUTES] as Uint32Array;
      for (let r = 0; r < b.rows; r++) {
        const entry = b.setOffsets[attributes[r] as number] as number;
        got.push(
          `${text(names[r] as number)}|${text(b.setEntries[2 * entry] as number)}=${text(b.setEntries[2 * entry + 1] as number)}`,
        );
      }
    });
    // Each copy (into a run's chunks, then into the merged batch) looked every string up by its
    // text, decoded from the source's UTF-8, then encoded again.
    expect(id).not.toHaveBeenCalled();
  } finally {
    id.mockRestore();
    spill.remove();
  }
  const expected = [0, 1].flatMap((run) =>
    Array.from({ length: 300 }, (_, i) => `${services[i % 3]}|ключ=${run}-${i}`),
  );
  expect(got.toSorted()).toEqual(expected.toSorted());
});
