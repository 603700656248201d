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
const SMALL_OUTPUT = 128 * 1024;
/** A buffer kept between small outputs is at most this large. */
const MAX_RETAINED_CAPACITY = 4 * 1024 * 1024;

const handedOver = new WeakSet<ArrayBuffer>();

/**
 * Frees the records of a batch whose body is made: those handed over by an encoder and not
 * moved to a worker (a transferred ArrayBuffer is empty here). A record that is a copy, or a
 * view on memory that is not ours, is left to the collector. The caller guarantees that
 * nothing reads them any more. They are not pooled for later exports: a pool keeps up to a
 * batch of records allocated while the open batch is still small, and glibc reuses memory freed
 * at once for the next exports anyway. Side by side at 2,000 series, a pool of 8 MiB held
 * 4.5 MiB more of the main heap (bench/results/2026-12-02-steady-decomposition.md).
 */
export function releaseRecords(records: readonly Uint8Array[]): void {
  for (const record of records) {
    const buffer = record.buffer;
    if (!(buffer instanceof ArrayBuffer) || !handedOver.has(buffer)) continue;
    handedOver.delete(buffer);
    release(buffer);
  }
}

/**
 * Frees an ArrayBuffer's memory now (ArrayBuffer.prototype.transfer, Node ≥ 22; elsewhere it
 * waits for the garbage collector as before), for a buffer of ours that nothing reads any more.
 * Megabytes left for a collection stay in the RSS until then, and count as V8's external memory,
 * which makes it run full collections more often (at 100,000 series, a 60 MiB output per export).
 * What still refers to it sees an empty, detached buffer, never freed memory.
 */
export function release(buffer: ArrayBufferLike): void {
  if (buffer.byteLength === 0 || !(buffer instanceof ArrayBuffer)) return;
  (buffer as { transfer?: (length: number) => ArrayBuffer }).transfer?.(0);
}

/** What an encoder's finish() does with the buffer it wrote an export into. */
export interface TakenOutput {
  /** The export: the buffer itself (handed over) or an exact copy of its bytes. */
  record: Buffer;
  /**
   * Capacity for the writer's next buffer, allocated at the next output's first write (the
   * output was large: this buffer is given up); undefined: the writer keeps its buffer.
   */
  nextCapacity: number | undefined;
}

/** The record for the `used` bytes an encoder wrote into `buf`, which starts its ArrayBuffer. */
export function takeOutput(buf: Uint8Array, used: number, initialCapacity: number): TakenOutput {
  // The next output, probably about this size, gets room to be a little larger.
  const sized = () => Math.max(initialCapacity, Math.ceil(used * (1 + HANDOVER_SLACK / 2)));
  if (used > SMALL_OUTPUT && buf.length - used <= used * HANDOVER_SLACK) {
    handedOver.add(buf.buffer as ArrayBuffer);
    return { record: Buffer.from(buf.buffer, 0, used), nextCapacity: sized() };
  }
  const record = Buffer.allocUnsafeSlow(used);
  record.set(buf.subarray(0, used));
  const keep = used <= SMALL_OUTPUT && buf.length <= MAX_RETAINED_CAPACITY;
  if (!keep) release(buf.buffer); // the writer gives it up, and nobody else has it
  return { record, nextCapacity: keep ? undefined : sized() };
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
