// @ts-check
// The checksums an S3 request needs of a body: the SHA-256 that SigV4 signs (so the SDK does not
// hash on the event loop) and the CRC32 that S3 checks when the client sends one. Plain
// JavaScript: the exporter's thread and the body worker both use it.
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

/** @typedef {(data: Uint8Array, value?: number) => number} Crc32 */

/** Hex SHA-256 of `body`, computed on libuv's pool (Web Crypto), not on the calling thread. */
export async function sha256Hex(/** @type {Uint8Array} */ body) {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', body);
  return Buffer.from(digest).toString('hex');
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
