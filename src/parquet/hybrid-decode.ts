import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { readVarInt } from 'hyparquet/src/thrift.js';
import type { DataReader } from 'hyparquet/src/types.js';

/**
 * Parquet's RLE / bit-packed hybrid (levels, dictionary indices) read into a typed array as
 * hyparquet's readRleBitPackedHybrid reads it: the same runs, values and end, and a throw where it
 * throws (its values before the throw may differ). Only its bit-packed loop differs: hyparquet
 * takes a byte and a branch a bit; here a value is cut from the 32-bit word at its first byte,
 * for widths up to 24 (wider ones, and 0, are hyparquet's own). That loop was the largest single
 * cost of reading a compaction's inputs (bench/results/2026-12-05-compaction-parity.md).
 * `length`: the encoded bytes; undefined: a 4-byte length first (a version 1 page's levels).
 */
export function readHybrid(
  reader: DataReader,
  width: number,
  output: Int32Array | Uint32Array | Uint8Array,
  length?: number,
): void {
  if (width === 0 || width > 24) {
    readRleBitPackedHybrid(reader, width, output, length);
    return;
  }
  const { view } = reader;
  let n = length;
  if (n === undefined) {
    n = view.getUint32(reader.offset, true);
    reader.offset += 4;
  }
  const start = reader.offset;
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  const mask = (1 << width) - 1;
  const limit = output.length;
  let seen = 0;
  while (seen < limit) {
    const header = readVarInt(reader);
    if (header & 1) {
      // Bit-packed: groups of 8 values in `width` bytes, each value little-endian from its bit.
      const count = (header >> 1) << 3;
      if (count === 0) {
        // hyparquet reads a byte, whatever the count.
        if (reader.offset >= bytes.length) throw new RangeError('a bit-packed run past its page');
        reader.offset++;
        continue;
      }
      const size = (count >> 3) * width;
      if (count < 0 || reader.offset + size > bytes.length) {
        throw new RangeError('a bit-packed run past its page');
      }
      const at = reader.offset;
      const take = Math.min(count, limit - seen);
      const safe = bytes.length - 4; // a 32-bit word read from here on would pass the end
      for (let k = 0; k < take; k++) {
        const bit = k * width;
        const b = at + (bit >> 3);
        const word =
          b <= safe
            ? (bytes[b] as number) |
              ((bytes[b + 1] as number) << 8) |
              ((bytes[b + 2] as number) << 16) |
              ((bytes[b + 3] as number) << 24)
            : wordAtEnd(bytes, b);
        output[seen + k] = (word >>> (bit & 7)) & mask;
      }
      seen += take;
      reader.offset = at + size;
    } else {
      // RLE: one value, `count` times (hyparquet writes them all; an array keeps its length).
      const count = header >>> 1;
      let value = 0;
      for (let i = 0; i < (width + 7) >> 3; i++)
        value |= view.getUint8(reader.offset++) << (i << 3);
      output.fill(value, seen, Math.min(limit, seen + count));
      seen += count;
    }
  }
  reader.offset = start + n;
}

/** The bytes from `b` as a little-endian word, 0 past the end. */
function wordAtEnd(bytes: Uint8Array, b: number): number {
  let word = 0;
  for (let i = 0; i < 4 && b + i < bytes.length; i++) word |= (bytes[b + i] as number) << (8 * i);
  return word;
}
