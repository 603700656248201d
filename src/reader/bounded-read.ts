import { ObjectTooLargeError } from './read-limits.js';

/**
 * Every chunk of a download, refused (ObjectTooLargeError for maxObjectBytes) as soon as it
 * passes `maxBytes`, so a body larger than its listing or Content-Length said never fills
 * memory. With the size known up front, the chunks go straight into one buffer of that size.
 */
export async function readAtMost(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  expectedBytes?: number,
): Promise<Uint8Array> {
  if (expectedBytes !== undefined && expectedBytes > maxBytes) {
    throw new ObjectTooLargeError('maxObjectBytes', maxBytes, expectedBytes);
  }
  const parts: Uint8Array[] = [];
  let into: Uint8Array | undefined;
  let first = true;
  let total = 0;
  for await (const chunk of body) {
    if (total + chunk.length > maxBytes) {
      throw new ObjectTooLargeError('maxObjectBytes', maxBytes);
    }
    if (first && expectedBytes !== undefined) {
      // The whole body in its first chunk (a local file read at its size) is kept, not copied.
      into = chunk.length === expectedBytes ? chunk : Buffer.allocUnsafe(expectedBytes);
    }
    first = false;
    if (into !== undefined && into !== chunk && total + chunk.length <= into.length) {
      into.set(chunk, total);
    } else if (into !== chunk) {
      // More than announced (and still within the limit): collect the rest as it comes.
      if (into !== undefined) parts.push(into.subarray(0, total));
      into = undefined;
      parts.push(chunk);
    }
    total += chunk.length;
  }
  if (into !== undefined) return into.subarray(0, total);
  return parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts, total);
}

/** The range as asked for, or an error saying the object is shorter than listed. */
export function exactly(bytes: Uint8Array, start: number, end: number): Uint8Array {
  if (bytes.length !== end - start) {
    throw new Error(
      `asked for bytes ${start}-${end - 1}, got ${bytes.length}: the object changed since it was listed`,
    );
  }
  return bytes;
}
