import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import type { Compression } from '../layout/formats.js';
import { TableFileWriter } from '../parquet/file-writer.js';
import { MetricColumnBuilders } from '../signals/metrics/parquet/column-builders.js';
import { METRICS_TABLE } from '../signals/metrics/parquet/file-writer.js';
import { plan } from '../signals/metrics/parquet/plan.js';
import type { SealedColumns } from '../signals/metrics/parquet/sealed.js';
import { compactionOrder } from './sort-order.js';
import { chunkRowsFor, mergeRuns, Spill } from './spill.js';

/**
 * One output file, one sorted run whatever its size: requests go into the Parquet format's
 * column builders; when they hold a run's worth (`flushRun`), the run is sorted in the
 * compaction order (sort-order.ts) and spilled to local disk (spill.ts). At the end the runs
 * are merged into the file's row groups, batch after batch, each batch written by the metrics'
 * Parquet writer with the compaction order; a file that took one run is written from the
 * builders without a spill. The file's bytes grow in one buffer reserved at the expected size
 * (pages it never reaches cost no memory), and are uploaded from it without a copy.
 */
export interface OutputFile {
  /** Appends a request's data points; returns how many. */
  add(request: OtlpObject): number;
  /** Rows added so far, written or not. */
  readonly rows: number;
  /** Memory the builders hold now (their real size, capacity included). */
  readonly bufferedBytes: number;
  /** Rows not in the file's bytes yet (in the builders or spilled). */
  readonly bufferedRows: number;
  /** Bytes of the file so far (its header until it is finished). */
  readonly encodedBytes: number;
  /** Sorts what the builders hold and spills it to disk as a run. */
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
  let builders = new MetricColumnBuilders();
  const spill = new Spill(chunkRowsFor(options.runBytes));

  const flushRun = async (): Promise<void> => {
    if (builders.rows > 0) spill.add(builders.seal());
  };

  return {
    add: (request) => builders.appendRequest(request),
    get rows() {
      return writer.rows + spill.rows + builders.rows;
    },
    get bufferedRows() {
      return spill.rows + builders.rows;
    },
    get bufferedBytes() {
      return builders.bytes;
    },
    get encodedBytes() {
      return writer.bytes;
    },
    flushRun,
    async finish(keyValues) {
      try {
        if (spill.runs.length === 0) {
          if (builders.rows > 0) await writer.writeRun(builders.seal());
        } else {
          await flushRun();
          await mergeRuns(spill.runs, options.runBytes, (batch) => writer.writeRun(batch));
        }
      } finally {
        spill.remove();
        builders = new MetricColumnBuilders();
      }
      return writer.finish(keyValues);
    },
    discard: () => spill.remove(),
  };
}
