/**
 * Child process: opens the spool an earlier (killed) process of SIGNAL (metrics unless set) left
 * and uploads it, then reports.
 */
import { driverOf } from '../signal-driver.js';
import { childSpoolExporter } from './connection.js';

const exporter = childSpoolExporter({ flushTimeoutMillis: 10_000 }, driverOf(process.env.SIGNAL));
const deadline = Date.now() + 20_000;
// Opening and restoring are asynchronous: wait until the spool is ours, read, and empty again.
while (exporter.stats().spool?.state !== 'active' && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 10));
}
await new Promise((r) => setTimeout(r, 200));
while (
  (exporter.stats().pendingBatches > 0 || (exporter.stats().spool?.files ?? 0) > 0) &&
  Date.now() < deadline
) {
  await new Promise((r) => setTimeout(r, 50));
}
await exporter.shutdown();
console.log(JSON.stringify({ done: true, stats: exporter.stats() }));
