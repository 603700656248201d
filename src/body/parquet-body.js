// @ts-check
// A batch's sealed columns as one Parquet file of its signal's schema, its pages compressed with
// the codec of the exporter's compression. Two makers of the same file: parquetMaker, in the body
// worker (the columns arrive by transfer), and slicedParquetMaker, on the exporter's own thread
// in short turns (the event loop runs between them) with its pages compressed on libuv's pool.
// Loaded by bodies.js (in the worker) and thread-body-maker.ts only for a Parquet format;
// nothing here parses JSON.
import { createPageCompressor, poolPageCompressor } from '../compression/compressors.js';

/**
 * @typedef {{
 *   table: import('../parquet/file-writer.js').ParquetTable<any, any>,
 *   Writer: typeof import('../parquet/file-writer.js').TableFileWriter,
 * }} ParquetTableWriter
 */

/**
 * Each signal's table and the shared writer, for slicedParquetMaker: loaded at the first export
 * (load()), or else when the first file is made.
 * @type {Record<import('../signals/signal.js').SignalName, () => Promise<ParquetTableWriter>>}
 */
const TABLES = {
  metrics: async () => ({
    table: (await import('../signals/metrics/parquet/file-writer.js')).METRICS_TABLE,
    Writer: (await import('../parquet/file-writer.js')).TableFileWriter,
  }),
  traces: async () => ({
    table: (await import('../signals/flat-parquet/table.js')).flatTable(
      (await import('../signals/traces/parquet-schema.js')).SPANS,
    ),
    Writer: (await import('../parquet/file-writer.js')).TableFileWriter,
  }),
  logs: async () => ({
    table: (await import('../signals/flat-parquet/table.js')).flatTable(
      (await import('../signals/logs/parquet-schema.js')).LOG_RECORDS,
    ),
    Writer: (await import('../parquet/file-writer.js')).TableFileWriter,
  }),
};

/** @param {import('./bodies.js').BodyOptions} o */
function tableOf(o) {
  if (o.signal === undefined) throw new Error('a Parquet body needs its signal');
  return TABLES[o.signal]();
}

/**
 * Each signal's encoder of sealed columns, for the worker, loaded when its first file is made.
 * @type {Record<import('../signals/signal.js').SignalName,
 *   () => Promise<(columns: any, options: import('../parquet/file-writer.js').EncodeOptions) => Promise<Uint8Array>>>}
 */
const ENCODERS = {
  metrics: async () => (await import('../signals/metrics/parquet/encode.js')).encodeParquet,
  traces: async () =>
    (await import('../signals/flat-parquet/table.js')).flatEncoder(
      (await import('../signals/traces/parquet-schema.js')).SPANS,
    ),
  logs: async () =>
    (await import('../signals/flat-parquet/table.js')).flatEncoder(
      (await import('../signals/logs/parquet-schema.js')).LOG_RECORDS,
    ),
};

/** The maker of the body worker. @param {import('./bodies.js').BodyOptions} o @returns {import('./bodies.js').ColumnBodies} */
export function parquetMaker(o) {
  const compression = o.compression;
  const pages = createPageCompressor({ compression, level: o.level, engine: o.zstdEngine });
  if (o.signal === undefined) throw new Error('a Parquet body needs its signal');
  const encoder = ENCODERS[o.signal]();
  return {
    make: async (batch) =>
      (await encoder)(batch.columns, { compression, compressPage: pages.compressPage }),
    close: pages.close,
  };
}

/**
 * The longest the sliced writer runs before it lets the event loop run (plus the step it is in:
 * a pass over a few thousand rows, a leaf's page of a row group). Section 5 of bench/parquet.ts
 * holds the longest stall of a 16 MiB batch's flush to 5 ms of this thread's CPU.
 */
export const SLICE_MILLIS = 0.5;

/**
 * The time-keeping of one sliced encode: pause() tells the writer to go on, or gives a promise
 * that resolves once the event loop has run (setImmediate: after the I/O that came meanwhile);
 * restart() marks a turn that began elsewhere (a page's frame back from the pool). Once
 * `stopped()` says so, pause() throws: the encode is abandoned at its next step.
 * @param {number} millis @param {() => boolean} stopped
 */
export function turns(millis, stopped) {
  let start = performance.now();
  /** @param {() => void} resolve */
  const resume = (resolve) =>
    setImmediate(() => {
      start = performance.now();
      resolve();
    });
  let count = 0;
  return {
    /** @returns {Promise<void> | undefined} */
    pause() {
      if (stopped()) throw new Error('the exporter is shut down');
      const spent = performance.now() - start;
      if (spent < millis) return undefined;
      count++;
      return new Promise(resume);
    },
    restart() {
      start = performance.now();
    },
    /** How many times the writer let the event loop run. */
    get pauses() {
      return count;
    },
  };
}

/**
 * Parquet files made on this thread (the exporter's) in slices of SLICE_MILLIS, the same bytes
 * as parquetMaker's: the writer's steps run until a slice is spent, then the event loop runs;
 * each page is compressed on libuv's pool. No worker thread: its isolate, heap and modules
 * (about 21 MB, docs/performance.md) are not paid. Undefined where pages cannot be compressed on
 * the pool (zstd through zstd-napi): there the worker makes the file, as it does for the signals
 * whose writer has no steps (body-maker.ts slicedSignal).
 *
 * The file's buffer starts at the size the last file's bytes per row predict for this batch,
 * so it is seldom copied as it grows, and it is the body as it is (no copy) unless it has more
 * than an eighth of room to spare.
 * @param {import('./bodies.js').BodyOptions} o
 * @param {() => boolean} stopped true once the maker is closed: a running encode stops
 * @param {number} [sliceMillis]
 * @returns {(import('./bodies.js').ColumnBodies & {
 *   load: () => Promise<unknown>,
 *   lastPauses: () => number,
 * }) | undefined}
 */
export function slicedParquetMaker(o, stopped, sliceMillis = SLICE_MILLIS) {
  const compression = o.compression;
  const pages = poolPageCompressor({ compression, level: o.level, engine: o.zstdEngine });
  if (pages === undefined) return undefined;
  /** @type {Promise<ParquetTableWriter> | undefined} */
  let loaded;
  const load = () => {
    loaded ??= tableOf(o);
    return loaded;
  };
  let bytesPerRow = 0;
  let lastPauses = 0;
  return {
    load,
    lastPauses: () => lastPauses,
    make: async (batch) => {
      const { table, Writer } = await load();
      const slices = turns(sliceMillis, stopped);
      const rows = /** @type {{ rows: number }} */ (/** @type {unknown} */ (batch.columns)).rows;
      const writer = new Writer(table, {
        compression,
        compressPage: (page) =>
          Promise.resolve(pages.compressPage(page)).then((frame) => {
            slices.restart();
            return frame;
          }),
        pause: slices.pause,
        capacity: bytesPerRow > 0 ? Math.ceil(rows * bytesPerRow * 1.125) + 4096 : undefined,
      });
      await writer.writeRun(batch.columns);
      const wait = slices.pause(); // the footer and the file's copy in a turn of their own
      if (wait !== undefined) await wait;
      const file = writer.finish();
      lastPauses = slices.pauses;
      if (rows > 0) bytesPerRow = file.length / rows;
      return file.buffer.byteLength - file.length <= file.length / 8 ? file : file.slice();
    },
    close: pages.close,
  };
}
