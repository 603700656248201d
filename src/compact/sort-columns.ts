/**
 * Sorts a run's columns (rows.js's TableBuilder output) by service, metric, attribute set and
 * time, the exporter's order within a file, so that each row group's statistics cover few
 * services and metrics. Interim, with output-file.ts: the Parquet writer of src/parquet/ sorts
 * the column builders itself.
 */
interface Column {
  name: string;
  data: ArrayLike<unknown>;
}

export function sortColumns(columns: Column[]): Column[] {
  const find = (name: string) => {
    const column = columns.find((c) => c.name === name);
    if (column === undefined) throw new Error(`no column ${name}`);
    return column.data;
  };
  const service = find('ServiceName') as ArrayLike<string>;
  const metric = find('MetricName') as ArrayLike<string>;
  const attributes = find('Attributes');
  const time = find('TimeUnix') as BigInt64Array;
  const rows = time.length;
  // Attribute sets compared by their text, made once per row.
  const sets: string[] = new Array(rows);
  for (let i = 0; i < rows; i++) sets[i] = JSON.stringify(attributes[i]);
  const order = Array.from({ length: rows }, (_, i) => i);
  order.sort(
    (a, b) =>
      compare(service[a] as string, service[b] as string) ||
      compare(metric[a] as string, metric[b] as string) ||
      compare(sets[a] as string, sets[b] as string) ||
      compare(time[a] as bigint, time[b] as bigint),
  );
  return columns.map(({ name, data }) => ({ name, data: permuted(data, order) }));
}

function compare<T extends string | bigint>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function permuted(data: ArrayLike<unknown>, order: number[]): ArrayLike<unknown> {
  if (ArrayBuffer.isView(data)) {
    const typed = data as unknown as { constructor: new (n: number) => Record<number, unknown> };
    const out = new typed.constructor(order.length);
    for (let i = 0; i < order.length; i++) out[i] = data[order[i] as number];
    return out as unknown as ArrayLike<unknown>;
  }
  return order.map((i) => data[i]);
}
