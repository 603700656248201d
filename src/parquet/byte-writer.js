// @ts-check
// A growable byte buffer for the Parquet writer: little-endian numbers, ULEB128 varints, and
// typed arrays' bytes as they are in memory (which is why encode.js refuses big-endian machines).

export class ByteWriter {
  /** @param {number} [capacity] */
  constructor(capacity = 1024) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
    this.length = 0;
  }

  /** Room for `n` more bytes; returns where they start. @param {number} n */
  reserve(n) {
    const at = this.length;
    if (at + n > this.buf.length) {
      const next = new Uint8Array(Math.max(at + n, this.buf.length * 2));
      next.set(this.buf.subarray(0, at));
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    this.length += n;
    return at;
  }

  /** @param {number} v */
  byte(v) {
    const at = this.reserve(1); // before this.buf: reserve() may replace it
    this.buf[at] = v;
  }

  /** @param {number} v */
  uint32(v) {
    const at = this.reserve(4);
    this.view.setUint32(at, v, true);
  }

  /** Overwrites 4 bytes at `at` (a length written after what it measures). @param {number} at @param {number} v */
  patchUint32(at, v) {
    this.view.setUint32(at, v, true);
  }

  /** An unsigned integer (up to 2^53) as ULEB128. @param {number} v */
  varint(v) {
    while (v >= 0x80) {
      this.byte((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.byte(v);
  }

  /** bytes[from, to): a short run copied byte by byte (no view object made). @param {Uint8Array} bytes @param {number} from @param {number} to */
  range(bytes, from, to) {
    const at = this.reserve(to - from);
    const buf = this.buf;
    for (let i = from; i < to; i++) buf[at + i - from] = /** @type {number} */ (bytes[i]);
  }

  /** @param {Uint8Array} bytes */
  bytes(bytes) {
    const at = this.reserve(bytes.length);
    this.buf.set(bytes, at);
  }

  /** The first `n` elements of a typed array, as they are in memory. @param {Int32Array | Float64Array} array @param {number} n */
  elements(array, n) {
    const size = n * array.BYTES_PER_ELEMENT;
    this.bytes(new Uint8Array(array.buffer, array.byteOffset, size));
  }

  /** What was written (a view of this writer's buffer). */
  result() {
    return this.buf.subarray(0, this.length);
  }
}
