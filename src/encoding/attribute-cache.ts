import type { Attributes } from '@opentelemetry/api';

interface Entry<V> {
  keys: string[];
  values: unknown[];
  bytes: V;
}

/**
 * Encoded attributes, per attributes object. A series keeps its attributes object from one
 * collection to the next (the SDK keys the series by those attributes at record time and treats
 * them as fixed), so each series is spelled once. An entry remembers the keys and values it was
 * made from and is used only while the object still holds exactly those: one changed after
 * recording is encoded afresh. One cache per spelling (JSON list, JSON point header, protobuf
 * field, the Parquet columns' attribute sets).
 */
export class AttributeCache<V = Buffer> {
  readonly #entries = new WeakMap<Attributes, Entry<V>>();

  /** The bytes (or what else V is) made from `attrs`, if it still holds what they were made from. */
  get(attrs: Attributes): V | undefined {
    const entry = this.#entries.get(attrs);
    return entry !== undefined && unchanged(entry, attrs) ? entry.bytes : undefined;
  }

  /**
   * Remembers `bytes` as the spelling of `attrs`, whose own keys are `keys`; not if a value is a
   * map, byte array or nested array, which could change inside where the check does not look.
   */
  set(attrs: Attributes, keys: string[], bytes: V): void {
    const values: unknown[] = [];
    for (const key of keys) {
      const value: unknown = attrs[key];
      if (!isFlat(value)) return;
      values.push(Array.isArray(value) ? [...value] : value);
    }
    this.#entries.set(attrs, { keys, values, bytes });
  }
}

/** A primitive, or an array of primitives: what unchanged() can compare. */
function isFlat(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item === 'object' && item !== null) return false;
  return true;
}

/** True if `attrs` still has exactly the keys and values the entry was made from. */
function unchanged(entry: Entry<unknown>, attrs: Attributes): boolean {
  const { keys, values } = entry;
  let i = 0;
  // for-in with attrs[key] takes V8's enum-cache fast path; a lookup by a stored key does not.
  // It also lists inherited keys, after the own ones: those never match, the entry is rebuilt.
  for (const key in attrs) {
    if (key !== keys[i]) return false;
    const value = attrs[key];
    const was = values[i++];
    if (value === was) continue;
    if (!Array.isArray(value) || !Array.isArray(was) || value.length !== was.length) return false;
    for (let j = 0; j < value.length; j++) if (value[j] !== was[j]) return false;
  }
  return i === keys.length;
}
