/** Why data was given up; counted in stats().pointsDroppedByReason. */
export type DropReason =
  | 'buffer-full'
  | 'shutdown'
  | 'rejected'
  | 'internal-error'
  | 'spool-full'
  | 'spool-corrupt';

/** A snapshot of what the exporter did; every drop and failure is counted here. */
export interface ExporterStats {
  /** export() calls answered SUCCESS (data accepted into the buffer). */
  exportsAccepted: number;
  /** export() calls answered FAILED (after shutdown, or data that cannot fit the memory bound). */
  exportsRejected: number;
  batchesSealed: number;
  batchesUploaded: number;
  /** Bytes stored in S3 (after compression). */
  bytesUploaded: number;
  /** Uncompressed bytes of the uploaded objects. */
  rawBytesUploaded: number;
  pointsUploaded: number;
  uploadAttempts: number;
  retries: number;
  /** Failed attempts by reason (`network`, `timeout`, `throttled`, `server`, `access-denied`, ...). */
  uploadFailures: Record<string, number>;
  /** Sealed batches lost for good (a rejected export drops points but no batch). */
  batchesDropped: number;
  /** Data points lost for good: in dropped batches and in rejected exports. */
  pointsDropped: number;
  /** Uncompressed bytes lost for good (the measure of rawBytesUploaded). */
  rawBytesDropped: number;
  /**
   * pointsDropped by reason: `buffer-full`, `shutdown`, `rejected` (by S3), `internal-error`,
   * `spool-full` (evicted from a full spool while only on disk), `spool-corrupt` (a spool file
   * that failed its checksum, a spool file or journal chain of an earlier run quarantined: the
   * items its metadata or readable records give, where they can be trusted).
   */
  pointsDroppedByReason: Partial<Record<DropReason, number>>;
  /**
   * Of pointsDropped, the items of batches given up (at the memory bound, at the shutdown
   * deadline) after an attempt that got no answer (a timeout, a connection lost) or while one
   * was in flight: that attempt may have stored the object, so S3 may hold them (once, never
   * twice). The items lost for certain are pointsDropped minus these.
   */
  pointsDroppedMaybeStored: number;
  /** Bytes held now: open batch, sealed, compressing, uploading and waiting to retry. */
  bufferedBytes: number;
  /** The most bytes ever held at once; never above maxBufferedBytes. */
  peakBufferedBytes: number;
  /** Sealed batches not yet stored or dropped. */
  pendingBatches: number;
  /** Time from a batch's first attempt to S3's acknowledgement, over uploaded batches. */
  uploadLatency: UploadLatency;
  /** The disk spool, when spoolDir is set. */
  spool: SpoolStats | undefined;
}

/**
 * Where the spool is. `opening`: the first try to take the directory is running. `waiting-for-lock`:
 * another process holds its lock. `unavailable`: it cannot be opened now (an errno error, or the
 * disk did not answer within spoolTimeoutMillis). In these three, batches stay in memory and the
 * directory is tried again every second. `active`: ours, batches are written ahead. `closed`: after
 * shutdown.
 */
export type SpoolState = 'opening' | 'waiting-for-lock' | 'unavailable' | 'active' | 'closed';

export interface SpoolStats {
  state: SpoolState;
  /** Batch files on disk now, and their bytes. */
  files: number;
  bytes: number;
  /** Batches written durably (write, fsync, rename, directory fsync). */
  written: number;
  /**
   * Writes that did not become durable, by errno code (EIO, ENOSPC, ...), `timeout` (abandoned
   * past the disk deadline), `stalled` (not tried while an earlier write hangs), or not tried:
   * `larger-than-spool` (a file over maxSpoolBytes), `no-room` (nothing could be evicted); the
   * batch stayed in memory and went to S3 from there.
   */
  writeFailures: Record<string, number>;
  /**
   * Reads that failed and will be tried again (EMFILE, EIO, EACCES, `timeout` past the disk
   * deadline, `stalled` while an earlier operation hangs), by code; the file stays on disk.
   */
  readFailures: Record<string, number>;
  /** Torn or corrupt files, and journal chains, moved to quarantine/. */
  quarantined: number;
  /** Files and journal chains of another signal's exporter in this spool: left alone, never used. */
  foreign: number;
  /** Files larger than maxBufferedBytes: left on disk, never read back. */
  oversized: number;
  /** Batches restored from an earlier run and then stored in S3. */
  replayed: number;
  /** Batches left on disk at shutdown, for the next run. */
  leftAtShutdown: number;
  /** Files evicted to stay under maxSpoolBytes (the batch is lost if it was only on disk). */
  evicted: number;
  /** Group fsyncs of the open batch's journal (about one per journalSyncMillis while exporting). */
  journalSyncs: number;
  /**
   * Journal writes that did not become durable, by errno code, `timeout`, `stalled`, `memory`
   * (a chain given up: more than maxBatchBytes waited for a disk that did not take it) or `copy`
   * (an export's copy for the journal could not be made: the open batch is no longer journaled).
   */
  journalWriteFailures: Record<string, number>;
  /** Batches replayed from the journal an earlier run left (its open or unsaved batches). */
  journalReplayed: number;
  /**
   * Journal chains (one per batch) found damaged at a replay: corruption before entries that are
   * intact, a damaged header length, or records missing between others. Not a torn tail (the
   * last interval a crash cut short). What was readable was replayed, the rest is lost.
   */
  journalDamaged: number;
}

export function emptySpoolStats(): SpoolStats {
  return {
    state: 'opening',
    files: 0,
    bytes: 0,
    written: 0,
    writeFailures: {},
    readFailures: {},
    quarantined: 0,
    foreign: 0,
    oversized: 0,
    replayed: 0,
    leftAtShutdown: 0,
    evicted: 0,
    journalSyncs: 0,
    journalWriteFailures: {},
    journalReplayed: 0,
    journalDamaged: 0,
  };
}

export interface UploadLatency {
  count: number;
  totalMillis: number;
  maxMillis: number;
  lastMillis: number | undefined;
}

export function emptyStats(): ExporterStats {
  return {
    exportsAccepted: 0,
    exportsRejected: 0,
    batchesSealed: 0,
    batchesUploaded: 0,
    bytesUploaded: 0,
    rawBytesUploaded: 0,
    pointsUploaded: 0,
    uploadAttempts: 0,
    retries: 0,
    uploadFailures: {},
    batchesDropped: 0,
    pointsDropped: 0,
    rawBytesDropped: 0,
    pointsDroppedByReason: {},
    pointsDroppedMaybeStored: 0,
    bufferedBytes: 0,
    peakBufferedBytes: 0,
    pendingBatches: 0,
    uploadLatency: { count: 0, totalMillis: 0, maxMillis: 0, lastMillis: undefined },
    spool: undefined,
  };
}

export function increment<K extends string>(
  counts: Partial<Record<K, number>>,
  key: K,
  by = 1,
): void {
  counts[key] = (counts[key] ?? 0) + by;
}
