/**
 * Child process: exports SIGNAL (metrics unless set), 10 items an export tagged 1, 2, ... (the
 * signal driver's exports), with a spool while S3 does not answer, through a file
 * system that stops at a chosen point of the Nth spool write: KILL_POINT is one of
 * create (before the file exists), write (half the bytes written), fsync (all written, not
 * synced), rename (before it), directory (renamed, directory not synced); KILL_AT is N. There it
 * prints {"killpoint":...} and hangs, for the parent's SIGKILL. Only spool files count: the
 * journal's parts (its group commit, once a second) go through the same file system untouched.
 */
import { basename, dirname } from 'node:path';
import { nodeFileSystem, type SpoolFileSystem } from '../../../src/spool/file-system.js';
import { driverOf, exportTagged } from '../signal-driver.js';
import { childSpoolExporter } from './connection.js';

const env = process.env;
const point = env.KILL_POINT as string;
const at = Number(env.KILL_AT);
let writes = 0;

/** Tells the parent where we are, then never returns. */
function stop(path: string): Promise<never> {
  console.log(JSON.stringify({ killpoint: point, write: writes, path }));
  return new Promise<never>(() => {});
}

/** A spool file being written: in the spool's `tmp/` (the journal's parts are in `journal/`). */
const isSpoolTmp = (path: string) => basename(dirname(path)) === 'tmp';

const fs: SpoolFileSystem = {
  ...nodeFileSystem,
  async create(path) {
    if (!isSpoolTmp(path)) return nodeFileSystem.create(path);
    writes++;
    const mine = writes === at;
    if (mine && point === 'create') await stop(path);
    const handle = await nodeFileSystem.create(path);
    return {
      async write(parts) {
        if (mine && point === 'write') {
          // The header whole, then half of the rest: a write torn by the kill.
          await handle.write(parts.map((p, i) => (i === 0 ? p : p.subarray(0, p.length >> 1))));
          await stop(path);
        }
        await handle.write(parts);
      },
      async sync() {
        if (mine && point === 'fsync') await stop(path);
        await handle.sync();
      },
      close: () => handle.close(),
    };
  },
  async rename(from, to) {
    if (writes === at && point === 'rename' && isSpoolTmp(from)) await stop(from);
    await nodeFileSystem.rename(from, to);
  },
  async syncDirectory(path) {
    if (writes === at && point === 'directory' && basename(path) === 'batches') await stop(path);
    await nodeFileSystem.syncDirectory(path);
  },
};

const driver = driverOf(env.SIGNAL);
const exporter = childSpoolExporter(
  {
    spoolFileSystem: fs,
    maxBatchAgeMillis: 20,
    requestTimeoutMillis: 60_000,
    spoolTimeoutMillis: 600_000,
  },
  driver,
);
for (let tag = 1; ; tag++) {
  const result = await exportTagged(driver, exporter, 10, tag);
  if (result.code !== 0) throw result.error ?? new Error(`export of tag ${tag} failed`);
  await new Promise((r) => setTimeout(r, 5));
}
