// @ts-check
// The checksums an S3 request needs of a body: the SHA-256 that SigV4 signs (so the SDK does not
// hash on the event loop) and the CRC32 that S3 checks when the client sends one. Plain
// JavaScript: the exporter's thread and the body worker both use it.
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

/** Hex SHA-256 of `body`, computed on libuv's pool (Web Crypto), not on the calling thread. */
export async function sha256Hex(/** @type {Uint8Array} */ body) {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', body);
  return Buffer.from(digest).toString('hex');
}

/** @type {((data: Uint8Array) => number) | undefined} */
let crc32Function;

/** CRC32 (IEEE) as S3 wants it: big-endian, base64. Cheap on a compressed body. */
export function crc32Base64(/** @type {Uint8Array} */ body) {
  crc32Function ??= crc32Implementation();
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32Function(body) >>> 0);
  return out.toString('base64');
}

/** node:zlib's crc32 (Node ≥ 20.15), else the @node-rs/crc32 addon (loaded only then). */
function crc32Implementation() {
  const builtIn = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (zlib)).crc32;
  if (typeof builtIn === 'function') return /** @type {(data: Uint8Array) => number} */ (builtIn);
  /** @type {{ crc32(data: Buffer): number }} */
  const addon = createRequire(import.meta.url)('@node-rs/crc32');
  return (/** @type {Uint8Array} */ data) =>
    addon.crc32(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}
