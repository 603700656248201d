import type { Row } from '../parquet-values.js';
import type { FlatSpec, SealedFlat } from './table.js';

/**
 * A batch's sealed columns as the rows a reader gets from their Parquet file (strings, bigint
 * INT64s and timestamps, maps as objects with a null for an empty value, lists as arrays), in the
 * order they were appended: what the OTLP/JSON fallback writes when the file cannot be made.
 */
export function sealedRows(spec: FlatSpec, s: SealedFlat): Row[] {
  const late = s.late !== undefined;
  const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  const strings: string[] = [];
  for (let i = 0; i < s.stringCount; i++) {
    strings.push(
      utf8.decode(s.strings.subarray(s.stringOffsets[i] as number, s.stringOffsets[i + 1])),
    );
  }
  const map = (set: number): Record<string, string | null> => {
    const out: Record<string, string | null> = {};
    for (let e = s.setOffsets[set] as number; e < (s.setOffsets[set + 1] as number); e++) {
      const v = s.setEntries[2 * e + 1] as number;
      out[strings[s.setEntries[2 * e] as number] as string] = v < 0 ? null : (strings[v] as string);
    }
    return out;
  };
  const value = (
    kind: FlatSpec['columns'][number]['kind'],
    values: Int32Array | Uint32Array,
    i: number,
    column: number,
  ) => {
    switch (kind) {
      case 'text':
        return utf8.decode(
          (s.texts[column] as Uint8Array).subarray(
            i === 0 ? 0 : (values[i - 1] as number),
            values[i] as number,
          ),
        );
      case 'string':
        return strings[values[i] as number];
      case 'map':
        return map(values[i] as number);
      case 'int32':
        return values[i];
      case 'timestamp':
        // A late batch keeps a time past INT64 as its uint64 bits (FlatStore.nanos): OTLP's.
        if (late) return BigInt.asUintN(64, int64(values, i));
        return int64(values, i);
      default:
        return int64(values, i);
    }
  };
  const starts = s.lengths.map(() => 0);
  const rows: Row[] = [];
  for (let r = 0; r < s.rows; r++) {
    const row: Row = {};
    spec.columns.forEach((c, i) => {
      const values = s.columns[i] as Int32Array | Uint32Array;
      if (c.list === undefined) {
        row[c.name] = value(c.kind, values, r, i);
        return;
      }
      const start = starts[c.list] as number;
      const n = (s.lengths[c.list] as Uint32Array)[r] as number;
      const list = [];
      for (let j = start; j < start + n; j++) list.push(value(c.kind, values, j, i));
      row[c.name] = list;
    });
    s.lengths.forEach((lengths, g) => {
      starts[g] = (starts[g] as number) + (lengths[r] as number);
    });
    rows.push(row);
  }
  return rows;
}

/** Value i of an INT64 column's slots. */
const int64 = (values: Int32Array | Uint32Array, i: number): bigint =>
  (BigInt(values[2 * i + 1] as number) << 32n) | BigInt((values[2 * i] as number) >>> 0);
