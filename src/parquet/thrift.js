// @ts-check
// Thrift's compact protocol, only as far as Parquet's footer and page headers need it: structs
// of i32, i64, binary, bool, struct and list fields, written from a declarative field list.
import { ByteWriter } from './byte-writer.js';

const TYPE = /** @type {const} */ ({
  TRUE: 1,
  FALSE: 2,
  I32: 5,
  I64: 6,
  BINARY: 8,
  LIST: 9,
  STRUCT: 12,
});

/**
 * A struct field: [id, kind, value], kind 'i32', 'i64', 'binary' (bytes or a string), 'bool' or
 * 'struct' (a Field list); a list names its element kind: [id, 'list', 'i32' | 'binary' |
 * 'struct', values]. Fields whose value is undefined are left out.
 * @typedef {[number, 'i32' | 'i64' | 'binary' | 'bool' | 'struct', unknown]
 *   | [number, 'list', 'i32' | 'binary' | 'struct', unknown[] | undefined]} Field
 */

const KIND_TYPE = {
  i32: TYPE.I32,
  i64: TYPE.I64,
  binary: TYPE.BINARY,
  struct: TYPE.STRUCT,
  list: TYPE.LIST,
};

const utf8 = new TextEncoder();

/** @param {ByteWriter} w @param {number} v */
function zigzag(w, v) {
  w.varint(v < 0 ? -2 * v - 1 : 2 * v);
}

/** @param {ByteWriter} w @param {Uint8Array | string} v */
function binary(w, v) {
  const bytes = typeof v === 'string' ? utf8.encode(v) : v;
  w.varint(bytes.length);
  w.bytes(bytes);
}

/** @param {'i32' | 'binary' | 'struct'} kind */
const elementType = (kind) =>
  kind === 'i32' ? TYPE.I32 : kind === 'binary' ? TYPE.BINARY : TYPE.STRUCT;

/**
 * Writes a struct's fields (ids ascending) and its stop byte.
 * @param {ByteWriter} w
 * @param {Field[]} fields
 */
export function writeStruct(w, fields) {
  let last = 0;
  for (const field of fields) {
    const [id, kind] = field;
    const value = field[field.length - 1];
    if (value === undefined) continue;
    const type = kind === 'bool' ? (value ? TYPE.TRUE : TYPE.FALSE) : KIND_TYPE[kind];
    if (id > last && id - last <= 15) w.byte(((id - last) << 4) | type);
    else {
      w.byte(type);
      zigzag(w, id);
    }
    last = id;
    if (field[1] === 'i32' || field[1] === 'i64') zigzag(w, /** @type {number} */ (value));
    else if (field[1] === 'binary') binary(w, /** @type {Uint8Array | string} */ (value));
    else if (field[1] === 'struct') writeStruct(w, /** @type {Field[]} */ (value));
    else if (field[1] === 'list') {
      const items = /** @type {unknown[]} */ (value);
      const element = field[2];
      const t = elementType(element);
      if (items.length < 15) w.byte((items.length << 4) | t);
      else {
        w.byte(0xf0 | t);
        w.varint(items.length);
      }
      for (const item of items) {
        if (element === 'i32') zigzag(w, /** @type {number} */ (item));
        else if (element === 'binary') binary(w, /** @type {Uint8Array | string} */ (item));
        else writeStruct(w, /** @type {Field[]} */ (item));
      }
    }
  }
  w.byte(0);
}

/** A struct's bytes. @param {Field[]} fields */
export function structBytes(fields) {
  const w = new ByteWriter(64);
  writeStruct(w, fields);
  return w.result();
}
