import { uuidv7 } from 'uuidv7';
import type { BatchContents } from '../body/index.js';
import type { SealedContents } from './open-batch.js';

/**
 * Where a sealed batch is on its way to S3. Only the batch moves itself between them, through
 * the transitions below; each one names the state it starts from and does nothing (returns
 * false) when the batch has moved on meanwhile, e.g. was dropped while an await was pending.
 *
 *   unprepared ─► preparing ─► queued ─► uploading ─► settled
 *                                 ▲          │
 *                                 └─ backing-off ◄┘
 *   queued | backing-off ─► paged-out ─► paging-in ─► queued       (spool only)
 *
 * `unprepared`: records in memory, waiting for the compression worker. `preparing`: the body is
 * being made and, with a spool, written to disk. `paged-out`: durable on disk only, its bytes
 * released from memory under pressure; `paging-in`: being read back.
 */
export type BatchState =
  | 'unprepared'
  | 'preparing'
  | 'queued'
  | 'uploading'
  | 'backing-off'
  | 'paged-out'
  | 'paging-in'
  | 'settled';

/** How a batch's journey ended. `left-in-spool`: not stored, but on disk for the next run. */
export type BatchOutcome = 'uploaded' | 'dropped' | 'left-in-spool';

/** What making the body decided: the bytes to upload, their name and their checksums. */
export interface BatchBody {
  key: string;
  contentType: string;
  body: Buffer;
  /** Hex SHA-256 of the body for SigV4, computed off the event loop (undefined: the SDK hashes). */
  sha256: string | undefined;
  /** Base64 CRC32 of the body, when the client sends checksums. */
  crc32: string | undefined;
}

/** What a durable copy of a batch records beside its body: enough to upload it after a restart. */
export interface BatchRecord {
  /** The object key, fixed at seal: a replay uploads under it, so it never duplicates. */
  key: string;
  contentType: string;
  /** Items (data points, spans, log records) in the batch. */
  points: number;
  rawBytes: number;
  /** Seal time, ms since the epoch. */
  sealedAt: number;
  /**
   * The journal chain that held the batch's exports while it was open (src/spool/journal.ts),
   * as a list: a restart that finds this file deletes them instead of replaying them. Absent in
   * files of earlier versions and of batches no journal held.
   */
  journal?: string[];
}

/** A batch that is durably on disk. */
export interface DurableCopy {
  /** The copy's name in its store; names sort by write time. */
  readonly name: string;
  /** Bytes the copy takes on disk. */
  readonly fileBytes: number;
  readonly meta: BatchRecord;
}

/** States whose bytes are idle: the batch may be dropped or paged out to make room. */
const IDLE: ReadonlySet<BatchState> = new Set(['unprepared', 'queued', 'backing-off']);

/**
 * The kinds of record a journal chain holds: OTLP/JSON (format 'otlp-json') or OTLP/protobuf
 * ('otlp-proto', and Parquet's). A replayed batch is stored as the kind its chain holds.
 */
export type JournalRecordFormat = 'otlp-json' | 'otlp-proto';

/** A sealed batch on its way to S3: one object's worth of records, then its body. */
export class SealedBatch {
  static #sequence = 0;
  /** Numbers batches in log lines, in seal (or restore) order. */
  readonly seq = ++SealedBatch.#sequence;
  /** Seal time; it places the object in its time partition (partitionTime 'upload'). */
  readonly sealedAt: Date;
  /** The object's UUIDv7, made at seal time so its timestamp is the seal time too. */
  readonly id: string;
  readonly points: number;
  /** Uncompressed size of the object. */
  readonly rawBytes: number;
  /** Values of the key template's resource-attribute tokens. */
  readonly attributes: Readonly<Record<string, string>>;
  /** Oldest data point end time (partitionTime 'data'). */
  readonly dataTimeMillis: number | undefined;
  /** True for a batch read back from the spool after a restart. */
  readonly restored: boolean;
  readonly settled: Promise<BatchOutcome>;
  #state: BatchState;
  #key = '';
  #contentType = '';
  #sha256: string | undefined;
  #crc32: string | undefined;
  #spool: DurableCopy | undefined;
  #journal: string | undefined;
  /** A batch replayed from the journal: the kind of record its chain holds (what it is stored as). */
  #recordFormat: JournalRecordFormat | undefined;
  #attempts = 0;
  #firstAttemptAt = 0;
  #blocked = false;
  /** An attempt got no answer (a timeout, a connection lost): its write may have landed. */
  #unanswered = false;
  #contents: BatchContents | undefined;
  /**
   * Its records are still in the compressor's stream (a frame not yet ended). They are freed only
   * once compressed, whatever becomes of the batch: the stream is shared with the batches after
   * it, so dropping the batch would release its bytes from the count but not from memory.
   */
  #compressing = false;
  #body: Buffer | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  /** When the retry of a batch backing off is due (performance.now() time). */
  #retryAt = 0;
  #inFlight: AbortController | undefined;
  #resolve!: (outcome: BatchOutcome) => void;

  private constructor(init: {
    sealedAt: Date;
    id: string;
    points: number;
    rawBytes: number;
    attributes: Readonly<Record<string, string>>;
    dataTimeMillis: number | undefined;
    contents: BatchContents | undefined;
    state: BatchState;
    restored: boolean;
  }) {
    this.sealedAt = init.sealedAt;
    this.id = init.id;
    this.points = init.points;
    this.rawBytes = init.rawBytes;
    this.attributes = init.attributes;
    this.dataTimeMillis = init.dataTimeMillis;
    this.restored = init.restored;
    this.#contents = init.contents;
    this.#state = init.state;
    const frame = init.contents?.frame;
    if (frame !== undefined) {
      this.#compressing = true;
      const ended = () => {
        this.#compressing = false;
      };
      frame.then(ended, ended);
    }
    this.settled = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  /** A batch sealed now from the open batch's contents. */
  static seal(contents: SealedContents): SealedBatch {
    return new SealedBatch({
      sealedAt: new Date(),
      id: uuidv7(),
      points: contents.points,
      rawBytes: contents.rawBytes,
      attributes: contents.attributes,
      dataTimeMillis: contents.dataTimeMillis,
      contents: contents.contents,
      state: 'unprepared',
      restored: false,
    });
  }

  /**
   * A batch an earlier run left in its journal, open or sealed (src/spool/journal.ts): its
   * records, with the seal the journal holds, so its key is the one it had or would have had.
   */
  static replayed(init: {
    id: string;
    sealedAt: Date;
    points: number;
    rawBytes: number;
    attributes: Readonly<Record<string, string>>;
    dataTimeMillis: number | undefined;
    records: Buffer[];
    /** The kind of record the chain holds, which may not be this run's. */
    recordFormat: JournalRecordFormat;
    chain: string;
  }): SealedBatch {
    const batch = new SealedBatch({
      ...init,
      contents: { records: init.records },
      state: 'unprepared',
      restored: true,
    });
    batch.#journal = init.chain;
    batch.#recordFormat = init.recordFormat;
    return batch;
  }

  /** A batch an earlier run left in the spool: named, on disk only, its bytes not in memory. */
  static restore(entry: DurableCopy): SealedBatch {
    const m = entry.meta;
    const batch = new SealedBatch({
      sealedAt: new Date(m.sealedAt),
      id: '',
      points: m.points,
      rawBytes: m.rawBytes,
      attributes: {},
      dataTimeMillis: undefined,
      contents: undefined,
      state: 'paged-out',
      restored: true,
    });
    batch.#key = m.key;
    batch.#contentType = m.contentType;
    batch.#spool = entry;
    return batch;
  }

  get state(): BatchState {
    return this.#state;
  }

  /** The object key: fixed once, before the first attempt, and reused by every retry. */
  get key(): string {
    return this.#key;
  }

  get contentType(): string {
    return this.#contentType;
  }

  /** Hex SHA-256 of the body for SigV4 (undefined: the SDK hashes). */
  get sha256(): string | undefined {
    return this.#sha256;
  }

  /** Base64 CRC32 of the body, when the client sends checksums. */
  get crc32(): string | undefined {
    return this.#crc32;
  }

  /** The durable copy in the spool, if any. */
  get spool(): DurableCopy | undefined {
    return this.#spool;
  }

  /** The journal chain that holds the batch's exports until it is durable or stored. */
  /** A batch replayed from the journal: the kind of record its chain holds. */
  get recordFormat(): JournalRecordFormat | undefined {
    return this.#recordFormat;
  }

  get journal(): string | undefined {
    return this.#journal;
  }

  /** Sealed from an open batch the journal held in `chain`. */
  journaled(chain: string): void {
    this.#journal ??= chain;
  }

  /** Upload attempts started so far. */
  get attempts(): number {
    return this.#attempts;
  }

  /** The last attempt failed on a fault only an operator can fix (waiting will not help). */
  get blocked(): boolean {
    return this.#blocked;
  }

  /** The bytes to upload, while they are in memory. */
  get body(): Buffer | undefined {
    return this.#body;
  }

  /** An attempt failed with no answer (its write may have landed). */
  markUnanswered(): void {
    this.#unanswered = true;
  }

  /**
   * S3 may hold the object although no attempt was answered: one got no answer, or one is in
   * flight now (a batch given up now was perhaps stored by it). An attempt whose answer is in
   * hand is over (uploadEnded), even while that answer is being acted on.
   */
  get mayBeStored(): boolean {
    return this.#unanswered || this.#inFlight !== undefined;
  }

  /** Droppable for room: in an idle state, and holding nothing that dropping it would not free. */
  get isIdle(): boolean {
    return IDLE.has(this.#state) && !this.#compressing;
  }

  get isSettled(): boolean {
    return this.#state === 'settled';
  }

  /** unprepared → preparing: hands the records or columns over (the body maker's from now on). */
  startPreparing(): BatchContents | undefined {
    const contents = this.#contents;
    if (!this.#move('unprepared', 'preparing') || contents === undefined) return undefined;
    this.#contents = undefined;
    return contents;
  }

  /** Still preparing: takes the body and its name. False if the batch moved on meanwhile. */
  bodyMade(made: BatchBody): boolean {
    if (this.#state !== 'preparing') return false;
    this.#key = made.key;
    this.#contentType = made.contentType;
    this.#body = made.body;
    this.#sha256 = made.sha256;
    this.#crc32 = made.crc32;
    return true;
  }

  /**
   * Its body is durable in the spool as `entry`. Only for a batch whose body is in memory and
   * which has not settled: the file of a settled batch would replay one already counted.
   */
  spooled(entry: DurableCopy): boolean {
    if (this.#state === 'settled' || this.#body === undefined) return false;
    this.#spool = entry;
    return true;
  }

  /**
   * Its spool file is being deleted or quarantined: forgets it and returns it (undefined if it
   * had none). Refused while paged out, where the file is the only copy: drop the batch first.
   */
  unspool(): DurableCopy | undefined {
    if (this.#state === 'paged-out') return undefined;
    const entry = this.#spool;
    this.#spool = undefined;
    return entry;
  }

  /** preparing | backing-off | paging-in → queued: ready for an upload slot. */
  queue(): boolean {
    if (this.#state === 'backing-off') this.#clearRetry();
    return this.#move(['preparing', 'backing-off', 'paging-in'], 'queued');
  }

  /** queued → uploading: `controller` aborts the request if the batch is dropped meanwhile. */
  startUpload(controller: AbortController): boolean {
    if (!this.#move('queued', 'uploading')) return false;
    this.#retryAt = 0;
    this.#attempts++;
    this.#blocked = false;
    if (this.#firstAttemptAt === 0) this.#firstAttemptAt = performance.now();
    this.#inFlight = controller;
    return true;
  }

  /** Milliseconds since its first attempt started: the upload latency, once it is stored. */
  sinceFirstAttempt(): number {
    return this.#firstAttemptAt === 0 ? 0 : performance.now() - this.#firstAttemptAt;
  }

  /** The request of this attempt is over, whatever its answer. */
  uploadEnded(controller: AbortController): void {
    if (this.#inFlight === controller) this.#inFlight = undefined;
  }

  /**
   * uploading → backing-off: `retry` runs after `delayMillis` unless the batch moves on first.
   * Also paging-in → backing-off: read back before the end of a wait it must keep.
   */
  backOff(delayMillis: number, retry: () => void): boolean {
    if (!this.#move(['uploading', 'paging-in'], 'backing-off')) return false;
    this.#armRetry(delayMillis, retry);
    return true;
  }

  /** Still backing off: `retry` runs after `delayMillis` instead, when that is sooner. */
  retrySooner(delayMillis: number, retry: () => void): boolean {
    if (this.#state !== 'backing-off' || performance.now() + delayMillis >= this.#retryAt)
      return false;
    this.#clearRetry();
    this.#armRetry(delayMillis, retry);
    return true;
  }

  #armRetry(delayMillis: number, retry: () => void): void {
    this.#retryAt = performance.now() + delayMillis;
    // Unref'd: a batch waiting to retry never keeps the process alive on its own.
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#state === 'backing-off') retry();
    }, delayMillis);
    this.#retryTimer.unref();
  }

  /**
   * When its next attempt is due (performance.now() time) after its last failure, while it waits
   * for it: backing off, or paged out meanwhile (a page-out stops the timer, not the wait).
   */
  get retryAt(): number | undefined {
    const waiting =
      this.#state === 'backing-off' || this.#state === 'paged-out' || this.#state === 'paging-in';
    return waiting && this.#retryAt > 0 ? this.#retryAt : undefined;
  }

  /**
   * Still backing off: its last attempt hit a fault only an operator can fix, so waiting for
   * it is pointless (flush and shutdown stop waiting). The next attempt clears it.
   */
  markBlocked(): boolean {
    if (this.#state !== 'backing-off') return false;
    this.#blocked = true;
    return true;
  }

  /** queued | backing-off → paged-out: only for a batch on disk; releases its bytes. */
  pageOut(): boolean {
    if (this.#spool === undefined || (this.#state !== 'queued' && this.#state !== 'backing-off'))
      return false;
    this.#clearRetry();
    this.#state = 'paged-out';
    this.#body = undefined;
    return true;
  }

  /** paged-out → paging-in: being read back from disk. */
  startPageIn(): boolean {
    return this.#move('paged-out', 'paging-in');
  }

  /** paging-in → paged-out: the read failed but may work later. */
  pageInFailed(): boolean {
    return this.#move('paging-in', 'paged-out');
  }

  /** Still paging in: takes the bytes read back. */
  pagedIn(body: Buffer): boolean {
    if (this.#state !== 'paging-in') return false;
    this.#body = body;
    return true;
  }

  /**
   * Ends the journey from any state: stops a pending retry, aborts a request in flight, and
   * releases the bytes. False if it had already ended.
   */
  settle(outcome: BatchOutcome, abortReason?: unknown): boolean {
    if (this.#state === 'settled') return false;
    this.#state = 'settled';
    this.#clearRetry();
    this.#inFlight?.abort(abortReason);
    this.#inFlight = undefined;
    this.#contents = undefined;
    this.#body = undefined;
    this.#resolve(outcome);
    return true;
  }

  #clearRetry(): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  #move(from: BatchState | readonly BatchState[], to: BatchState): boolean {
    const ok = typeof from === 'string' ? this.#state === from : from.includes(this.#state);
    if (ok) this.#state = to;
    return ok;
  }
}
