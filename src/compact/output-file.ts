import type { Compression } from '../layout/formats.js';
import { TableFileWriter } from '../parquet/file-writer.js';
import { appendRequest } from '../signals/metrics/parquet/append-otlp.js';
import { ColumnStore } from '../signals/metrics/parquet/column-store.js';
import { METRICS_TABLE } from '../signals/metrics/parquet/file-writer.js';
import { plan } from '../signals/metrics/parquet/plan.js';
import type { SealedColumns } from '../signals/metrics/parquet/sealed.js';
import { appendColumns } from './append-columns.js';
import type { InputPart } from './inputs.js';
import { compactionOrder } from './sort-order.js';
import { chunkRowsFor, mergeRuns, Spill } from './spill.js';

/**
 * One output file, one sorted run whatever its size: requests go into the Parquet format's
 * column builders; when they hold a run's worth (`flushRun`), the run is sorted in the
 * compaction order (sort-order.ts) and spilled to local disk (spill.ts). At the end the runs
 * are merged into the file's row groups, batch after batch, each batch written by the metrics'
 * Parquet writer with the compaction order; a file that took one run is written from memory
 * without a spill (the last run is spilled only when more rows come). The file's bytes grow in one buffer reserved at the expected size
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

/** The metrics' table, its rows in the compaction order (the exporter's files keep theirs). */
export const COMPACTION_TABLE = {
  ...METRICS_TABLE,
  plan: (s: SealedColumns) => ({ ...plan(s), order: compactionOrder(s) }),
};

export function createOutputFile(options: OutputFileOptions): OutputFile {
  const writer = new TableFileWriter(COMPACTION_TABLE, {
    compression: options.compression,
    compressPage: options.compressPage,
    capacity: options.expectedBytes,
  });
  // The column builders: none while empty, so that a spilled run's memory is given back.
  let builders: ColumnStore | undefined;
  const spill = new Spill(chunkRowsFor(options.runBytes));
  const sealed = () => {
    const s = (builders ?? new ColumnStore()).seal();
    builders = undefined;
    return s;
  };

  // The last run sealed, spilled only when more rows come: a file whose rows were one run when
  // it is finished (a single large input, say) is written without a spill.
  let pending: SealedColumns | undefined;
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

  return {
    add(part) {
      spillPending();
      builders ??= new ColumnStore();
      const mark = builders.mark();
      try {
        return 'columns' in part
          ? appendColumns(builders, part.columns)
          : appendRequest(builders, part.request);
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
    async finish(keyValues) {
      try {
        const held = builders !== undefined && builders.rows > 0;
        if (spill.runs.length === 0 && !(pending !== undefined && held)) {
          const only = pending ?? (held ? sealed() : undefined);
          pending = undefined;
          if (only !== undefined) await writer.writeRun(only);
        } else {
          spillPending();
          if (held) spill.add(sealed());
          await mergeRuns(spill.runs, options.runBytes, (batch) => writer.writeRun(batch));
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
