/**
 * Thrift's compact protocol writes an empty struct or list in a byte or two, and hyparquet
 * builds every struct and list of a footer or a page header (a JavaScript object or array,
 * tens of bytes each) before anything looks at them: a 16 MiB footer of empty structs cost
 * 1 GB of heap. So a read first counts them, building nothing, and refuses a struct that holds
 * more than it may build (objectBudget: one per 16 bytes of maxDecompressedBytes, as for
 * OTLP/JSON and protobuf). A list that claims more elements than bytes are left (each takes at
 * least one) is refused too: hyparquet makes its array at the claimed size first. So is one
 * nested deeper than MAX_THRIFT_DEPTH, which hyparquet's recursive parser would take to the end
 * of the stack ("Maximum call stack size exceeded", which says nothing of the file).
 */

/** The deepest nesting of structs and lists read; Parquet's own nest about 8 deep. */
export const MAX_THRIFT_DEPTH = 64;

/** Thrift compact protocol types. */
const TRUE = 1;
const FALSE = 2;
const BYTE = 3;
const I64 = 6;
const DOUBLE = 7;
const BINARY = 8;
const LIST = 9;
const STRUCT = 12;

/**
 * Throws unless the Thrift struct at `offset` of `bytes` holds at most `max` structs and lists
 * (itself included), and no list longer than the bytes left. Data hyparquet cannot read (cut
 * off, a type it does not know) ends the count: hyparquet throws there itself. `what` names the
 * struct in the error ("a Parquet footer").
 */
export function checkThriftSize(
  bytes: Uint8Array,
  offset: number,
  max: number,
  what: string,
): void {
  let at = offset;
  let built = 0;
  const take = (): void => {
    if (open.length >= MAX_THRIFT_DEPTH) {
      throw new Error(
        `${what} of Thrift structs and lists nested more than ${MAX_THRIFT_DEPTH} deep, deeper than Parquet nests them`,
      );
    }
    if (++built > max) {
      throw new Error(
        `${what} of more than ${max} Thrift structs and lists, the most a read builds (maxDecompressedBytes)`,
      );
    }
  };
  /** A varint as hyparquet reads it (32-bit), or -1 past the end. */
  const varint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (at >= bytes.length) return -1;
      const byte = bytes[at++] as number;
      result |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7;
    }
  };
  // Each open struct (-1) or list (the elements it has left, and their type), innermost last.
  const open: { left: number; type: number }[] = [];
  take();
  open.push({ left: -1, type: STRUCT });
  while (open.length > 0) {
    if (at >= bytes.length) return;
    const top = open[open.length - 1] as { left: number; type: number };
    let type: number;
    if (top.left < 0) {
      const byte = bytes[at++] as number;
      type = byte & 0x0f;
      if (type === 0) {
        open.pop();
        continue;
      }
      if (byte >> 4 === 0 && varint() < 0) return; // a field id of its own
    } else {
      if (top.left === 0) {
        open.pop();
        continue;
      }
      top.left--;
      // Booleans in a list take a byte each.
      type = top.type === TRUE || top.type === FALSE ? BYTE : top.type;
    }
    if (type === TRUE || type === FALSE) continue;
    if (type === BYTE) at += 1;
    else if (type > BYTE && type <= I64) {
      if (varint() < 0) return;
    } else if (type === DOUBLE) at += 8;
    else if (type === BINARY) {
      const length = varint();
      if (length < 0 || at + length > bytes.length) return;
      at += length;
    } else if (type === LIST) {
      if (at >= bytes.length) return;
      const header = bytes[at++] as number;
      let size = header >> 4;
      if (size === 15) size = varint();
      if (size < 0) return;
      if (size > bytes.length - at) {
        throw new Error(
          `${what} with a Thrift list of ${size} elements in ${bytes.length - at} bytes`,
        );
      }
      take();
      open.push({ left: size, type: header & 0x0f });
    } else if (type === STRUCT) {
      take();
      open.push({ left: -1, type: STRUCT });
    } else return;
  }
}
