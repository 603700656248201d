import { parquetMetadata } from 'hyparquet';
import { describe, expect, test } from 'vitest';
import { readColumns, readRows } from '../../../src/parquet/read.js';
import { decompress } from '../../../src/reader/decompress.js';
import { decodeStoredObjectAsync } from '../../../src/reader.js';
import {
  dataPage,
  ENCODING,
  hostileFile,
  PAGE,
  page,
  varint,
} from '../../support/hostile-parquet.js';

/**
 * Thrift's compact protocol writes an empty struct in one byte, and hyparquet builds every
 * struct and list of a footer or a page header as a JavaScript object or array before anything
 * checks them: a 16 MiB footer of empty structs cost 1 GB of heap. A read builds at most one
 * per 16 bytes of maxDecompressedBytes, as for OTLP/JSON and protobuf.
 */
const key =
  'p/year=2026/month=03/day=04/hour=05/metrics_01a2463b-2889-70bc-9d34-4132b13f1e00.parquet';
const limit = 1024 * 1024;

/** A file of nothing but a footer: field 1 of FileMetaData a list of `count` empty structs. */
function emptyStructsFooter(count: number): Uint8Array {
  const footer = Uint8Array.from([0x19, 0xfc, ...varint(count), ...new Uint8Array(count), 0]);
  const file = new Uint8Array(4 + footer.length + 8);
  file.set(Buffer.from('PAR1'));
  file.set(footer, 4);
  new DataView(file.buffer).setUint32(4 + footer.length, footer.length, true);
  file.set(Buffer.from('PAR1'), 4 + footer.length + 4);
  return file;
}

describe('a Thrift bomb of empty structs is refused before it is built', () => {
  test('a footer: refused, naming why', async () => {
    const file = emptyStructsFooter(limit - 64);
    await expect(
      decodeStoredObjectAsync(key, file, { maxDecompressedBytes: limit }),
    ).rejects.toThrow(/more than 65536 Thrift structs and lists, the most a read builds/);
  });

  test('a page header: refused both ways, naming why', async () => {
    // A data page of one value whose header carries an unknown field: a list of empty structs.
    const header = {
      field_1: PAGE.DATA_PAGE,
      field_5: {
        field_1: 1,
        field_2: ENCODING.PLAIN,
        field_3: ENCODING.RLE,
        field_4: ENCODING.RLE,
      },
      field_9: Array.from({ length: 100_000 }, () => ({})),
    };
    const file = hostileFile({
      type: 'INT32',
      repetition: 'REQUIRED',
      rows: 1,
      pages: [page(header, [1, 0, 0, 0])],
      version: 'hostile',
    });
    const metadata = parquetMetadata(file.buffer.slice(file.byteOffset) as ArrayBuffer);
    const decompression = { decompress, maxDecompressedBytes: limit };
    const message = /more than 65536 Thrift structs and lists, the most a read builds/;
    await expect(
      readRows(
        { file: file.buffer.slice(file.byteOffset) as ArrayBuffer, metadata },
        decompression,
      ),
    ).rejects.toThrow(message);
    expect(() =>
      readColumns(
        { metadata, group: 0, rows: 1, bytes: file.subarray(4, file.length), start: 4 },
        decompression,
      ),
    ).toThrow(message);
  });

  test('a footer whose list claims more elements than bytes are left: refused before its array is made', async () => {
    const file = emptyStructsFooter(1000).subarray(0, 4 + 3 + 10);
    const footer = file.subarray(4);
    const cut = new Uint8Array(4 + footer.length + 8);
    cut.set(Buffer.from('PAR1'));
    cut.set(footer, 4);
    new DataView(cut.buffer).setUint32(4 + footer.length, footer.length, true);
    cut.set(Buffer.from('PAR1'), 4 + footer.length + 4);
    await expect(
      decodeStoredObjectAsync(key, cut, { maxDecompressedBytes: limit }),
    ).rejects.toThrow(/a Parquet footer with a Thrift list of 1000 elements in 9 bytes/);
  });

  test('a footer of structs nested 10,000 deep: refused, naming why', async () => {
    const depth = 10_000;
    const footer = Uint8Array.from([...Array(depth).fill(0x1c), ...Array(depth + 1).fill(0)]);
    const file = new Uint8Array(4 + footer.length + 8);
    file.set(Buffer.from('PAR1'));
    file.set(footer, 4);
    new DataView(file.buffer).setUint32(4 + footer.length, footer.length, true);
    file.set(Buffer.from('PAR1'), 4 + footer.length + 4);
    await expect(decodeStoredObjectAsync(key, file)).rejects.toThrow(
      /a Parquet footer of Thrift structs and lists nested more than 64 deep/,
    );
  });

  test('a page header of a few structs is read', async () => {
    const file = hostileFile({
      type: 'INT32',
      repetition: 'REQUIRED',
      rows: 1,
      pages: [dataPage(1, ENCODING.PLAIN, [7, 0, 0, 0])],
      version: 'hostile',
    });
    const metadata = parquetMetadata(file.buffer.slice(file.byteOffset) as ArrayBuffer);
    const { rows } = await readRows(
      { file: file.buffer.slice(file.byteOffset) as ArrayBuffer, metadata },
      { decompress, maxDecompressedBytes: limit },
    );
    expect(rows).toEqual([{ c: 7 }]);
  });
});
