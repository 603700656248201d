import PQueue from 'p-queue';
import { log } from '../base/log.js';
import { type BodyMaker, BodyMakerError, type PreparedBody } from '../body/index.js';
import { releaseRecords } from '../encoding/handed-over.js';
import type { RecordFormat } from '../encoding/records.js';
import { type KeyTemplate, uuidv7Millis } from '../layout/key-template.js';
import { describeError } from '../s3/errors.js';
import type { TransferableColumns } from '../signals/signal.js';
import type { MemoryBudget } from './budget.js';
import type { JournalRecordFormat } from './journal-port.js';
import type { SealedBatch } from './sealed-batch.js';
import type { Uploader } from './uploader.js';

/** The write-ahead copy: a sealed batch made durable before its first upload. */
export interface WriteAhead {
  persist(batch: SealedBatch): Promise<void>;
}

export interface PreparationParts {
  /** How the records join, for the fallback body made here (OTLP/JSON for Parquet's columns). */
  records: Pick<RecordFormat<unknown>, 'framing' | 'assemble'>;
  /** Sealed columns as the signal's OTLP/JSON records, for their fallback body. */
  columnsAsRecords(columns: TransferableColumns): Promise<Buffer[]>;
  /** The object's name suffix and content type, for the body the worker makes ... */
  name: { extension: string; contentType: string };
  /** ... and for the records stored as they are when the worker cannot make it. */
  fallback: { extension: string; contentType: string };
  bodies: BodyMaker;
  /**
   * The body is made from columns (Parquet): a batch of records there (replayed from the journal)
   * is stored as those records, uncompressed.
   */
  columns: boolean;
  /**
   * A batch replayed from the journal is stored as the kind of record its chain holds, which may
   * not be this run's (the format changed between runs): how those records are framed and
   * joined, the object's name (compressed as this run's, or as they are in a column run), and
   * the fallback's name.
   */
  replayed: Readonly<
    Record<
      JournalRecordFormat,
      {
        records: Pick<RecordFormat<unknown>, 'framing' | 'assemble'>;
        name: { extension: string; contentType: string };
        fallback: { extension: string; contentType: string };
      }
    >
  >;
  keys: KeyTemplate;
  /** Send a CRC32 we computed off the event loop, where our own client would compute one. */
  sendCrc32: boolean;
  budget: MemoryBudget;
  uploader: Uploader;
  /** The write-ahead copy (the spool), if there is one. */
  spool: WriteAhead | undefined;
}

/**
 * Turns a sealed batch into an upload: its body made off the event loop (framing, compression,
 * checksums), its key fixed, and with a spool its write-ahead copy on disk; then it is queued.
 * One batch at a time: the ones waiting stay `unprepared`, droppable under memory pressure,
 * instead of piling up in the worker out of reach.
 */
export class Preparation {
  readonly #parts: PreparationParts;
  readonly #queue = new PQueue({ concurrency: 1 });

  constructor(parts: PreparationParts) {
    this.#parts = parts;
  }

  /** Queues a batch; resolves once it is prepared (on disk, with a spool) or dropped. */
  add(batch: SealedBatch): Promise<void> {
    return this.#queue
      .add(() => this.#prepare(batch))
      .catch((error: unknown) => this.#parts.budget.drop(batch, 'internal-error', error));
  }

  async #prepare(batch: SealedBatch): Promise<void> {
    const p = this.#parts;
    const contents = batch.startPreparing();
    if (contents === undefined) return; // dropped while it waited
    let made: PreparedBody;
    // A replayed batch's records are its chain's kind, this run's or not.
    const replayed = batch.recordFormat === undefined ? undefined : p.replayed[batch.recordFormat];
    const records = replayed?.records ?? p.records;
    let name = replayed?.name ?? p.name;
    if (p.columns && contents.records !== undefined) {
      made = asRecords(records, contents.records);
    } else {
      try {
        made = await p.bodies.make({
          ...contents,
          framing: records.framing,
          sha256: true,
          crc32: p.sendCrc32,
        });
        // The body is made (a copy, compressed or joined; records sent to a worker are moved):
        // the records' memory is freed now, not at a collection.
        if (contents.records !== undefined) releaseRecords(contents.records);
      } catch (error) {
        if (batch.state !== 'preparing') return; // dropped at shutdown while compressing
        if (!(error instanceof BodyMakerError) || error.contents === undefined) throw error;
        // Never lose a batch to the body maker: store its points as OTLP records, uncompressed.
        name = replayed?.fallback ?? p.fallback;
        log.error(
          `${describeError(error)}; uploading batch ${batch.seq} as its records, uncompressed (${name.extension})`,
        );
        made = asRecords(
          records,
          error.contents.records ?? (await p.columnsAsRecords(error.contents.columns)),
        );
      }
    }
    // The object's time is its UUIDv7's (a replayed seal may stamp sealedAt a millisecond
    // after it). A reader selects by it and stops listing past the partition of a range's end:
    // a partition later than it would hide the object from every range that holds it.
    const idMillis = uuidv7Millis(batch.id);
    const sealed = Number.isFinite(idMillis)
      ? new Date(Math.min(idMillis, batch.sealedAt.getTime()))
      : batch.sealedAt;
    // Set only with partitionTime 'data'; a data time the layout cannot file (see
    // KeyTemplate.fileable), or one after the seal (a producer's clock ahead), falls back to
    // the seal time.
    const dataTime =
      batch.dataTimeMillis === undefined ? undefined : new Date(batch.dataTimeMillis);
    const key = p.keys.render({
      time:
        dataTime !== undefined && p.keys.fileable(dataTime) && dataTime <= sealed
          ? dataTime
          : sealed,
      attributes: batch.attributes,
      extension: name.extension,
      id: batch.id,
    });
    const contentType = name.contentType;
    if (!batch.bodyMade({ key, contentType, ...made })) return;
    // A body larger than what was counted (the records of a fallback) is held only with room.
    if (!p.budget.grow(batch, made.body.length)) {
      p.budget.drop(batch, 'buffer-full');
      return;
    }
    // Write-ahead: durable before the first attempt, so a crash cannot lose a sealed batch.
    if (p.spool !== undefined) await p.spool.persist(batch);
    // A replayed batch admitted without room is paged out instead (or, not on disk, dropped if
    // room cannot be made): the budget decides.
    if (batch.queue() && p.budget.place(batch)) p.uploader.submit(batch);
  }
}

/** A body of the records as they are, uncompressed (the fallback's, or a replayed batch's). */
function asRecords(
  format: Pick<RecordFormat<unknown>, 'assemble'>,
  records: Buffer[],
): PreparedBody {
  const recordBytes = records.reduce((n, r) => n + r.length, 0);
  return { body: format.assemble(records, recordBytes), sha256: undefined, crc32: undefined };
}
