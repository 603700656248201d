/**
 * A MAP<STRING, STRING> column's value as a Parquet reader (hyparquet) gives it: an object of
 * its entries; null or undefined for an empty map.
 */
export type MapValue = Record<string, unknown> | null | undefined;

/** Keys and value texts of a map's value (null: an empty value). */
export function keyTexts(map: MapValue): { keys: string[]; texts: (string | null)[] } {
  if (typeof map !== 'object' || map === null) return { keys: [], texts: [] };
  const keys = Object.keys(map);
  const texts = keys.map((k) => {
    const v = map[k];
    return v === null || v === undefined ? null : String(v);
  });
  return { keys, texts };
}
