/**
 * Child process: exports COLLECTIONS sequenced collections with a spool while S3 does not
 * answer, waits until every sealed batch is durable, prints {"ready":...}, then keeps exporting
 * (so the parent's kill -9 lands in the middle of uploads and exports).
 */
import { sequencedService } from '../service.js';
import { childSpoolExporter } from './connection.js';

const env = process.env;
const exporter = childSpoolExporter({
  maxBatchAgeMillis: 30,
  requestTimeoutMillis: 60_000,
  flushTimeoutMillis: 300,
});
const service = sequencedService(exporter);
for (let i = 0; i < Number(env.COLLECTIONS); i++) {
  await service.exportCollections(1);
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
    collections: service.count,
    sealed: s.batchesSealed,
    written: s.spool?.written,
    attempts: s.uploadAttempts,
  }),
);
// Keep going until killed.
for (;;) {
  await service.exportCollections(1);
  await new Promise((r) => setTimeout(r, 5));
}
