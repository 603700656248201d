import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { crc32, crc32Text } from '../compression/checksums.js';

/** Bytes copied and hashed per turn of the event loop: well under a millisecond of work. */
const SLICE_BYTES = 512 * 1024;

/**
 * The body of compression 'none': the parts joined into one Buffer, with its SHA-256 and CRC32
 * computed on the way, a slice per turn of the event loop. There is nothing to compress off the
 * thread, and one 16 MiB copy plus its hash in a single turn would stall the loop for
 * milliseconds; in slices, each turn stays short.
 */
export async function uncompressedBody(
  parts: readonly Uint8Array[],
  want: { sha256: boolean; crc32: boolean },
): Promise<{ body: Buffer; sha256: string | undefined; crc32: string | undefined }> {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const body = Buffer.allocUnsafeSlow(total);
  const hash = want.sha256 ? createHash('sha256') : undefined;
  let crc = 0;
  let at = 0;
  let sinceTurn = 0;
  for (const part of parts) {
    for (let from = 0; from < part.length; from += SLICE_BYTES) {
      const slice = part.subarray(from, from + SLICE_BYTES);
      body.set(slice, at);
      at += slice.length;
      hash?.update(slice);
      if (want.crc32) crc = crc32(slice, crc);
      sinceTurn += slice.length;
      if (sinceTurn >= SLICE_BYTES) {
        sinceTurn = 0;
        await nextTurn();
      }
    }
  }
  return {
    body,
    sha256: hash?.digest('hex'),
    crc32: want.crc32 ? crc32Text(crc) : undefined,
  };
}
