/** Child process: opens the spool an earlier (killed) process left and uploads it, then reports. */
import { S3MetricExporter } from '../../../src/index.js';
import { childConnection } from './connection.js';

const env = process.env;
const exporter = new S3MetricExporter({
  ...childConnection(),
  prefix: env.S3_PREFIX as string,
  spoolDir: env.SPOOL_DIR as string,
  flushTimeoutMillis: 10_000,
});
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
