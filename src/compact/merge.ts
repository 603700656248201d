import { createPageCompressor } from '../compression/compressors.js';
import { requireZstdEngine } from '../compression/zstd-engine.js';
import { COMPRESSION_ROWS, type Compression } from '../layout/formats.js';
import { encodeReplaces, REPLACES_KEY, replacedKeys } from '../reader/compacted.js';
import type { ListedObject } from '../reader/replaced-inputs.js';
import { InputError, type InputReader } from './inputs.js';
import { createOutputFile, type OutputFile } from './output-file.js';
import { FULL_OUTPUT_FRACTION, type OutputInfo } from './plan.js';
import { type AnyCompactionRows, DamagedPartError } from './signal-rows.js';

/**
 * Reads a partition's inputs into output files. A file is cut only between inputs, so every
 * file holds all the points of each input it lists, and replaces them on its own: a run that
 * stops after its first file leaves a state the reader reads right (that file, and the inputs
 * not in it). A file is one sorted run (see output-file.ts): the builders are sorted and spilled
 * to local disk whenever they hold `runBytes`, which bounds their memory, and the runs are merged
 * when the file is finished.
 *
 * Files are cut by their projected bytes: rows times the bytes a row took in the files finished
 * so far. Before the first one there is only the signal's guess (firstGuessRowBytes), which may
 * be far off (25 bytes a point against 3-5 compacted: cut on it, the first file of a large hour
 * came out far below half the target, and was made twice). So once the guess puts the first
 * file at half the target, the next run it spills is also written alone as Parquet, thrown away,
 * to measure a row (at the default target a run is about 320,000 points, a guessed cut about
 * 5 million). A first file that still comes out below half the target is not kept but made
 * again from its first input with the bytes a row it measured, so that a run leaves at most one
 * output below half the target (the one the plan does not merge again, plan.ts).
 */

/** One object to read, and its footer when it is an earlier output. */
export interface MergeInput {
  object: ListedObject;
  output?: OutputInfo;
}

/** A finished output file and what it replaces. */
export interface FinishedFile {
  bytes: Uint8Array;
  rows: number;
  /** The inputs read into it, with their points as counted from them. */
  inputs: { object: ListedObject; rows: number }[];
  /** What the outputs among its inputs replaced (kept objects, still to be skipped). */
  superseded: string[];
  /** Its REPLACES_KEY metadata, as written into the file. */
  replaces: string;
}

export interface MergeOptions {
  /** The signal's rows. */
  rows: AnyCompactionRows;
  reader: InputReader;
  targetBytes: number;
  runBytes: number;
  compression: Compression;
  /** Before each input: the lease is renewed here. */
  beforeInput(object: ListedObject): Promise<void>;
  /** Uploads, verifies and deletes what it replaces; the file is released after it. */
  onFile(file: FinishedFile): Promise<void>;
  /** An input that could not be read: left where it is, named in the report. */
  onSkipped(object: ListedObject, error: InputError): void;
}

/**
 * Stored bytes of an input against its bytes in a compacted file (measured on realistic data:
 * 20-25 bytes a point sorted into large files, 45-50 as OTLP + zstd in 1-minute objects, 10-20
 * times that uncompressed). Only to decide where to cut files.
 */
const COMPACTED_SHARE = { compressed: 0.45, none: 0.06, parquet: 0.8 } as const;

export async function mergeInputs(inputs: readonly MergeInput[], o: MergeOptions): Promise<void> {
  // One page compressor for all the partition's files (zstd-napi: one context).
  const pages = createPageCompressor({
    compression: o.compression,
    level: COMPRESSION_ROWS[o.compression].levels?.default ?? 0,
    engine: o.compression === 'zstd' ? requireZstdEngine() : undefined,
  });
  const open = { file: undefined as OutputFile | undefined };
  try {
    await merge(inputs, o, pages.compressPage, open);
  } finally {
    open.file?.discard();
    pages.close();
  }
}

async function merge(
  inputs: readonly MergeInput[],
  o: MergeOptions,
  compressPage: (page: Uint8Array) => Uint8Array | Promise<Uint8Array>,
  open: { file: OutputFile | undefined },
): Promise<void> {
  const objects = inputs.map((input) => input.object);
  const outputs = new Map(inputs.flatMap((i) => (i.output ? [[i.object.key, i.output]] : [])));
  const bad = new Set<string>();
  let file: OutputFile | undefined;
  let members: { object: ListedObject; rows: number }[] = [];
  let fileStart = 0;
  let encodedRows = 0;
  let encodedBytes = 0;
  /** Bytes a row of one run written alone: the first file's measure until a file is finished. */
  let runRowBytes: number | undefined;
  const rowBytes = () =>
    encodedRows > 0 ? encodedBytes / encodedRows : (runRowBytes ?? o.rows.firstGuessRowBytes);
  const half = o.targetBytes * FULL_OUTPUT_FRACTION;

  /** False when the first file was cut too small and is to be made again (nothing uploaded). */
  const finish = async (current: OutputFile, cut: boolean): Promise<boolean> => {
    const superseded = members.flatMap((m) => {
      const output = outputs.get(m.object.key);
      return output === undefined ? [] : replacedKeys(output.replaces);
    });
    const rows = members.reduce((sum, m) => sum + m.rows, 0);
    const replaces = encodeReplaces({
      inputs: members.map((m) => ({ key: m.object.key, rows: m.rows })),
      superseded,
    });
    const bytes = await current.finish([{ key: REPLACES_KEY, value: replaces }]);
    const guessed = encodedRows === 0;
    encodedRows += rows;
    encodedBytes += bytes.length;
    if (cut && guessed && bytes.length < half) return false;
    // One earlier output alone (the late files beside it could not be read) would be written
    // again as it is and replace itself: it is left as it is, and the run writes nothing.
    if (members.length === 1 && outputs.has(members[0]?.object.key ?? '')) return true;
    await o.onFile({ bytes, rows, inputs: members, superseded, replaces });
    return true;
  };

  for (let i = 0; i < objects.length; i++) {
    const object = objects[i] as ListedObject;
    if (bad.has(object.key)) continue;
    if (file !== undefined && file.rows > 0) {
      const projected = file.encodedBytes + file.bufferedRows * rowBytes();
      // A file projected below half the target is not cut, even before an input that takes it
      // past the target: cut, it would be a small output beside the one the last file may be,
      // and the next run would merge them again (at most one small output a run, plan.ts).
      const full = projected >= half;
      if (full && projected + compactedBytes(object) > o.targetBytes) {
        const kept = await finish(file, true);
        file = undefined;
        if (!kept) {
          // Cut too early: the same inputs again, now with the row size of a finished file.
          o.reader.clear();
          i = fileStart - 1;
          continue;
        }
      }
    }
    if (file === undefined) {
      file = createOutputFile(o.rows, {
        compression: o.compression,
        compressPage,
        expectedBytes: o.targetBytes * 1.25,
        runBytes: o.runBytes,
      });
      open.file = file;
      members = [];
      fileStart = i;
    }
    await o.beforeInput(object);
    let added = 0;
    try {
      for await (const part of o.reader.read(objects, i)) {
        const points = file.add(part);
        if (points !== part.points) {
          throw new Error(`${object.key}: the builders took ${points} of ${part.points} points`);
        }
        added += points;
        if (file.bufferedBytes >= o.runBytes) {
          await file.flushRun();
          // Measured only when the guess could cut soon: smaller hours pay nothing for it.
          const nearCut = file.bufferedRows * o.rows.firstGuessRowBytes >= half;
          if (encodedRows === 0 && runRowBytes === undefined && nearCut) {
            runRowBytes = await file.measureRun();
          }
        }
      }
    } catch (thrown) {
      const error = asSkipped(object, thrown);
      if (!(error instanceof InputError)) throw error;
      o.onSkipped(object, error);
      bad.add(object.key);
      if (added > 0) {
        // Part of it is in the file already: make the file again without it.
        o.reader.clear();
        file.discard();
        file = undefined;
        i = fileStart - 1;
      }
      continue;
    }
    members.push({ object, rows: added });
  }
  if (file !== undefined && members.length > 0) await finish(file, false);
}

/**
 * A damaged part (its rows read, but not rows this package writes) as its input's InputError,
 * stage 'decode' as the reader reports such a file: skipped, kept and recorded, not merged.
 */
const asSkipped = (object: ListedObject, error: unknown): unknown =>
  error instanceof DamagedPartError
    ? new InputError(object.key, 'decode', error.message, error)
    : error;

/** What an input adds to an output file, roughly. */
function compactedBytes(object: ListedObject): number {
  const { format, compression } = object.parsed.encoding;
  const share =
    format === 'parquet'
      ? COMPACTED_SHARE.parquet
      : compression === 'none'
        ? COMPACTED_SHARE.none
        : COMPACTED_SHARE.compressed;
  return object.size * share;
}
