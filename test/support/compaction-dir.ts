import { createHash } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { InputReader } from '../../src/compact/inputs.js';
import { type FinishedFile, type MergeInput, mergeInputs } from '../../src/compact/merge.js';
import type { CompactMetricsOptions } from '../../src/compact/options.js';
import type { CompactionReport, PartitionReport } from '../../src/compact/report.js';
import type { AnyCompactionRows } from '../../src/compact/signal-rows.js';
import type { Compression, Format } from '../../src/index.js';
import { dirSource } from '../../src/reader/dir-source.js';
import type { KeyLayout } from '../../src/reader/key-layout.js';
import { resolveReadLimits } from '../../src/reader/read-limits.js';
import { type Batch, exportBatches } from './compaction-data.js';
import { exportLogBatches, exportSpanBatches, type FlatBatch } from './flat-batches.js';

/**
 * The exporter writing into a local directory laid out like the bucket (`{dir}/{key}`): a
 * stand-in S3 client that stores each PutObject's body as a file. For the unit tests of
 * compaction, which run on a directory store.
 */
export async function exportToDir(
  dir: string,
  options: { prefix: string; format: Format; compression?: Compression; keyTemplate?: string },
  batches: Batch[],
): Promise<void> {
  await exportBatches({ bucket: 'b', ...options }, { s3Client: dirClient(dir) }, batches);
}

/**
 * An exporter of batches in `hour` of flat-batches.ts into `dir` under prefix `p`, as Parquet or
 * `format`; it returns them, spelled.
 */
const flatToDir =
  (exportFlat: typeof exportSpanBatches) =>
  (dir: string, hour: number, batches: readonly FlatBatch[], format?: Format) =>
    exportFlat({ bucket: 'b', prefix: 'p', format }, { s3Client: dirClient(dir) }, hour, batches);

/** Spans of `batches` (exportSpanBatches) into `dir`. */
export const exportSpansToDir = flatToDir(exportSpanBatches);

/** Log records of `batches` (exportLogBatches) into `dir`. */
export const exportLogsToDir = flatToDir(exportLogBatches);

/** The stand-in S3 client of exportToDir: each PutObject's body stored as `{dir}/{key}`. */
export function dirClient(dir: string): S3Client {
  return {
    async send(command: PutObjectCommand) {
      const { Key, Body, ContentMD5 } = command.input;
      // As S3 does: a Content-MD5 that does not match the body stores nothing (the exporter's
      // startup check sends such a one on purpose).
      if (ContentMD5 !== undefined && ContentMD5 !== md5(Body as Uint8Array)) {
        throw Object.assign(new Error('BadDigest'), {
          name: 'BadDigest',
          $metadata: { httpStatusCode: 400 },
        });
      }
      const path = join(dir, ...(Key as string).split('/'));
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, Body as Uint8Array);
      // As S3 answers a stored object: with its ETag, the hex MD5 of a single-part body.
      return {
        $metadata: { httpStatusCode: 200 },
        ETag: `"${createHash('md5')
          .update(Body as Uint8Array)
          .digest('hex')}"`,
      };
    },
  } as unknown as S3Client;
}

const md5 = (body: Uint8Array) => createHash('md5').update(body).digest('base64');

/** Every file under `dir`, as keys, sorted. */
export async function keysIn(dir: string): Promise<string[]> {
  const files = await readdir(dir, { recursive: true, withFileTypes: true });
  return files
    .filter((f) => f.isFile())
    .map((f) => relative(dir, join(f.parentPath, f.name)).split('\\').join('/'))
    .sort();
}

/** The hour's folder of the objects in `dir`: the first key's, up to its last slash. */
export async function hourFolderIn(dir: string): Promise<string> {
  const [first] = await keysIn(dir);
  return (first as string).slice(0, (first as string).lastIndexOf('/'));
}

/**
 * One run of `compact` over `dir` (prefix p) from `from`, every hour settled, inputs deleted once
 * compacted: the first partition's report, where an input that could not be compacted is named
 * as skipped.
 */
export async function compactedFirstHour(
  compact: (options: CompactMetricsOptions) => Promise<CompactionReport>,
  dir: string,
  from: Date,
): Promise<PartitionReport | undefined> {
  const report = await compact({ dir, prefix: 'p', settleMillis: 0, from, deleteInputs: true });
  return report.partitions[0];
}

/**
 * Merges every object under `dir` that `layout` reads (as `rows`) into files of at most
 * `targetBytes` (64 MiB unless given), spilling a sorted run each `runBytes` of builders: the
 * merge of a compaction run, without its plan, lease or store. Returns the files; an unreadable
 * input throws. `reads`, when given, gets the key of each input every time it is read.
 */
export async function mergeAllIn(
  dir: string,
  layout: KeyLayout,
  rows: AnyCompactionRows,
  runBytes: number,
  more: { targetBytes?: number; reads?: string[] } = {},
): Promise<FinishedFile[]> {
  const signal = new AbortController().signal;
  const listed: MergeInput[] = [];
  for await (const { key, size } of dirSource(dir).list(layout.prefix, undefined, signal)) {
    const parsed = layout.parse(key);
    if (parsed !== undefined) listed.push({ object: { key, size, parsed } });
  }
  const files: FinishedFile[] = [];
  const reader = new InputReader(rows, dirSource(dir), resolveReadLimits({}), 4, signal);
  const read = reader.read.bind(reader);
  reader.read = (objects, index) => {
    more.reads?.push(objects[index]?.key ?? '');
    return read(objects, index);
  };
  await mergeInputs(listed, {
    rows,
    reader,
    targetBytes: more.targetBytes ?? 64 * 1024 * 1024,
    runBytes,
    compression: 'zstd',
    beforeInput: async () => {},
    onFile: async (file) => {
      files.push(file);
    },
    onSkipped: (_object, error) => {
      throw error;
    },
  });
  return files;
}
