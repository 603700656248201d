// The per-batch tables the columns refer to by id: strings, attribute sets and bound lists. Each
// interns a value once per batch (a Map from a canonical key to its id) and reports the memory it
// holds, so the batch's buffered bytes are what is really held. Their fields are
// TypeScript-private or public, never #private: interning is on the hot path of Parquet export
// (see the metrics' ColumnStore).

import { keepShape } from '../base/kept-shapes.js';
import { jsValueText, wellFormed } from './attribute-text.js';
import { grown } from './grown.js';
import { TextBytes } from './text-bytes.js';

/**
 * Estimated bytes of one Map entry with its key: V8's hash table slot (key, value, chain) and
 * the key string's header. The key's characters are counted apart (2 bytes each, an upper bound).
 */
export const MAP_ENTRY_BYTES = 48;

/**
 * Strings of a batch, in first-seen order, kept as their UTF-8 one after another (each written
 * when it comes: no string is held for the batch but the Map's keys, nor joined at the end): one
 * id each when looked up (id, valueId); a value given an id without a lookup (fresh) may share
 * its bytes with another id.
 */
export class Strings {
  private readonly ids = new Map<string, number>();
  /** Numbers' text ids (valueId): -0 is 0 here as in its text, NaN one key. */
  private readonly numbers = new Map<number, number>();
  /** Every string's UTF-8; string i is texts.bytes[ends[i - 1], ends[i]) (ends[-1]: 0). */
  private readonly texts = new TextBytes(1024);
  private ends = new Uint32Array(64);
  /** Strings so far. */
  count = 0;
  /** Memory of the lookup tables (their entries and the keys they hold), beside the arrays. */
  private held = 0;

  /** Memory held. */
  get bytes(): number {
    return this.held + this.texts.bytes.byteLength + this.ends.byteLength;
  }

  /**
   * The id of `s`. Strings that differ only in lone surrogates are one string in UTF-8 (U+FFFD
   * there): they get one id.
   */
  id(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      const text = wellFormed(s);
      if (text !== s) id = this.ids.get(text);
      if (id === undefined) {
        id = this.add(text);
        this.ids.set(text, id);
        this.held += MAP_ENTRY_BYTES + 2 * text.length;
      }
      if (text !== s) {
        this.ids.set(s, id);
        this.held += MAP_ENTRY_BYTES + 2 * s.length;
      }
    }
    return id;
  }

  /**
   * The id of the text of an SDK attribute value (jsValueText), -1 for an empty value; a
   * number's text is made once per batch, the number looked up in a Map of its own (which hashes
   * no string).
   */
  valueId(v: unknown): number {
    if (typeof v === 'string') return this.id(v);
    if (typeof v === 'number') {
      let id = this.numbers.get(v);
      if (id === undefined) {
        // A number's text is its own (a string value of the same text gets another id: the
        // dictionary keeps one of them), so only the number is looked up.
        id = this.fresh(v);
        this.numbers.set(v, id);
        this.held += MAP_ENTRY_BYTES;
      }
      return id;
    }
    const t = jsValueText(v);
    return t === null ? -1 : this.id(t);
  }

  /**
   * A new id for the text of an SDK attribute value (-1 for an empty value), not looked up: for
   * values nearly every one of which is new (a path, an address, a port). A value given twice has
   * two ids; the dictionary holds its bytes once all the same (dictionaryOfIds).
   */
  fresh(v: unknown): number {
    const t = typeof v === 'string' ? v : jsValueText(v);
    return t === null ? -1 : this.add(t);
  }

  /**
   * A new id for a string given as UTF-8 (another batch's: well-formed), neither decoded nor
   * looked up. A copy of another batch's rows (compaction) takes an id per string of that batch
   * so: its strings repeated in the copy, from other batches, have an id each, and the dictionary
   * holds their bytes once all the same (dictionaryOfIds).
   */
  freshBytes(from: Uint8Array, start: number, end: number): number {
    const id = this.count++;
    if (id === this.ends.length) this.ends = grown(this.ends, id + 1, id);
    this.texts.setBytes(this.ends, id, from, start, end);
    return id;
  }

  /** Writes `text` as the next string. */
  private add(text: string): number {
    const id = this.count++;
    if (id === this.ends.length) this.ends = grown(this.ends, id + 1, id);
    this.texts.set(this.ends, id, text);
    return id;
  }

  /** The text of string `id`. */
  text(id: number): string {
    const start = id === 0 ? 0 : (this.ends[id - 1] as number);
    return decoder.decode(this.texts.bytes.subarray(start, this.ends[id]));
  }

  /** Every string as UTF-8, one after another, and where each starts (arrays of their own). */
  encode(): { bytes: Uint8Array; offsets: Uint32Array } {
    const n = this.count;
    const offsets = new Uint32Array(n + 1);
    offsets.set(this.ends.subarray(0, n), 1);
    return { bytes: this.texts.bytes.slice(0, offsets[n]), offsets };
  }
}

// A leading U+FEFF is a character of the string, not a byte order mark to drop.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * A batch's strings and attribute sets as its sealed columns hold them: every string's UTF-8 with
 * where each starts, the sets' offsets and entries (arrays to transfer, the sets' as they are).
 */
export function sealedTables(strings: Strings, sets: AttributeSets) {
  const { bytes, offsets } = strings.encode();
  return {
    stringCount: strings.count,
    strings: bytes,
    stringOffsets: offsets,
    setCount: sets.count,
    setOffsets: sets.offsets,
    setEntries: sets.entries,
  };
}

/**
 * Lists interned once per batch by a canonical key (attribute sets, bound lists): id 0 is the
 * empty list, list i's values are [offsets[i], offsets[i + 1]).
 */
abstract class InternedLists {
  private readonly ids = new Map<string, number>([['', 0]]);
  count = 1;
  bytes = MAP_ENTRY_BYTES;

  constructor(public offsets: Uint32Array) {}

  /** The id of the list of `key` if it has one; else undefined, and `key` names the next new id. */
  protected known(key: string): number | undefined {
    const id = this.ids.get(key);
    if (id !== undefined) return id;
    this.ids.set(key, this.count);
    this.bytes += MAP_ENTRY_BYTES + 2 * key.length;
    return undefined;
  }

  /** A new list's id, with room in `offsets` for where it ends. */
  newId(): number {
    const id = this.count++;
    this.offsets = grown(this.offsets, id + 2, id + 1);
    return id;
  }
}

/**
 * Attribute sets of a batch: lists of (key, value text) as string ids, value -1 for an empty
 * value. Set 0 is the empty set. A key given twice keeps its first place and its last value (as
 * a Go map does in the Collector).
 */
export class AttributeSets extends InternedLists {
  entries = new Int32Array(256);
  entryCount = 0;

  constructor() {
    super(new Uint32Array(64));
  }

  /** The id of the set of `keys` with value texts `texts` (null: an empty value). */
  intern(strings: Strings, keys: string[], texts: (string | null)[]): number {
    let key = '';
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      const t = texts[i];
      key += `${k.length}:${k}${t === null || t === undefined ? '!' : `${t.length}:${t}`}`;
    }
    return this.known(key) ?? this.add(strings, keys, texts);
  }

  /**
   * A new set of `keys` with value texts `texts`, not looked up or kept for lookups: for the
   * attributes of spans and log records, nearly every one of which is a set of its own.
   */
  add(strings: Strings, keys: string[], texts: (string | null)[]): number {
    const id = this.newId();
    // Its keys as UTF-8 has them, each once.
    if (keys.some((k) => wellFormed(k) !== k)) keys = keys.map(wellFormed);
    if (new Set(keys).size !== keys.length) ({ keys, texts } = lastValues(keys, texts));
    this.entries = grown(this.entries, 2 * (this.entryCount + keys.length), 2 * this.entryCount);
    for (let i = 0; i < keys.length; i++) {
      const t = texts[i];
      this.entries[2 * this.entryCount] = strings.id(keys[i] as string);
      this.entries[2 * this.entryCount + 1] = t === null || t === undefined ? -1 : strings.id(t);
      this.entryCount++;
    }
    this.offsets[id + 1] = this.entryCount;
    return id;
  }

  /**
   * A new set copied from another batch's: its entries `pairs[2 * from, 2 * to)` (key string id,
   * value string id or -1), each id made this batch's by `idOf`. Its keys are distinct and
   * well-formed already (a set's), so nothing is looked up but the ids.
   */
  copy(pairs: Int32Array, from: number, to: number, idOf: (id: number) => number): number {
    const id = this.newId();
    let at = this.entryCount;
    const entries = grown(this.entries, 2 * (at + to - from), 2 * at);
    this.entries = entries;
    for (let e = from; e < to; e++) {
      const value = pairs[2 * e + 1] as number;
      entries[2 * at] = idOf(pairs[2 * e] as number);
      entries[2 * at + 1] = value < 0 ? -1 : idOf(value);
      at++;
    }
    this.entryCount = at;
    this.offsets[id + 1] = at;
    return id;
  }
}

/** A key as UTF-8 has it already (no lone surrogates). */
const isWellFormed = (s: string): boolean =>
  (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * A new set of an object's own keys `keys` (Object.keys(attrs), so each once) and their SDK
 * values' texts (jsValueText), as add() makes it but without arrays made on the way; add() itself
 * where a key has lone surrogates (two keys may then be one). `shape` (the column's, kept by its
 * store for the batch) spares the lookups of keys that are those of the last object, and of
 * values that are its values (=== the last of the same key: the same text).
 */
export function addObjectSet(
  sets: AttributeSets,
  strings: Strings,
  attrs: Readonly<Record<string, unknown>>,
  keys: string[],
  shape: SetShape = new SetShape(),
): number {
  const n = keys.length;
  let same = shape.keys.length === n;
  for (let i = 0; same && i < n; i++) same = shape.keys[i] === keys[i];
  if (!same) {
    for (let i = 0; i < n; i++) {
      if (!isWellFormed(keys[i] as string)) {
        return sets.add(
          strings,
          keys,
          keys.map((key) => jsValueText(attrs[key])),
        );
      }
    }
    shape.keys = keys;
    shape.keyIds = Int32Array.from(keys, (key) => strings.id(key));
    shape.values = new Array(n).fill(NO_VALUE);
    shape.valueIds = new Int32Array(n);
    shape.learned = keys.map((key) => shape.learnedOf(key));
  }
  const { keyIds, values, valueIds, learned } = shape;
  const id = sets.newId();
  let at = sets.entryCount;
  const entries = grown(sets.entries, 2 * (at + n), 2 * at);
  sets.entries = entries;
  for (let i = 0; i < n; i++) {
    const v = attrs[keys[i] as string];
    let valueId: number;
    if (v === values[i]) valueId = valueIds[i] as number;
    else {
      const key = learned[i] as KeyValues;
      // A string by its hash; a number is looked up by number (valueId), which is cheap.
      if (key.looked === UNIQUE && typeof v === 'string') valueId = strings.fresh(v);
      else {
        const next = strings.count;
        valueId = strings.valueId(v);
        if (key.looked !== UNIQUE) key.learn(valueId === next);
      }
      // Primitives only: an array or object value may change from one item to the next.
      if (typeof v !== 'object' || v === null) {
        values[i] = v;
        valueIds[i] = valueId;
      }
    }
    entries[2 * at] = keyIds[i] as number;
    entries[2 * at + 1] = valueId;
    at++;
  }
  sets.entryCount = at;
  sets.offsets[id + 1] = at;
  return id;
}

/**
 * What addObjectSet remembers of the last object of a column (the SDK gives the attributes of
 * one kind of span or record the same keys, in the same order, as the same strings): its keys
 * and their string ids, and per key its last primitive value and that value's text id.
 */
export class SetShape {
  keys: string[] = [];
  keyIds = new Int32Array(0);
  values: unknown[] = [];
  valueIds = new Int32Array(0);
  /** Per key of `keys`: what its values have been in this batch (kept by key, across shapes). */
  learned: KeyValues[] = [];
  private readonly byKey = new Map<string, KeyValues>();

  learnedOf(key: string): KeyValues {
    let learned = this.byKey.get(key);
    if (learned === undefined) {
      learned = new KeyValues();
      this.byKey.set(key, learned);
    }
    return learned;
  }
}

/**
 * Whether a key's string values are nearly all new in the batch (a path, an address, a user's
 * id): then they are given ids without a lookup (Strings.fresh; the dictionary keeps one of equal
 * ones), as a Map insert for each, for a value the batch sees once, was a fifth of a span's
 * Parquet. Decided on its values looked up (other than the last one again) after the first
 * WARM, which fill the batch's table: LEARN_NEW of the next LEARN new. A key of a few hundred
 * values is found to repeat there (200 values: about 46 of 64 new), one of thousands is not.
 */
export class KeyValues {
  /** Values looked up so far; UNIQUE once decided. */
  looked = 0;
  /** New ones among those after the first WARM. */
  added = 0;

  /** Whether its values are given ids without a lookup (decided: nearly all were new). */
  get unique(): boolean {
    return this.looked === UNIQUE;
  }

  learn(isNew: boolean): void {
    const looked = ++this.looked;
    if (looked <= WARM) return;
    if (isNew) this.added++;
    if (looked === WARM + LEARN && this.added >= LEARN_NEW) this.looked = UNIQUE;
  }
}

const WARM = 64;
const LEARN = 64;
const LEARN_NEW = 60;
const UNIQUE = -1;

/** No value yet (a value never === to it). */
const NO_VALUE = Symbol('none');

function lastValues(
  keys: string[],
  texts: (string | null)[],
): { keys: string[]; texts: (string | null)[] } {
  const map = new Map<string, string | null>();
  keys.forEach((k, i) => {
    map.set(k, texts[i] ?? null);
  });
  return { keys: [...map.keys()], texts: [...map.values()] };
}

/** The text of a key's value in a set (the last, as intern keeps it); undefined if absent. */
export function textOf(
  keys: string[],
  texts: (string | null)[],
  key: string,
): string | null | undefined {
  const i = keys.lastIndexOf(key);
  return i < 0 ? undefined : texts[i];
}

/** Lists of explicit bucket bounds: id 0 is the empty list. */
export class BoundLists extends InternedLists {
  values = new Float64Array(64);
  valueCount = 0;

  constructor() {
    super(new Uint32Array(16));
  }

  intern(bounds: ArrayLike<number>): number {
    let key = '';
    for (let i = 0; i < bounds.length; i++) {
      const b = bounds[i] as number;
      key += `${Object.is(b, -0) ? '-0' : b},`;
    }
    const known = this.known(key);
    if (known !== undefined) return known;
    const id = this.newId();
    this.values = grown(this.values, this.valueCount + bounds.length, this.valueCount);
    for (let i = 0; i < bounds.length; i++) this.values[this.valueCount++] = bounds[i] ?? 0;
    this.offsets[id + 1] = this.valueCount;
    return id;
  }
}

/** Rows of a small table of ids (resources, metrics), interned by the ids' key. */
export class IdTable {
  private readonly ids = new Map<string, number>();
  count = 0;
  slots: Uint32Array;
  bytes = 0;

  constructor(readonly stride: number) {
    this.slots = new Uint32Array(16 * stride);
  }

  /** `row`: `stride` ids. */
  intern(row: number[]): number {
    const key = row.join(',');
    let id = this.ids.get(key);
    if (id !== undefined) return id;
    id = this.count++;
    this.ids.set(key, id);
    this.slots = grown(this.slots, (id + 1) * this.stride, id * this.stride);
    this.slots.set(row, id * this.stride);
    this.bytes += MAP_ENTRY_BYTES + 2 * key.length;
    return id;
  }
}

// A batch's tables are all gone between batches: their shapes are kept (kept-shapes.js).
keepShape(new Strings());
keepShape(new AttributeSets());
keepShape(new SetShape());
keepShape(new KeyValues());
keepShape(new BoundLists());
keepShape(new IdTable(1));
