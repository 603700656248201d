import type { Compression } from '../layout/formats.js';
import { TableFileWriter } from '../parquet/file-writer.js';
import type { CompactionRows, InputPart, RunBuilders } from './signal-rows.js';
import { chunkRowsFor, mergeRuns, Spill } from './spill.js';

/**
 * One output file, one sorted run whatever its size: inputs go into the signal's column
 * builders (signal-rows.ts); when they hold a run's worth (`flushRun`), the run is sorted in the
 * signal's compaction order and spilled to local disk (spill.ts). At the end the runs are merged
 * into the file's row groups, batch after batch, each batch written by the shared Parquet writer
 * with the signal's table in the compaction order; a file that took one run is written from memory
 * without a spill (the last run is spilled only when more rows come), and so is a file of two
 * runs whose rows together are no more than one merged batch (`runBytes` of copied rows): the
 * first run stays in memory while the second is small, and both are copied into one batch. The file's bytes grow in one buffer reserved at the expected size
 * (pages it never reaches cost no memory), and are uploaded from it without a copy.
 */
export interface OutputFile {
  /** Appends a part's data points (all or none); returns how many. */
  add(part: InputPart): number;
  /** Rows added so far, written or not. */
  readonly rows: number;
  /** Memory the builders hold now (their real size, capacity included). */
  readonly bufferedBytes: number;
  /** Rows not in the file's bytes yet (in the builders or spilled). */
  readonly bufferedRows: number;
  /** Bytes of the file so far (its header until it is finished). */
  readonly encodedBytes: number;
  /** Ends a run: what the builders hold is sealed, and spilled to disk (sorted) when more rows come. */
  flushRun(): Promise<void>;
  /**
   * Bytes a row of the run just ended takes as a file of its own (written and thrown away);
   * undefined when there is none.
   */
  measureRun(): Promise<number | undefined>;
  /** Merges the runs into the file and writes the footer; the file's bytes. */
  finish(keyValues: { key: string; value: string }[]): Promise<Uint8Array>;
  /** Deletes the spilled runs of a file that will not be finished. */
  discard(): void;
}

export interface OutputFileOptions {
  compression: Compression;
  /** Compresses one page (createPageCompressor's, one per merge); not called for 'none'. */
  compressPage: (page: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  /** The file's expected size, to reserve (not touch) its buffer. */
  expectedBytes: number;
  /** Memory of one batch of the merge (the builders' bound for a run). */
  runBytes: number;
}

export function createOutputFile<S extends { readonly rows: number }, K>(
  rows: CompactionRows<S, K>,
  options: OutputFileOptions,
): OutputFile {
  const writer = new TableFileWriter(rows.table, {
    ...rows.writerOptions,
    compression: options.compression,
    compressPage: options.compressPage,
    capacity: options.expectedBytes,
  });
  // With row groups smaller than a batch, the table plans each row group's dictionaries of its
  // own rows (ParquetTable.planGroup): a row group never carries every value of the batch.
  const writeBatch = (s: S): Promise<void> => writer.writeRun(s);
  // The column builders: none while empty, so that a spilled run's memory is given back.
  let builders: RunBuilders<S> | undefined;
  const spill = new Spill(rows, chunkRowsFor(options.runBytes, rows.copiedRowBytes));
  const sealed = () => {
    const s = (builders ?? rows.builders()).seal();
    builders = undefined;
    return s;
  };

  // The last run sealed, spilled only when more rows come: a file whose rows were one run when
  // it is finished (a single large input, say) is written without a spill.
  let pending: S | undefined;
  const spillPending = () => {
    if (pending !== undefined) spill.add(pending);
    pending = undefined;
  };

  const flushRun = async (): Promise<void> => {
    if (builders !== undefined && builders.rows > 0) {
      spillPending();
      pending = sealed();
    }
  };

  /** Two sealed runs as one batch: joined where the signal can, else copied row by row. */
  const oneBatch = (first: S, last: S, heldRows: number): S => {
    if (rows.joined !== undefined) return rows.joined(first, last);
    const both = rows.copier(heldRows);
    both.add(first, 0, first.rows);
    both.forget(first);
    both.add(last, 0, last.rows);
    both.forget(last);
    return both.seal();
  };

  return {
    add(part) {
      // The first run stays in memory while it and the rows after it are no more than one
      // merged batch (see finish): an hour a little over one run is not spilled.
      const rowsThen = (pending?.rows ?? 0) + (builders?.rows ?? 0) + part.points;
      if (spill.runs.length > 0 || rowsThen * rows.copiedRowBytes > options.runBytes) {
        spillPending();
      }
      builders ??= rows.builders();
      const mark = builders.mark();
      try {
        return builders.add(part);
      } catch (error) {
        builders.rollback(mark);
        throw error;
      }
    },
    get rows() {
      return writer.rows + this.bufferedRows;
    },
    get bufferedRows() {
      return spill.rows + (pending?.rows ?? 0) + (builders?.rows ?? 0);
    },
    get bufferedBytes() {
      return builders?.bytes ?? 0;
    },
    get encodedBytes() {
      return writer.bytes;
    },
    flushRun,
    async measureRun() {
      if (pending === undefined || pending.rows === 0) return undefined;
      const alone = new TableFileWriter(rows.table, {
        ...rows.writerOptions,
        compression: options.compression,
        compressPage: options.compressPage,
      });
      await alone.writeRun(pending); // leaves the run as it is
      return alone.finish().length / pending.rows;
    },
    async finish(keyValues) {
      try {
        const held = builders !== undefined && builders.rows > 0;
        const heldRows = (pending?.rows ?? 0) + (held ? (builders?.rows ?? 0) : 0);
        if (spill.runs.length === 0 && !(pending !== undefined && held)) {
          const only = pending ?? (held ? sealed() : undefined);
          pending = undefined;
          if (only !== undefined) await writeBatch(only);
        } else if (
          spill.runs.length === 0 &&
          pending !== undefined &&
          heldRows * rows.copiedRowBytes <= options.runBytes
        ) {
          // Two runs, both in memory, whose rows together are no more than one merged batch:
          // one batch (the writer sorts a batch itself), not spilled and merged.
          // Nothing holds the two runs while their batch is written.
          const both = oneBatch(pending, sealed(), heldRows);
          pending = undefined;
          await writeBatch(both);
        } else {
          spillPending();
          if (held) spill.add(sealed());
          await mergeRuns(rows, spill.runs, options.runBytes, writeBatch);
        }
      } finally {
        spill.remove();
        pending = undefined;
        builders = undefined;
      }
      return writer.finish(keyValues);
    },
    discard: () => spill.remove(),
  };
}
