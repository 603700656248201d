/**
 * Where each zstd frame of a stream ends, read from the frame and block headers (RFC 8878,
 * sections 3.1.1 and 3.1.2) without decoding anything. Node 22's zstdDecompressSync returns what
 * it decoded from a truncated frame as if the frame were whole (no error): this is how the
 * reader tells a cut-off object from a good one on every runtime.
 */

const FRAME_MAGIC = 0xfd2fb528;
/** Skippable frames: magic 0x184D2A50 to 0x184D2A5F, then a 4-byte length. */
const SKIPPABLE = 0x184d2a50;

/** The offset just past the frame that starts at `at`; throws if the data ends before it does. */
export function zstdFrameEnd(bytes: Uint8Array, at: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (end: number) => {
    if (end > bytes.length) throw new Error('truncated zstd frame (unexpected end of data)');
  };
  need(at + 4);
  const magic = view.getUint32(at, true);
  if ((magic & 0xfffffff0) === SKIPPABLE) {
    need(at + 8);
    const end = at + 8 + view.getUint32(at + 4, true);
    need(end);
    return end;
  }
  if (magic !== FRAME_MAGIC) throw new Error('not a zstd frame (bad magic number)');
  need(at + 5);
  const descriptor = bytes[at + 4] as number;
  const contentSizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const checksum = (descriptor >> 2) & 1;
  const dictionaryIdFlag = descriptor & 3;
  const DICTIONARY_ID_BYTES = [0, 1, 2, 4] as const;
  const CONTENT_SIZE_BYTES = [1, 2, 4, 8] as const;
  const headerBytes =
    1 +
    (singleSegment ? 0 : 1) +
    (DICTIONARY_ID_BYTES[dictionaryIdFlag as 0 | 1 | 2 | 3] ?? 0) +
    (contentSizeFlag === 0
      ? singleSegment
      : (CONTENT_SIZE_BYTES[contentSizeFlag as 0 | 1 | 2 | 3] ?? 0));
  let pos = at + 4 + headerBytes;
  for (;;) {
    need(pos + 3);
    const header =
      (bytes[pos] as number) |
      ((bytes[pos + 1] as number) << 8) |
      ((bytes[pos + 2] as number) << 16);
    const last = header & 1;
    const type = (header >> 1) & 3;
    const size = header >> 3;
    if (type === 3) throw new Error('invalid zstd block (reserved type)');
    // An RLE block stores its one byte once, whatever the size it stands for.
    pos += 3 + (type === 1 ? 1 : size);
    need(pos);
    if (last) break;
  }
  const end = pos + (checksum ? 4 : 0);
  need(end);
  return end;
}
