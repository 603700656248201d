/**
 * Writes JSON text as UTF-8 bytes straight into one reused, growing buffer: no intermediate
 * strings to concatenate (which churns the garbage collector) and no UTF-8 conversion pass of a
 * multi-megabyte string at the end.
 */

const INITIAL_CAPACITY = 256 * 1024;
/** A writer that grew past this is shrunk after use: a cached buffer never stays sized to the largest export. */
const MAX_RETAINED_CAPACITY = 4 * 1024 * 1024;
/** Printable ASCII without `"` and `\`: such strings are written between quotes as they are. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** Up to this many characters, copying in JavaScript is cheaper than calling into native code. */
const SHORT = 48;

export class JsonWriter {
  #buf = Buffer.allocUnsafeSlow(INITIAL_CAPACITY);
  #pos = 0;

  get length(): number {
    return this.#pos;
  }

  #ensure(extra: number): void {
    const need = this.#pos + extra;
    if (need <= this.#buf.length) return;
    let capacity = this.#buf.length * 2;
    while (capacity < need) capacity *= 2;
    const next = Buffer.allocUnsafeSlow(capacity);
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
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
    const buf = this.#buf;
    if (value < 10) {
      buf[this.#pos++] = 0x30 + value;
      return;
    }
    let digits = 0;
    for (let v = value; v >= 1; v = Math.floor(v / 10)) digits++;
    let pos = this.#pos + digits;
    this.#pos = pos;
    for (let v = value; v >= 1; v = Math.floor(v / 10)) buf[--pos] = 0x30 + (v % 10);
  }

  /** Integers separated by commas, e.g. bucket counts. */
  uints(values: readonly number[]): void {
    for (let i = 0; i < values.length; i++) {
      if (i > 0) this.char(0x2c);
      const v = values[i] as number;
      if (Number.isSafeInteger(v) && v >= 0) this.uint(v);
      else this.double(v);
    }
  }

  /** One ASCII character by its code, e.g. 0x2c for a comma. */
  char(code: number): void {
    this.#ensure(1);
    this.#buf[this.#pos++] = code;
  }

  bytes(bytes: Uint8Array): void {
    this.#ensure(bytes.length);
    this.#buf.set(bytes, this.#pos);
    this.#pos += bytes.length;
  }

  /** A JSON string literal. */
  string(value: string): void {
    if (PLAIN.test(value)) {
      this.char(0x22);
      this.raw(value);
      this.char(0x22);
      return;
    }
    const quoted = JSON.stringify(value);
    this.#ensure(quoted.length * 3);
    this.#pos += this.#buf.utf8Write(quoted, this.#pos);
  }

  /** A double; JSON has no NaN or Infinity, the protobuf JSON mapping spells them as strings. */
  double(value: number): void {
    if (Number.isFinite(value)) this.raw(String(value));
    else if (Number.isNaN(value)) this.raw('"NaN"');
    else this.raw(value > 0 ? '"Infinity"' : '"-Infinity"');
  }

  /** The bytes written, in a small Buffer of its own (for caches); the writer is reset. */
  snapshot(): Buffer {
    const out = Buffer.from(this.#buf.subarray(0, this.#pos));
    this.#pos = 0;
    return out;
  }

  /** The bytes written, in a Buffer that owns its memory (transferable); the writer is reset. */
  finish(): Buffer {
    const out = Buffer.allocUnsafeSlow(this.#pos);
    this.#buf.copy(out, 0, 0, this.#pos);
    this.#pos = 0;
    if (this.#buf.length > MAX_RETAINED_CAPACITY)
      this.#buf = Buffer.allocUnsafeSlow(INITIAL_CAPACITY);
    return out;
  }
}

declare global {
  interface Buffer {
    /** Node's internal fast paths behind buf.write(text, offset, 'latin1' | 'utf8'). */
    latin1Write(text: string, offset: number): number;
    utf8Write(text: string, offset: number): number;
  }
}
