// @ts-check
// One bit-packed run of the RLE / bit-packed hybrid, written a row at a time: the levels and
// dictionary indices of a map or list column. A row's bits are appended wherever the last row's
// ended, so an attribute set packed once (plan.js) is copied per row with a few shifts instead of
// being encoded value by value. Maps and lists have short runs, where RLE would gain little.
/** @typedef {import('./byte-writer.js').ByteWriter} ByteWriter */

export class BitPacker {
  /** @param {number} width bits per value (1 to 24) */
  constructor(width) {
    this.width = width;
    this.buf = new Uint8Array(256);
    this.length = 0;
    this.acc = 0;
    this.bits = 0;
    this.values = 0;
    this.perChunk = 0;
    /** @type {number[]} */
    this.chunks = [];
    this.reset(width);
  }

  /** Room for `bits` more bits. @param {number} bits */
  room(bits) {
    const need = this.length + Math.ceil(bits / 8) + 4;
    if (need > this.buf.length) {
      const next = new Uint8Array(Math.max(need, 2 * this.buf.length));
      next.set(this.buf.subarray(0, this.length));
      this.buf = next;
    }
  }

  /** Appends the low `n` bits of `v` (n ≤ 24); room was made. @param {number} v @param {number} n */
  #write(v, n) {
    let acc = this.acc | (v << this.bits);
    let bits = this.bits + n;
    const buf = this.buf;
    while (bits >= 8) {
      buf[this.length++] = acc & 0xff;
      acc >>>= 8;
      bits -= 8;
    }
    this.acc = acc;
    this.bits = bits;
  }

  /**
   * Appends the low `width` bits (up to 64) of an unsigned 64-bit value; call room() first.
   * @param {number} lo @param {number} hi @param {number} width
   */
  bits64(lo, hi, width) {
    if (width <= 24) {
      this.#write(lo & ((1 << width) - 1), width);
      return;
    }
    this.#write(lo & 0xffffff, 24);
    if (width <= 32) {
      this.#write((lo >>> 24) & ((1 << (width - 24)) - 1), width - 24);
      return;
    }
    this.#write(lo >>> 24, 8);
    const rest = width - 32;
    if (rest <= 24) this.#write(hi & ((1 << rest) - 1), rest);
    else {
      this.#write(hi & 0xffffff, 24);
      this.#write((hi >>> 24) & ((1 << (rest - 24)) - 1), rest - 24);
    }
  }

  /** Appends the bytes packed so far (a whole number of bytes) to `w`, and starts afresh. @param {ByteWriter} w */
  drain(w) {
    w.range(this.buf, 0, this.length);
    this.length = 0;
  }

  /** Appends one value. @param {number} v */
  value(v) {
    this.room(this.width);
    this.#write(v, this.width);
    this.values++;
  }

  /** Appends `count` copies of `v` (below 4: a level). @param {number} v @param {number} count */
  repeat(v, count) {
    const w = this.width;
    this.room(count * w);
    const chunk = /** @type {number} */ (this.chunks[v]);
    const per = this.perChunk;
    let left = count;
    for (; left >= per; left -= per) this.#write(chunk, per * w);
    if (left > 0) this.#write(chunk & ((1 << (left * w)) - 1), left * w);
    this.values += count;
  }

  /**
   * Appends `count` values packed beforehand (LSB first, as this writer packs them) in
   * bytes[from, ...), e.g. an attribute set's dictionary indices.
   * @param {Uint8Array} bytes @param {number} from @param {number} count
   */
  packed(bytes, from, count) {
    let bits = count * this.width;
    this.room(bits);
    let at = from;
    for (; bits >= 24; bits -= 24, at += 3) {
      const b0 = /** @type {number} */ (bytes[at]);
      const b1 = /** @type {number} */ (bytes[at + 1]);
      const b2 = /** @type {number} */ (bytes[at + 2]);
      this.#write(b0 | (b1 << 8) | (b2 << 16), 24);
    }
    for (; bits > 0; bits -= 8, at++) {
      const n = Math.min(8, bits);
      this.#write(/** @type {number} */ (bytes[at]) & ((1 << n) - 1), n);
    }
    this.values += count;
  }

  /**
   * Writes the run in the hybrid encoding (header, then whole groups of 8 values) to `w`, and
   * starts afresh.
   * @param {ByteWriter} w
   */
  finish(w) {
    const groups = Math.ceil(this.values / 8);
    w.varint(groups * 2 + 1);
    if (this.bits > 0) this.buf[this.length++] = this.acc & 0xff;
    w.bytes(this.buf.subarray(0, this.length));
    const pad = groups * this.width - this.length;
    w.buf.fill(0, w.reserve(pad), w.length); // zeros to the last group's end
    this.length = 0;
    this.acc = 0;
    this.bits = 0;
    this.values = 0;
  }

  /** Starts afresh with another width (the indices packer, reused across dictionaries). @param {number} width */
  reset(width) {
    this.width = width;
    /** Values per 24-bit chunk, and a chunk of copies of each value below 4 (the levels). */
    this.perChunk = Math.floor(24 / width);
    this.chunks = [0, 1, 2, 3].map((v) => {
      let chunk = 0;
      for (let i = 0; i < this.perChunk; i++) chunk |= v << (i * width);
      return chunk & 0xffffff;
    });
    this.length = 0;
    this.acc = 0;
    this.bits = 0;
    this.values = 0;
  }
}

/**
 * Packs values once, for BitPacker.packed: every list in `lists` (start, end into `values`)
 * at `width` bits, each list starting on a byte. Returns the bytes and where each list starts.
 * @param {Int32Array} values @param {Uint32Array} offsets list i is values[offsets[i], offsets[i + 1]) @param {number} lists @param {number} width
 */
export function packLists(values, offsets, lists, width) {
  const starts = new Uint32Array(lists + 1);
  let size = 0;
  for (let i = 0; i < lists; i++) {
    starts[i] = size;
    const n = /** @type {number} */ (offsets[i + 1]) - /** @type {number} */ (offsets[i]);
    size += Math.ceil((n * width) / 8);
  }
  starts[lists] = size;
  const bytes = new Uint8Array(size);
  for (let i = 0; i < lists; i++) {
    const from = /** @type {number} */ (offsets[i]);
    const to = /** @type {number} */ (offsets[i + 1]);
    pack(bytes, /** @type {number} */ (starts[i]), values, from, to, to - from, width);
  }
  return { bytes, starts };
}

/**
 * Bit-packs values[from, to), then zeros up to `count` values in all, `width` bits each (up to
 * 24), least significant bit first, into out[at, ...); a last partial byte is written too.
 * @param {Uint8Array} out @param {number} at @param {ArrayLike<number>} values
 * @param {number} from @param {number} to @param {number} count @param {number} width
 */
export function pack(out, at, values, from, to, count, width) {
  let o = at;
  let acc = 0;
  let bits = 0;
  for (let i = from; i < from + count; i++) {
    acc |= (i < to ? /** @type {number} */ (values[i]) : 0) << bits;
    bits += width;
    while (bits >= 8) {
      out[o++] = acc & 0xff;
      acc >>>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) out[o] = acc & 0xff;
}

// Runs here on a few lists, a few times (see statistics.js's note at its end).
for (let i = 0; i < 8; i++) packLists(new Int32Array([1, 2, i]), new Uint32Array([0, 2, 3]), 2, 2);
