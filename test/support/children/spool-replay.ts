/**
 * Child process: opens the spool an earlier (killed) process of SIGNAL (metrics unless set) left
 * and uploads it, then reports. With GO_ON_STDIN=1 it loads its modules, then waits for its go
 * (./go.ts) before it touches the spool.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { driverOf, signalSpoolDir } from '../signal-driver.js';
import { childSpoolExporter } from './connection.js';
import { waitForGo } from './go.js';

await waitForGo();

const driver = driverOf(process.env.SIGNAL);
const exporter = childSpoolExporter({ flushTimeoutMillis: 10_000 }, driver);
const dir = signalSpoolDir(process.env.SPOOL_DIR as string, driver);
// Long enough for a loaded machine, where a child may take 10 s to start.
const deadline = Date.now() + 40_000;

/** Files left in the spool's batches/, tmp/ and journal/ (read, stored and deleted: none). */
async function left(): Promise<number> {
  let files = 0;
  for (const sub of ['batches', 'tmp', 'journal'])
    files += (await readdir(join(dir, sub)).catch(() => [])).length;
  return files;
}

// Opening and restoring are asynchronous ('active' comes before the files are read): wait until
// the spool is ours, and its files read, stored and deleted.
while (
  (exporter.stats().spool?.state !== 'active' ||
    exporter.stats().pendingBatches > 0 ||
    (exporter.stats().spool?.files ?? 0) > 0 ||
    (await left()) > 0) &&
  Date.now() < deadline
) {
  await new Promise((r) => setTimeout(r, 50));
}
await exporter.shutdown();
console.log(JSON.stringify({ done: true, stats: exporter.stats() }));
