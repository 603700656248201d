/**
 * Child process: exports COLLECTIONS exports of SIGNAL (metrics unless set) with a spool while S3
 * does not answer, tagged 1..COLLECTIONS (ITEMS items each), waits until every sealed batch is
 * durable, prints {"ready":...}, then keeps exporting the next tags (so the parent's kill -9
 * lands in the middle of uploads and exports).
 */
import { driverOf, exportTagged } from '../signal-driver.js';
import { childSpoolExporter } from './connection.js';

const env = process.env;
const driver = driverOf(env.SIGNAL);
const items = Number(env.ITEMS ?? 10);
const exporter = childSpoolExporter(
  { maxBatchAgeMillis: 30, requestTimeoutMillis: 60_000, flushTimeoutMillis: 300 },
  driver,
);
let tag = 0;
const exportNext = async () => {
  tag += 1;
  const result = await exportTagged(driver, exporter, items, tag);
  if (result.code !== 0) throw result.error ?? new Error(`export of tag ${tag} failed`);
};
for (let i = 0; i < Number(env.COLLECTIONS); i++) {
  await exportNext();
  await new Promise((r) => setTimeout(r, 10));
}
await exporter.forceFlush(); // seals the last batch; the uploads themselves stay stuck
while ((exporter.stats().spool?.written ?? 0) < exporter.stats().batchesSealed) {
  await new Promise((r) => setTimeout(r, 10));
}
const s = exporter.stats();
console.log(
  JSON.stringify({
    ready: true,
    collections: tag,
    sealed: s.batchesSealed,
    written: s.spool?.written,
    attempts: s.uploadAttempts,
  }),
);
// Keep going until killed.
for (;;) {
  await exportNext();
  await new Promise((r) => setTimeout(r, 5));
}
