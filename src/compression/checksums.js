// @ts-check
// The checksums an S3 request needs of a body: the SHA-256 that SigV4 signs (so the SDK does not
// hash on the event loop) and the CRC32 that S3 checks when the client sends one. Plain
// JavaScript: the exporter's thread and the body worker both use it.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

/** @typedef {(data: Uint8Array, value?: number) => number} Crc32 */

/** Hex SHA-256 of `body`, computed on libuv's pool (Web Crypto), not on the calling thread. */
export async function sha256Hex(/** @type {Uint8Array} */ body) {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', body);
  return Buffer.from(digest).toString('hex');
}

/**
 * The SHA-256 and CRC32 of a body whose bytes come in pieces (a frame's output chunks, as node:zlib
 * hands them over): each `update()` hashes one piece where it is, with no copy, so the work is
 * spread over the turns that bring the pieces instead of falling on the turn that ends the body.
 * `finish()` gives both as the S3 request wants them; nothing may be added after it.
 * @returns {{ update: (piece: Uint8Array) => void, finish: () => { sha256: string, crc32: string } }}
 */
export function runningChecksums() {
  const hash = createHash('sha256');
  let crc = 0;
  return {
    update(piece) {
      hash.update(piece);
      crc = crc32(piece, crc);
    },
    finish: () => ({ sha256: hash.digest('hex'), crc32: crc32Text(crc) }),
  };
}

/** @type {Crc32 | undefined} */
let crc32Function;

/** CRC32 (IEEE) of `data`, continuing from `value` (the CRC32 of what came before it). */
export function crc32(/** @type {Uint8Array} */ data, value = 0) {
  crc32Function ??= crc32Implementation();
  return crc32Function(data, value) >>> 0;
}

/** A CRC32 as S3 wants it: big-endian, base64. */
export function crc32Text(/** @type {number} */ value) {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0);
  return out.toString('base64');
}

/** CRC32 of a body as S3 wants it. Cheap on a compressed body. */
export function crc32Base64(/** @type {Uint8Array} */ body) {
  return crc32Text(crc32(body));
}

/** node:zlib's crc32 (Node ≥ 20.15), else the @node-rs/crc32 addon (loaded only then). @returns {Crc32} */
function crc32Implementation() {
  const builtIn = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (zlib)).crc32;
  if (typeof builtIn === 'function') return /** @type {Crc32} */ (builtIn);
  /** @type {{ crc32(data: Buffer, value?: number): number }} */
  const addon = createRequire(import.meta.url)('@node-rs/crc32');
  return (data, value) =>
    addon.crc32(Buffer.from(data.buffer, data.byteOffset, data.byteLength), value);
}
