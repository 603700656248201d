import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompactionRows } from './signal-rows.js';

/**
 * An output file's sorted runs on local disk, and their merge: what bounds the compactor's
 * memory however many points an hour holds, while the file comes out as one sorted run.
 *
 * Each run (what the column builders held) is sorted in the signal's compaction order
 * (signal-rows.ts) and written to a file of its own as chunks (chunkRowsFor), each a sealed batch
 * of its own (the signal's copier and encode(): typed arrays as they are, no Parquet encoding). The merge holds one chunk of each
 * run: every row up to the smallest of the chunks' last rows is in order before anything not
 * read yet, so those rows are moved into the next output batch, and the run whose chunk ended
 * there reads its next chunk. Output batches are cut between such steps, so each is sorted after
 * the one before. Memory: one chunk a run and one output batch.
 */

/**
 * Rows of a chunk: the merge holds one chunk of each run. A chunk is about 1/64 of a run's
 * memory (rows of `rowBytes`, about 100 bytes for metrics), so that merging 64 runs holds about
 * one run's worth; at most 2,048 rows, at least 64.
 */
export function chunkRowsFor(runBytes: number, rowBytes = 104): number {
  return Math.max(64, Math.min(2048, Math.floor(runBytes / 64 / rowBytes)));
}

const DIRECTORY_PREFIX = 'otel-s3-compact-';

/** One sorted run on disk: its chunks' places in its file. */
export interface SpilledRun {
  readonly path: string;
  readonly rows: number;
  readonly chunks: readonly { offset: number; length: number }[];
}

/** The sorted runs of one output file, in a directory of their own under the system's tmpdir. */
export class Spill<S extends { readonly rows: number }, K> {
  readonly runs: SpilledRun[] = [];
  #directory: string | undefined;
  rows = 0;

  constructor(
    readonly kind: CompactionRows<S, K>,
    readonly chunkRows: number,
  ) {}

  /** Sorts a run in the compaction order and writes it; the batch is not needed after. */
  add(s: S): void {
    const { chunkRows, kind } = this;
    if (s.rows === 0) return;
    this.#directory ??= spillDirectory();
    const order = kind.order(s);
    const path = join(this.#directory, `run-${this.runs.length}.sealed`);
    const fd = openSync(path, 'w');
    const chunks: { offset: number; length: number }[] = [];
    let offset = 0;
    try {
      for (let from = 0; from < s.rows; from += chunkRows) {
        const to = Math.min(s.rows, from + chunkRows);
        const chunk = kind.copier(to - from);
        chunk.add(s, from, to, order);
        const bytes = kind.encode(chunk.seal());
        writeAll(fd, bytes, offset);
        chunks.push({ offset, length: bytes.length });
        offset += bytes.length;
      }
    } finally {
      closeSync(fd);
    }
    this.runs.push({ path, rows: s.rows, chunks });
    this.rows += s.rows;
  }

  /** Deletes the runs' files. */
  remove(): void {
    if (this.#directory !== undefined) rmSync(this.#directory, { recursive: true, force: true });
    this.#directory = undefined;
    this.runs.length = 0;
    this.rows = 0;
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.length) {
    done += writeSync(fd, bytes, done, bytes.length - done, position + done);
  }
}

function readChunk<S>(
  kind: CompactionRows<S & { readonly rows: number }, unknown>,
  fd: number,
  chunk: { offset: number; length: number },
): S {
  const bytes = new Uint8Array(chunk.length);
  let done = 0;
  while (done < chunk.length) {
    const n = readSync(fd, bytes, done, chunk.length - done, chunk.offset + done);
    if (n === 0) throw new Error('a spilled run of the compaction ended early');
    done += n;
  }
  return kind.decode(bytes);
}

/** A directory left this long by a process that is not running is deleted. */
const STALE_MILLIS = 3_600_000;

/**
 * A new directory for the runs of one file, named by host and process, after deleting those
 * that a compactor on this host that is no longer running left (killed while it merged), once
 * they are an hour old (a process of another container may share the directory and the pid).
 */
function spillDirectory(): string {
  const base = tmpdir();
  const host = hostname().replace(/[^A-Za-z0-9.]/g, '_');
  const mine = `${DIRECTORY_PREFIX}${host}-`;
  for (const name of readdirSync(base)) {
    if (!name.startsWith(mine)) continue;
    const pid = Number(name.slice(mine.length).split('-')[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || running(pid)) continue;
    const path = join(base, name);
    const age = Date.now() - (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > STALE_MILLIS) rmSync(path, { recursive: true, force: true });
  }
  return mkdtempSync(join(base, `${mine}${process.pid}-`));
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

interface Cursor<S, K> {
  fd: number;
  run: SpilledRun;
  next: number;
  chunk: S;
  keys: K;
  at: number;
}

/**
 * Merges sorted runs into batches of about `batchBytes` (the copier's bytes), each handed to
 * `emit` in order: every row of a batch sorts before (or equal to) every row of the next.
 */
export async function mergeRuns<S extends { readonly rows: number }, K>(
  kind: CompactionRows<S, K>,
  runs: readonly SpilledRun[],
  batchBytes: number,
  emit: (batch: S) => Promise<void>,
): Promise<void> {
  const cursors: Cursor<S, K>[] = [];
  try {
    const load = (c: Cursor<S, K>): boolean => {
      if (c.next >= c.run.chunks.length) return false;
      c.chunk = readChunk(kind, c.fd, c.run.chunks[c.next++] as { offset: number; length: number });
      c.keys = kind.keys(c.chunk);
      c.at = 0;
      return true;
    };
    for (const run of runs) {
      const c = { fd: openSync(run.path, 'r'), run, next: 0, at: 0 } as Cursor<S, K>;
      cursors.push(c);
      load(c);
    }
    let active = cursors.filter((c) => c.chunk !== undefined && c.chunk.rows > 0);
    let batch = kind.copier();
    while (active.length > 0) {
      // The chunk whose last row is smallest: everything up to that row can go.
      let low = active[0] as Cursor<S, K>;
      for (const c of active) {
        if (kind.compare(c.keys, c.chunk.rows - 1, low.keys, low.chunk.rows - 1) < 0) low = c;
      }
      const last = low.chunk.rows - 1;
      for (const c of active) {
        const end = c === low ? c.chunk.rows : upTo(kind, c, low.keys, last);
        batch.add(c.chunk, c.at, end);
        c.at = end;
      }
      active = active.filter((c) => {
        if (c.at < c.chunk.rows) return true;
        batch.forget(c.chunk);
        return load(c);
      });
      if (batch.bytes >= batchBytes) {
        await emit(batch.seal());
        batch = kind.copier();
      }
    }
    if (batch.rows > 0) await emit(batch.seal());
  } finally {
    for (const c of cursors) closeSync(c.fd);
  }
}

/** Where the rows of c's chunk that sort after row `row` of `keys` start (from c.at). */
function upTo<S extends { readonly rows: number }, K>(
  kind: CompactionRows<S, K>,
  c: Cursor<S, K>,
  keys: K,
  row: number,
): number {
  let lo = c.at;
  let hi = c.chunk.rows;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (kind.compare(c.keys, mid, keys, row) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
