/**
 * An attributes object: the API's Attributes of either line (1.9: flat values; 1.10: any value),
 * or a resource's or scope's.
 */
export type AttributeMap = Readonly<Record<string, unknown>>;
type Attributes = AttributeMap;

const NO_KEYS: readonly string[] = Object.freeze([]);

/** The own enumerable keys of `attrs`, as the official serializers take them; none for no object. */
export function ownKeys(attrs: AttributeMap | undefined): readonly string[] {
  return attrs === undefined || attrs === null ? NO_KEYS : Object.keys(attrs);
}

class Entry<V> {
  constructor(
    readonly attrs: Attributes,
    readonly keys: string[],
    readonly values: unknown[],
    readonly bytes: V,
  ) {}
}

/**
 * The entries of one metric's points in the order of its last export: the SDK lists a metric's
 * series in the same order every collection, so the entry at a point's index is tried before
 * the hash lookup. It holds at most the series of that export.
 */
export type SeriesOrder<V> = Array<Entry<V> | undefined>;

/** After a metric's export: its order holds that export's series, no more (the rest may be gone for good). */
export function trimOrder<V>(order: SeriesOrder<V>, length: number): void {
  if (order.length > length) order.length = length;
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
  readonly #orders = new WeakMap<object, SeriesOrder<V>>();

  /** The bytes (or what else V is) made from `attrs`, if it still holds what they were made from. */
  get(attrs: Attributes): V | undefined {
    const entry = this.#entries.get(attrs);
    return entry !== undefined && unchanged(entry, attrs) ? entry.bytes : undefined;
  }

  /** The order of the points of the metric `key` (its descriptor: one object for all collections). */
  orderOf(key: object): SeriesOrder<V> {
    let order = this.#orders.get(key);
    if (order === undefined) {
      order = [];
      this.#orders.set(key, order);
    }
    return order;
  }

  /**
   * get() for the point at `index` of a metric: the entry there in `order` if it is this series',
   * which saves hashing `attrs` and a lookup in a table of every series (a cache miss each, at
   * 10,000 series), else the lookup, whose entry then takes that place.
   */
  at(order: SeriesOrder<V>, index: number, attrs: Attributes): V | undefined {
    let entry = order[index];
    if (entry === undefined || entry.attrs !== attrs) {
      entry = this.#entries.get(attrs);
      if (entry === undefined) return undefined;
      order[index] = entry;
    }
    return unchanged(entry, attrs) ? entry.bytes : undefined;
  }

  /**
   * Remembers `bytes` as the spelling of `attrs`, whose own keys are `keys`; not if a value is a
   * map, byte array or nested array, which could change inside where the check does not look.
   */
  set(attrs: Attributes, keys: string[], bytes: V, order?: SeriesOrder<V>, index = 0): void {
    const values: unknown[] = [];
    for (const key of keys) {
      const value: unknown = attrs[key];
      if (!isFlat(value)) return;
      values.push(Array.isArray(value) ? [...value] : value);
    }
    const entry = new Entry(attrs, keys, values, bytes);
    this.#entries.set(attrs, entry);
    if (order !== undefined) order[index] = entry;
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

/**
 * An AttributeCache of one spelling, which it makes itself on a miss: `spell` writes the bytes of
 * `attrs`, whose own keys are `keys`.
 */
export class SpellingCache extends AttributeCache<Buffer> {
  readonly #spell: (attrs: Attributes, keys: readonly string[]) => Buffer;

  constructor(spell: (attrs: Attributes, keys: readonly string[]) => Buffer) {
    super();
    this.#spell = spell;
  }

  /** The spelling of `attrs` (a resource's: one object for every export). */
  of(attrs: Attributes): Buffer {
    const cached = this.get(attrs);
    return cached === undefined ? this.#make(attrs) : cached;
  }

  /** The spelling of the attributes of the point at `index` of a metric (see at()). */
  ofPoint(order: SeriesOrder<Buffer>, index: number, attrs: Attributes): Buffer {
    const cached = this.at(order, index, attrs);
    return cached === undefined ? this.#make(attrs, order, index) : cached;
  }

  #make(attrs: Attributes, order?: SeriesOrder<Buffer>, index = 0): Buffer {
    const keys = Object.keys(attrs);
    const bytes = this.#spell(attrs, keys);
    this.set(attrs, keys, bytes, order, index);
    return bytes;
  }
}
