import { release, takeOutput } from './handed-over.js';
import { hexId } from './hex-id.js';
import { checkOtlpTime } from './hrtime.js';

/**
 * Writes JSON text as UTF-8 bytes straight into one reused, growing buffer: no intermediate
 * strings to concatenate (which churns the garbage collector) and no UTF-8 conversion pass of a
 * multi-megabyte string at the end.
 */

const INITIAL_CAPACITY = 256 * 1024;
/**
 * The initial capacity of a writer of small pieces (an attribute list, a key, a resource, kept
 * as spellings in caches): it grows when needed, and a process has several of them, from import
 * on, which need not hold an export's room each.
 */
export const SMALL_WRITER_CAPACITY = 4 * 1024;
/** Between exports a writer whose output was large holds no buffer, only the size of the next. */
const NONE = Buffer.alloc(0);

/** Printable ASCII without `"` and `\`: such strings are written between quotes as they are. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** Up to this many characters, copying in JavaScript is cheaper than calling into native code. */
const SHORT = 48;
const SHORT_BYTES = 64;
/** 1 at the character codes of 0-9 and a-f. */
const LOWER_HEX_DIGIT = new Uint8Array(128);
for (const c of '0123456789abcdef') LOWER_HEX_DIGIT[c.charCodeAt(0)] = 1;
/** ASCII that a JSON string holds as it is: printable, not `"` nor `\\`. */
const PLAIN_ASCII = new Uint8Array(128);
for (let c = 0x20; c <= 0x7e; c++) PLAIN_ASCII[c] = c === 0x22 || c === 0x5c ? 0 : 1;
/** Times from this many seconds on do not fit a uint64 of nanoseconds (about the year 2554). */
const MAX_NANOS_SECONDS = 18_446_744_073;

/**
 * Text fixed at load time (field names, punctuation, a cached key's head), kept as its bytes in
 * little-endian 32-bit words, zero-padded: written four bytes at a store, which measured 2.5-3.5×
 * faster than a byte loop over the string's characters for the 8-40 byte pieces of OTLP/JSON.
 */
export class Spelling {
  readonly length: number;
  readonly words: Uint32Array;

  /** The text (ASCII that needs no escaping), or its bytes. */
  constructor(text: string | Uint8Array) {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
    this.length = bytes.length;
    const padded = new Uint8Array(Math.ceil(bytes.length / 4) * 4);
    padded.set(bytes);
    const view = new DataView(padded.buffer);
    this.words = new Uint32Array(padded.length / 4);
    for (let i = 0; i < this.words.length; i++) this.words[i] = view.getUint32(i * 4, true);
  }
}

/** A Spelling of ASCII text that needs no escaping. */
export const spelling = (text: string): Spelling => new Spelling(text);

/**
 * An integer field with the fixed text around it (`,"flags":` and `,"name":`), spelled whole
 * once per small value (0 to 1023: flags, kinds, codes, severities), which then takes one
 * stored spelling instead of three writes.
 */
export class IntField {
  readonly before: Spelling;
  readonly after: Spelling;
  readonly #whole: (Spelling | undefined)[] = [];

  constructor(
    readonly beforeText: string,
    readonly afterText = '',
  ) {
    this.before = new Spelling(beforeText);
    this.after = new Spelling(afterText);
  }

  /** The whole spelling for `value` if it is a small non-negative integer, else undefined. */
  of(value: number): Spelling | undefined {
    if (!(value >= 0 && value < 1024 && Math.trunc(value) === value)) return undefined;
    let whole = this.#whole[value];
    if (whole === undefined) {
      whole = new Spelling(`${this.beforeText}${value}${this.afterText}`);
      this.#whole[value] = whole;
    }
    return whole;
  }
}

/**
 * A time field (`,"endTimeUnixNano":`), with the spelling of its name, the opening quote and the
 * digits of the seconds of the last time written in it: the times of one export share their
 * seconds mostly, and then all but the nine digits of the nanoseconds are one stored spelling.
 */
export class TimeField {
  readonly name: Spelling;
  #seconds = -1;
  #head: Spelling;

  constructor(readonly field: string) {
    this.name = new Spelling(field);
    this.#head = this.name;
  }

  /** The field's name, a quote and the digits of `seconds`. */
  head(seconds: number): Spelling {
    if (seconds !== this.#seconds) {
      this.#head = new Spelling(`${this.field}"${seconds}`);
      this.#seconds = seconds;
    }
    return this.#head;
  }
}

/** The ASCII digits of 0000-9999, four bytes in a little-endian word (40 KB). */
const FOUR_DIGITS = new Uint32Array(10_000);
for (let i = 0; i < 10_000; i++) {
  const d = String(i).padStart(4, '0');
  FOUR_DIGITS[i] =
    (d.charCodeAt(0) |
      (d.charCodeAt(1) << 8) |
      (d.charCodeAt(2) << 16) |
      (d.charCodeAt(3) << 24)) >>>
    0;
}

export class JsonWriter {
  readonly #initialCapacity: number;
  #buf: Buffer;
  /** A view of #buf for the four-byte stores of spell(). */
  #view: DataView;
  #pos = 0;
  /** Capacity to allocate at the next output's first write (see finish()). */
  #sizeHint = 0;

  /** `initialCapacity`: an export's room by default; SMALL_WRITER_CAPACITY for small pieces. */
  constructor(initialCapacity = INITIAL_CAPACITY) {
    this.#initialCapacity = initialCapacity;
    this.#buf = NONE; // allocated at the first write: a writer made at import may never write
    this.#view = viewOf(NONE);
  }

  get length(): number {
    return this.#pos;
  }

  #ensure(extra: number): void {
    const need = this.#pos + extra;
    if (need <= this.#buf.length) return;
    const capacity = Math.max(need, this.#buf.length * 2, this.#sizeHint, this.#initialCapacity);
    this.#sizeHint = 0;
    const next = Buffer.allocUnsafeSlow(capacity);
    this.#buf.copy(next, 0, 0, this.#pos);
    release(this.#buf.buffer); // outgrown, and only ever ours (handed over only by finish())
    this.#buf = next;
    this.#view = viewOf(next);
  }

  /**
   * Text fixed at load time: its words stored four bytes at a time. The last word may write up to
   * three bytes past the text, inside the buffer (room for them is ensured), which the next write
   * overwrites and no output includes.
   */
  spell(s: Spelling): void {
    const n = s.length;
    this.#ensure(n + 3);
    const view = this.#view;
    const words = s.words;
    let pos = this.#pos;
    for (let i = 0; i < words.length; i++) {
      view.setUint32(pos, words[i] as number, true);
      pos += 4;
    }
    this.#pos += n;
  }

  /** Text known to be ASCII that needs no escaping: punctuation, field names, numbers. */
  raw(text: string): void {
    const n = text.length;
    this.#ensure(n);
    if (n > SHORT) {
      this.#pos += this.#buf.latin1Write(text, this.#pos);
      return;
    }
    // Short text: a plain loop beats the native call's fixed cost.
    const buf = this.#buf;
    let pos = this.#pos;
    for (let i = 0; i < n; i++) buf[pos++] = text.charCodeAt(i);
    this.#pos = pos;
  }

  /** A non-negative safe integer, written digit by digit (no string made). */
  uint(value: number): void {
    this.#ensure(16);
    this.#pos = writeUint(this.#buf, this.#pos, value);
  }

  /**
   * An integer field (32- or 64-bit). A safe integer is written as its digits, no string made
   * (-0 as 0: integers have no sign of zero). Beyond 2^53 the exact decimal goes in quotes, as
   * the protobuf JSON mapping spells 64-bit integers: String() would give only the shortest
   * digits that read back as the same double (-2^63 as -9223372036854776000, outside int64),
   * and a JSON number that large loses digits in most readers. A value that is no integer is not
   * what the field holds: it is written as the double it is.
   */
  int(value: number): void {
    if (Number.isSafeInteger(value)) {
      if (value < 0) {
        this.char(0x2d);
        this.uint(-value);
      } else this.uint(value);
    } else if (Number.isInteger(value)) this.raw(`"${BigInt(value)}"`);
    else this.double(value);
  }

  /** `field`'s text before, the integer (as int() writes it) and its text after. */
  intField(field: IntField, value: number): void {
    const whole = field.of(value);
    if (whole !== undefined) {
      this.spell(whole);
      return;
    }
    this.spell(field.before);
    this.int(value);
    this.spell(field.after);
  }

  /**
   * `field` and the Unix nanoseconds of an HrTime ([seconds, nanoseconds]) as OTLP/JSON spells a
   * time: the exact decimal in quotes, written without a string made when the time is a plain
   * one (see TimeField).
   */
  nanos(field: TimeField, time: readonly [number, number]): void {
    const seconds = time[0];
    const nanos = time[1];
    if (
      !(seconds > 0 && seconds < MAX_NANOS_SECONDS && nanos >= 0 && nanos < 1e9) ||
      !Number.isInteger(seconds) ||
      !Number.isInteger(nanos)
    ) {
      // Fractions are cut, and nanoseconds past a second carried, as the official serializer does.
      checkOtlpTime(time);
      const exact = BigInt(Math.trunc(seconds)) * 1_000_000_000n + BigInt(Math.trunc(nanos));
      this.spell(field.name);
      this.raw(`"${exact}"`);
      return;
    }
    this.spell(field.head(seconds));
    this.#ensure(10);
    // Nine digits: one, then two groups of four, each group one store of its four ASCII digits.
    const view = this.#view;
    const pos = this.#pos;
    const high = (nanos / 1e8) | 0;
    const low = nanos - high * 1e8;
    const middle = (low / 1e4) | 0;
    view.setUint8(pos, 0x30 + high);
    view.setUint32(pos + 1, FOUR_DIGITS[middle] as number, true);
    view.setUint32(pos + 5, FOUR_DIGITS[low - middle * 1e4] as number, true);
    view.setUint8(pos + 9, 0x22);
    this.#pos = pos + 10;
  }

  /**
   * `text` in quotes when every character of it is marked 1 in `allowed` (ASCII only), copied
   * in one pass; true when written, false (nothing written) when a character is not allowed.
   */
  #quotedIfAll(text: string, allowed: Uint8Array): boolean {
    const n = text.length;
    this.#ensure(n + 2);
    const view = this.#view;
    let pos = this.#pos;
    view.setUint8(pos++, 0x22);
    let i = 0;
    // Four characters a step, stored in one word: a quarter of the stores of a byte loop.
    for (; i + 4 <= n; i += 4) {
      const a = text.charCodeAt(i);
      const b = text.charCodeAt(i + 1);
      const c = text.charCodeAt(i + 2);
      const d = text.charCodeAt(i + 3);
      // A code past the table reads undefined, which & makes 0: not allowed.
      if (
        ((allowed[a] as number) &
          (allowed[b] as number) &
          (allowed[c] as number) &
          (allowed[d] as number)) !==
        1
      ) {
        return false;
      }
      view.setUint32(pos, a | (b << 8) | (c << 16) | (d << 24), true);
      pos += 4;
    }
    return this.#quotedTail(text, i, pos, allowed);
  }

  /**
   * `text` in quotes when it is ASCII from 0x20 without `"` and `\\`, copied in one pass; true
   * when written, false (nothing written) otherwise. #quotedIfAll with PLAIN_ASCII, but four
   * characters are checked at once by arithmetic on their word (no table read): a byte below
   * 0x20, 0x22 or 0x5c sets the high bit of its lane in `hit` (exact once every byte is below
   * 0x80, checked first). DEL (0x7f) passes here, as JSON.stringify writes it: as it is.
   */
  #quotedPlain(text: string): boolean {
    const n = text.length;
    this.#ensure(n + 2);
    const view = this.#view;
    let pos = this.#pos;
    view.setUint8(pos++, 0x22);
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const a = text.charCodeAt(i);
      const b = text.charCodeAt(i + 1);
      const c = text.charCodeAt(i + 2);
      const d = text.charCodeAt(i + 3);
      if ((a | b | c | d) > 0x7f) return false;
      const w = a | (b << 8) | (c << 16) | (d << 24);
      const quote = w ^ 0x22222222;
      const backslash = w ^ 0x5c5c5c5c;
      const hit =
        ((w - 0x20202020) & ~w) |
        ((quote - 0x01010101) & ~quote) |
        ((backslash - 0x01010101) & ~backslash);
      if ((hit & 0x80808080) !== 0) return false;
      view.setUint32(pos, w, true);
      pos += 4;
    }
    return this.#quotedTail(text, i, pos, PLAIN_ASCII);
  }

  /**
   * The end of #quotedIfAll and #quotedPlain: the characters of `text` from `i` (fewer than four)
   * checked in `allowed` and stored from `pos`, then the closing quote; false (nothing written)
   * when one is not allowed.
   */
  #quotedTail(text: string, i: number, pos: number, allowed: Uint8Array): boolean {
    const view = this.#view;
    let at = pos;
    for (let k = i; k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (allowed[c] !== 1) return false;
      view.setUint8(at++, c);
    }
    view.setUint8(at++, 0x22);
    this.#pos = at;
    return true;
  }

  /**
   * A trace or span id as OTLP/JSON spells it, in quotes: lower-case hex as it is, anything else
   * as the hex of the bytes it reads as (see hex-id.ts).
   */
  hexId(id: string): void {
    if ((id.length & 1) === 0 && this.#quotedIfAll(id, LOWER_HEX_DIGIT)) return;
    this.raw(`"${hexId(id)}"`);
  }

  /** Integers separated by commas, e.g. bucket counts (almost always small and non-negative). */
  uints(values: readonly number[]): void {
    const n = values.length;
    this.#ensure(n * 17);
    let buf = this.#buf;
    let pos = this.#pos;
    for (let i = 0; i < n; i++) {
      if (i > 0) buf[pos++] = 0x2c;
      const v = values[i] as number;
      if (v >= 0 && v < 10 && (v | 0) === v) buf[pos++] = 0x30 + v;
      else if (Number.isSafeInteger(v) && v >= 0) pos = writeUint(buf, pos, v);
      else {
        this.#pos = pos;
        this.int(v);
        this.#ensure((n - i) * 17);
        buf = this.#buf; // int() and #ensure() may have moved to a larger buffer
        pos = this.#pos;
      }
    }
    this.#pos = pos;
  }

  /** One ASCII character by its code, e.g. 0x2c for a comma. */
  char(code: number): void {
    this.#ensure(1);
    this.#buf[this.#pos++] = code;
  }

  bytes(bytes: Uint8Array): void {
    const n = bytes.length;
    this.#ensure(n);
    if (n > SHORT_BYTES) {
      this.#buf.set(bytes, this.#pos);
      this.#pos += n;
      return;
    }
    const buf = this.#buf;
    let pos = this.#pos;
    for (let i = 0; i < n; i++) buf[pos++] = bytes[i] as number;
    this.#pos = pos;
  }

  /** A JSON string literal. */
  string(value: string): void {
    const n = value.length;
    if (n <= SHORT) {
      // One pass: copy while the characters need no escaping; else start again, escaped.
      if (this.#quotedPlain(value)) return;
    } else if (PLAIN.test(value)) {
      this.char(0x22);
      this.raw(value);
      this.char(0x22);
      return;
    }
    // A lone surrogate is no character: UTF-8, and so protobuf, carries U+FFFD in its place (as
    // TextEncoder writes it), and so does our JSON; JSON.stringify would escape it as \udXXX.
    const quoted = JSON.stringify(value.toWellFormed());
    this.#ensure(quoted.length * 3);
    this.#pos += this.#buf.utf8Write(quoted, this.#pos);
  }

  /** `field` (e.g. `,"name":`) and the string, unless it is empty (as protobuf leaves it out). */
  stringUnlessEmpty(field: Spelling, value: string | undefined): void {
    if (!value) return;
    this.spell(field);
    this.string(value);
  }

  /** `field` (e.g. `,"droppedAttributesCount":`) and the integer, unless it is 0 or absent. */
  intUnlessZero(field: Spelling, value: number | undefined): void {
    if (!value) return;
    this.spell(field);
    this.int(value);
  }

  /**
   * A double, as exact as protobuf's 8 bytes: -0 keeps its sign (JSON.stringify drops it); NaN
   * and the infinities, which JSON lacks, are strings in the protobuf JSON mapping; a value that
   * is no number is spelled as the double protobuf makes of it (undefined: NaN).
   * JSON.stringify, not String(): the same digits (both are the spec's Number::toString), but
   * String() keeps each result in V8's number-string cache, allocated in the old generation
   * (3.4 MB per export at 100,000 series, which only a full collection frees); JSON.stringify's
   * strings are young and die young.
   */
  double(value: number): void {
    if (Number.isSafeInteger(value)) {
      if (value === 0 && 1 / value < 0) this.raw('-0');
      else this.int(value);
    } else if (Number.isFinite(value)) this.raw(JSON.stringify(value));
    else if (value === Number.POSITIVE_INFINITY) this.raw('"Infinity"');
    else if (value === Number.NEGATIVE_INFINITY) this.raw('"-Infinity"');
    else if (typeof value === 'number') this.raw('"NaN"');
    else this.double(Number(value));
  }

  /** The bytes written, in a small Buffer of its own (for caches); the writer is reset. */
  snapshot(): Buffer {
    const out = Buffer.from(this.#buf.subarray(0, this.#pos));
    this.#pos = 0;
    return out;
  }

  /** Forgets what was written (after an encoder failed half-way). */
  reset(): void {
    this.#pos = 0;
  }

  /**
   * The bytes written, in a Buffer at offset 0 of an ArrayBuffer nobody else uses (transferable
   * without a copy; see handed-over.ts); the writer is reset.
   */
  finish(): Buffer {
    const { record, nextCapacity } = takeOutput(this.#buf, this.#pos, this.#initialCapacity);
    this.#pos = 0;
    if (nextCapacity !== undefined) {
      this.#buf = NONE;
      this.#view = viewOf(NONE);
      this.#sizeHint = nextCapacity;
    }
    return record;
  }
}

function viewOf(buf: Buffer): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** Writes the digits of a non-negative safe integer at `pos` (room checked by the caller); returns the new end. */
function writeUint(buf: Buffer, pos: number, value: number): number {
  if (value < 10) {
    buf[pos] = 0x30 + value;
    return pos + 1;
  }
  // Up to eight digits from the table of four (no division per digit): most counts, codes, ports.
  if (value < 1e4) return writeUpToFour(buf, pos, value);
  if (value < 1e8) {
    const high = (value / 1e4) | 0;
    const word = FOUR_DIGITS[value - high * 1e4] as number;
    const at = writeUpToFour(buf, pos, high);
    buf[at] = word;
    buf[at + 1] = word >>> 8;
    buf[at + 2] = word >>> 16;
    buf[at + 3] = word >>> 24;
    return at + 4;
  }
  let digits = 0;
  for (let v = value; v >= 1; v = Math.floor(v / 10)) digits++;
  const end = pos + digits;
  let at = end;
  for (let v = value; v >= 1; v = Math.floor(v / 10)) buf[--at] = 0x30 + (v % 10);
  return end;
}

/** The digits of 1-9999, without leading zeros. */
function writeUpToFour(buf: Buffer, pos: number, value: number): number {
  const word = FOUR_DIGITS[value] as number;
  let at = pos;
  for (
    let shift = value < 10 ? 24 : value < 100 ? 16 : value < 1000 ? 8 : 0;
    shift < 32;
    shift += 8
  ) {
    buf[at++] = word >>> shift;
  }
  return at;
}

declare global {
  interface String {
    /** ES2024 (Node.js 20+): lone surrogates replaced by U+FFFD. */
    toWellFormed(): string;
  }
  interface Buffer {
    /** Node's internal fast paths behind buf.write(text, offset, 'latin1' | 'utf8'). */
    latin1Write(text: string, offset: number): number;
    utf8Write(text: string, offset: number): number;
  }
}
