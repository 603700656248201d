/**
 * Encoder output buffers. An encoder writes one export into a buffer sized from its previous
 * output (exports of one service are about the same size from one collection to the next) and,
 * when little of it is unused, hands that buffer over as the record instead of copying the bytes
 * out: no growing copies, no final copy. Such a record is a view on part of an ArrayBuffer that
 * nobody else uses; remembering those lets the compression worker take one by transfer, where
 * any other partial view (a slice of Node's shared pool, say) must be copied first.
 */

/** At most this share of a handed-over buffer is unused: a record's memory stays within 1/32 of the bytes it counts. */
const HANDOVER_SLACK = 1 / 32;
/** Outputs up to this size are copied out of one kept buffer: cheap, and no buffer per record. */
export const SMALL_OUTPUT = 128 * 1024;

const handedOver = new WeakSet<ArrayBuffer>();

/** True if a buffer of `capacity` holding `used` bytes may be handed over as the record. */
export function mayHandOver(capacity: number, used: number): boolean {
  return used > SMALL_OUTPUT && capacity - used <= used * HANDOVER_SLACK;
}

/** Capacity for the next output after one of `used` bytes: room for it to be a little larger. */
export function nextCapacity(used: number, minimum: number): number {
  return Math.max(minimum, Math.ceil(used * (1 + HANDOVER_SLACK / 2)));
}

export function handOver<T extends Uint8Array>(view: T): T {
  handedOver.add(view.buffer as ArrayBuffer);
  return view;
}

/** True if `data` may be transferred by transferring its whole ArrayBuffer. */
export function ownsItsArrayBuffer(data: Uint8Array): boolean {
  const buffer = data.buffer;
  return (
    buffer instanceof ArrayBuffer &&
    data.byteOffset === 0 &&
    (data.byteLength === buffer.byteLength || handedOver.has(buffer))
  );
}
