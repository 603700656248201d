import { keepShape } from '../base/kept-shapes.js';
import { grown } from './grown.js';

const utf8 = new TextEncoder();

/**
 * Texts as UTF-8, one after another in one growing buffer; an array of ends (the caller's) holds
 * where each ends. Values are set in order, so value k starts where k - 1 ends, and a value set
 * again at its index (a rolled-back append) is overwritten by it. A batch's strings (Strings) and
 * its PLAIN text columns (ids, bodies: flat-parquet/store.ts) are kept so.
 */
export class TextBytes {
  bytes: Uint8Array;

  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
  }

  /** Writes `s` as value `at` of `ends`; lone surrogates become U+FFFD, as UTF-8 has them. */
  set(ends: Uint32Array, at: number, s: string): void {
    const start = at === 0 ? 0 : (ends[at - 1] as number);
    const n = s.length;
    // Room for its characters as ASCII; for 3 bytes each of the rest (a lone surrogate as
    // U+FFFD too) only where one is not.
    let bytes = this.bytes;
    if (start + n > bytes.length) {
      bytes = grown(bytes, start + n, start);
      this.bytes = bytes;
    }
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      bytes[start + i] = c;
    }
    let end = start + i;
    if (i < n) {
      if (end + 3 * (n - i) > bytes.length) {
        bytes = grown(bytes, end + 3 * (n - i), end);
        this.bytes = bytes;
      }
      end += utf8.encodeInto(i === 0 ? s : s.slice(i), bytes.subarray(end)).written;
    }
    ends[at] = end;
  }

  /** Writes `from[start, end)` (UTF-8 as it is) as value `at` of `ends`. */
  setBytes(ends: Uint32Array, at: number, from: Uint8Array, start: number, end: number): void {
    const to = at === 0 ? 0 : (ends[at - 1] as number);
    const n = end - start;
    if (to + n > this.bytes.length) this.bytes = grown(this.bytes, to + n, to);
    const bytes = this.bytes;
    // An id's 16 or 32 bytes: a loop, not a view made to copy them.
    if (n > 64) bytes.set(from.subarray(start, end), to);
    else for (let j = 0; j < n; j++) bytes[to + j] = from[start + j] as number;
    ends[at] = to + n;
  }
}

// A batch's texts are gone after its seal: their shape is kept (kept-shapes.js).
keepShape(new TextBytes(0));
