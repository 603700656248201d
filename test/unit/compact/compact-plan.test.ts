import { describe, expect, test } from 'vitest';
import { type HourObjects, type OutputInfo, planPartition } from '../../../src/compact/plan.js';
import type { ListedObject } from '../../../src/reader/replaced-inputs.js';

const HOUR = new Date('2026-03-04T05:00:00Z');
const dir = 'p/year=2026/month=03/day=04/hour=05';

function object(name: string, size = 1000): ListedObject {
  const parquet = name.endsWith('.parquet');
  return {
    key: `${dir}/${name}`,
    size,
    parsed: {
      id: '',
      signal: 'metrics',
      sealedAt: HOUR,
      partition: { start: HOUR, end: new Date(HOUR.getTime() + 3_600_000) },
      attributes: {},
      extension: '',
      encoding: {
        format: parquet ? 'parquet' : 'otlp-json',
        compression: parquet ? 'none' : 'zstd',
      },
      ...(name.endsWith('.compacted.parquet') ? { compacted: true as const } : {}),
    },
  };
}

function output(
  name: string,
  size: number,
  replaces: ListedObject[],
  superseded: string[] = [],
): OutputInfo {
  const inputs = replaces.map((r) => ({ key: r.key, rows: 10 }));
  return { ...object(name, size), rows: inputs.length * 10, replaces: { inputs, superseded } };
}

const rules = { fullOutputBytes: 64_000, deleteInputs: false };
const hour = (parts: Partial<HourObjects>): HourObjects => ({
  hour: HOUR,
  inputs: [],
  outputs: [],
  badOutputs: [],
  skipped: [],
  ...parts,
});

describe('planPartition', () => {
  const a = object('a.parquet');
  const b = object('b.parquet');
  const j = object('minute=07/j.json.zst');

  test('objects no output holds are merged', () => {
    const plan = planPartition(hour({ inputs: [a, b, j] }), rules);
    expect(plan.work).toBe(true);
    expect(plan.merge.inputs).toEqual([a, b, j]);
    expect(plan.finish).toEqual([]);
  });

  test('an hour of one output and the OTLP objects it replaces has nothing to do', () => {
    const out = output('o.compacted.parquet', 5_000, [a, j]);
    const plan = planPartition(hour({ inputs: [j], outputs: [out] }), rules);
    expect(plan.work).toBe(false);
    expect(plan.replacedKept).toBe(1);
    expect(plan.kept).toEqual([out]);
  });

  test('Parquet objects an output replaces are deleted (a run that stopped before the deletes); OTLP ones only with deleteInputs', () => {
    const out = output('o.compacted.parquet', 5_000, [a, j]);
    const objects = hour({ inputs: [a, j], outputs: [out] });
    const plan = planPartition(objects, rules);
    expect(plan.merge).toEqual({ outputs: [], inputs: [] });
    expect(plan.finish).toEqual([{ output: out, deletes: [a] }]);
    const deleting = planPartition(objects, { ...rules, deleteInputs: true });
    expect(deleting.finish).toEqual([{ output: out, deletes: [a, j] }]);
  });

  test('a late object is merged with the outputs below the full size; full ones are kept', () => {
    const full = output('f.compacted.parquet', 64_000, [a]);
    const small = output('s.compacted.parquet', 5_000, [b]);
    const late = object('late.parquet');
    const plan = planPartition(hour({ inputs: [late], outputs: [full, small] }), rules);
    expect(plan.merge).toEqual({ outputs: [small], inputs: [late] });
    expect(plan.kept).toEqual([full]);
  });

  test('two small outputs are merged; one is left alone', () => {
    const one = output('1.compacted.parquet', 5_000, [a]);
    const two = output('2.compacted.parquet', 5_000, [b]);
    expect(planPartition(hour({ outputs: [one, two] }), rules).merge.outputs).toEqual([one, two]);
    expect(planPartition(hour({ outputs: [one] }), rules).work).toBe(false);
  });

  test('an output replaced by a newer one is deleted, and what it replaced stays replaced', () => {
    const old = output('old.compacted.parquet', 5_000, [j]);
    const newer = output(
      'new.compacted.parquet',
      6_000,
      [object('old.compacted.parquet', 5_000)],
      [j.key],
    );
    const plan = planPartition(hour({ inputs: [j], outputs: [old, newer] }), rules);
    expect(plan.finish.map((f) => f.deletes.map((d) => d.key))).toEqual([[old.key]]);
    expect(plan.merge).toEqual({ outputs: [], inputs: [] });
  });

  test('an object still there is finished by the output that recorded its rows, not by one that lists it as superseded', () => {
    const old = output('old.compacted.parquet', 5_000, [a]);
    const oldObject = object('old.compacted.parquet', 5_000);
    const newer = output('new.compacted.parquet', 6_000, [oldObject], [a.key]);
    // Whichever order the listing gives them: only `old` holds a's count, which its check needs.
    for (const outputs of [
      [old, newer],
      [newer, old],
    ]) {
      const plan = planPartition(hour({ inputs: [a], outputs }), rules);
      const finish = plan.finish.map((f) => [f.output.key, f.deletes.map((d) => d.key)]);
      expect(finish).toEqual(
        expect.arrayContaining([
          [old.key, [a.key]],
          [newer.key, [oldObject.key]],
        ]),
      );
      expect(finish.length).toBe(2);
    }
  });

  test('objects an earlier run could not read are not merged again (same key and size)', () => {
    const plan = planPartition(
      hour({ inputs: [a], skipped: [{ key: a.key, size: a.size, reason: 'bad' }] }),
      rules,
    );
    expect(plan.work).toBe(false);
    expect(plan.knownBad).toEqual([a]);
    const changed = planPartition(
      hour({ inputs: [a], skipped: [{ key: a.key, size: a.size + 1, reason: 'bad' }] }),
      rules,
    );
    expect(changed.merge.inputs).toEqual([a]);
  });

  test('an output whose footer rows disagree with its metadata deletes nothing and is never merged', () => {
    const out = { ...output('o.compacted.parquet', 5_000, [a]), rows: 7 };
    const plan = planPartition(hour({ inputs: [a], outputs: [out] }), rules);
    expect(plan.finish).toEqual([]);
    expect(plan.merge).toEqual({ outputs: [], inputs: [] });
    expect(plan.kept).toEqual([out]);
  });
});
