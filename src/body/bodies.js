// @ts-check
// The bodies that can be made of a batch's records, one per kind of format (the `body` of a
// format's row in src/layout/formats.ts): framed records compressed as a whole (on the exporter's
// thread or in the worker), or a Parquet file that compresses its pages itself (in the worker).
// Plain JavaScript, like body-worker.js.
import { partsCompressor, recordWindowLog } from '../compression/compressors.js';

/** @typedef {{ head: string, separator: string, tail: string } | null} Framing */
/** @typedef {{ records: Uint8Array[], framing: Framing }} Batch */
/** @typedef {{ columns: import('../signals/signal.js').TransferableColumns }} ColumnsBatch */
/**
 * An object whose records are compressed as they are appended: `append()` hands a record over
 * (`consumed` is called when the compressor no longer reads it), `end()` gives the body.
 * @typedef {{
 *   append: (record: Uint8Array, consumed?: () => void) => void,
 *   end: () => Promise<Uint8Array>,
 * }} RecordFrame
 */
/**
 * Makes bodies, one batch at a time; `close()` frees its compression context. `open`, where
 * the compressor can take an object part by part (zstd on node:zlib), starts an object whose
 * records are compressed as they come, the first of them `firstRecordBytes` long (it sizes
 * zstd's window: recordWindowLog); `observe` sees its compressed bytes as they arrive.
 * @typedef {{
 *   make: (batch: Batch) => Uint8Array | Promise<Uint8Array>,
 *   close: () => void,
 *   open?: ((framing: Framing, firstRecordBytes: number, observe?: (chunk: Uint8Array) => void) => RecordFrame) | undefined,
 * }} Bodies
 */
/**
 * Makes Parquet files of sealed columns, one batch at a time.
 * @typedef {{ make: (batch: ColumnsBatch) => Promise<Uint8Array>, close: () => void }} ColumnBodies
 */
/**
 * @typedef {{
 *   body: 'framed' | 'parquet',
 *   signal?: import('../signals/signal.js').SignalName | undefined,
 *   compression: import('../layout/formats.js').Compression,
 *   level: number,
 *   zstdEngine: import('../compression/zstd-engine.js').ZstdEngine | undefined,
 * }} BodyOptions
 */

/**
 * The body maker for these options. The Parquet writer loads only here, and only for a Parquet
 * format: nothing else of the exporter imports it.
 * @param {BodyOptions} options @returns {Promise<Bodies | ColumnBodies>}
 */
export async function bodyMaker(options) {
  if (options.body === 'framed') return framedMaker(options);
  const { parquetMaker } = await import('./parquet-body.js');
  return parquetMaker(options);
}

/**
 * Where an object's framing text goes: `before(i)` ahead of record i, `closing(count)` after the
 * last record (the head too when there was none). The one rule for a batch's parts and for a
 * frame written as records come; each text is one Buffer, reused for every record.
 * @param {NonNullable<Framing>} framing
 */
function framer(framing) {
  const head = Buffer.from(framing.head);
  const separator = Buffer.from(framing.separator);
  const tail = Buffer.from(framing.tail);
  return {
    before: (/** @type {number} */ i) => (i === 0 ? head : separator),
    closing: (/** @type {number} */ count) => (count === 0 ? [head, tail] : [tail]),
  };
}

/** The object's parts in order: framing text and records (records are not copied). @param {Batch} batch */
export function parts(batch) {
  if (batch.framing === null) return batch.records;
  const f = framer(batch.framing);
  /** @type {Uint8Array[]} */
  const out = [];
  batch.records.forEach((record, i) => {
    out.push(f.before(i), record);
  });
  out.push(...f.closing(batch.records.length));
  return out;
}

/**
 * One request of framed records, compressed as a whole: `.json.zst`, `.binpb.gz`, ...
 * `recordsRepeat`: each export repeats the last one's items (recordWindowLog).
 * @param {Pick<BodyOptions, 'compression' | 'level' | 'zstdEngine'> & { recordsRepeat?: boolean | undefined }} o
 * @returns {Bodies}
 */
export function framedMaker(o) {
  const compressor = partsCompressor({
    compression: o.compression,
    level: o.level,
    engine: o.zstdEngine,
  });
  const frames = 'open' in compressor ? compressor : undefined;
  /** The window of a frame whose first record is this long: the same for a batch made whole. */
  const windowLog = (/** @type {number} */ firstRecordBytes) =>
    recordWindowLog(firstRecordBytes, o.recordsRepeat === true);
  return {
    make: (batch) =>
      frames === undefined
        ? compressor.compress(parts(batch))
        : frames.compress(parts(batch), windowLog(batch.records[0]?.length ?? 0)),
    close: compressor.close,
    open:
      frames &&
      ((framing, firstRecordBytes, observe) =>
        recordFrame(frames.open(observe, windowLog(firstRecordBytes)), framing)),
  };
}

/**
 * Records written into a frame as they come, with the framing text `parts()` puts around and
 * between them (`framer()`).
 * @param {import('../compression/compressors.js').FrameWriter} frame @param {Framing} framing
 * @returns {RecordFrame}
 */
function recordFrame(frame, framing) {
  const f = framing === null ? undefined : framer(framing);
  let count = 0;
  return {
    append(record, consumed) {
      if (f !== undefined) frame.write(f.before(count));
      count++;
      frame.write(record, consumed);
    },
    end() {
      for (const text of f?.closing(count) ?? []) frame.write(text);
      return frame.end();
    },
  };
}
