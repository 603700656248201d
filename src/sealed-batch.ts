import { uuidv7 } from 'uuidv7';
import type { SpoolEntry } from './spool/spool.js';

/**
 * sealed → compressing → queued → uploading → (waiting → queued → uploading)* → settled.
 * Only `sealed` (waiting for the compression worker), `queued` and `waiting` batches may be
 * dropped or paged out to make room: their bytes are idle. With a spool, `compressing` includes
 * the durable write, and a batch whose bytes were released from memory is `spooled` (on disk
 * only) until it is `loading` back.
 */
export type BatchState =
  | 'sealed'
  | 'compressing'
  | 'queued'
  | 'uploading'
  | 'waiting'
  | 'spooled'
  | 'loading'
  | 'settled';
/** `spooled`: not uploaded, but durably on disk for the next run (shutdown with a spool). */
export type BatchOutcome = 'uploaded' | 'dropped' | 'spooled';

/** A sealed batch on its way to S3. */
export class SealedBatch {
  readonly seq: number;
  /** Seal time; it places the object in its time partition. */
  readonly sealedAt: Date;
  /** The object's UUIDv7, made at seal time so its timestamp is the seal time too. */
  readonly id = uuidv7();
  readonly points: number;
  /** Uncompressed size of the object. */
  readonly rawBytes: number;
  /** The records until they are assembled into one body. */
  records: Buffer[] | undefined;
  /** Fixed once, before the first attempt, and reused by every retry. */
  key = '';
  contentType = '';
  /** The bytes to upload: assembled, then compressed. Released when the batch settles. */
  body: Buffer | undefined;
  /** Hex SHA-256 of the body for SigV4, computed off the event loop (undefined: the SDK hashes). */
  sha256: string | undefined;
  /** Base64 CRC32 of the body, when the client sends checksums. */
  crc32: string | undefined;
  /** Bytes this batch counts toward maxBufferedBytes. */
  heldBytes: number;
  state: BatchState = 'sealed';
  attempts = 0;
  /** performance.now() of the first attempt, for the upload latency. */
  firstAttemptAt = 0;
  retryTimer: NodeJS.Timeout | undefined;
  inFlight: AbortController | undefined;
  /** The durable copy in the spool, if any. */
  spool: SpoolEntry | undefined;
  /** True for a batch read back from the spool after a restart. */
  restored = false;
  /** Values of the key template's resource-attribute tokens. */
  attributes: Readonly<Record<string, string>> = {};
  /** Oldest data point end time (partitionTime 'data'). */
  dataTimeMillis: number | undefined;
  readonly settled: Promise<BatchOutcome>;
  #resolve!: (outcome: BatchOutcome) => void;

  constructor(
    seq: number,
    sealedAt: Date,
    records: Buffer[] | undefined,
    rawBytes: number,
    points: number,
  ) {
    this.seq = seq;
    this.sealedAt = sealedAt;
    this.records = records;
    this.rawBytes = rawBytes;
    this.heldBytes = rawBytes;
    this.points = points;
    this.settled = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  get isDroppable(): boolean {
    return this.state === 'sealed' || this.state === 'queued' || this.state === 'waiting';
  }

  settle(outcome: BatchOutcome): void {
    if (this.state === 'settled') return;
    this.state = 'settled';
    this.records = undefined;
    this.body = undefined;
    this.#resolve(outcome);
  }
}

/**
 * Sealed batches not yet settled, oldest first, and the bytes they hold: the one place that
 * accounts for memory beyond the open batch.
 */
export class PendingBatches implements Iterable<SealedBatch> {
  readonly #batches = new Set<SealedBatch>();
  #bytes = 0;

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#batches.size;
  }

  add(batch: SealedBatch): void {
    this.#batches.add(batch);
    this.#bytes += batch.heldBytes;
  }

  /** Updates what a batch holds, e.g. after compression. */
  resize(batch: SealedBatch, heldBytes: number): void {
    if (!this.#batches.has(batch)) return;
    this.#bytes += heldBytes - batch.heldBytes;
    batch.heldBytes = heldBytes;
  }

  delete(batch: SealedBatch): void {
    if (this.#batches.delete(batch)) this.#bytes -= batch.heldBytes;
  }

  /** The oldest batch whose bytes are idle (and that passes `also`, if given). */
  oldestDroppable(also?: (batch: SealedBatch) => boolean): SealedBatch | undefined {
    for (const batch of this.#batches)
      if (batch.isDroppable && (also === undefined || also(batch))) return batch;
    return undefined;
  }

  [Symbol.iterator](): Iterator<SealedBatch> {
    return this.#batches.values();
  }
}
