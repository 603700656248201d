/**
 * Child process: an exporter on the spool directory SPOOL_DIR (S3 never called). Prints
 * {"constructed":true,"pid":...} or {"error":name,"message":...} (exit 3), then
 * {"state":...,"pid":...} each time stats().spool.state changes. Stays alive until killed;
 * SIGTERM shuts the exporter down (releasing the lock) and exits 0.
 */
import type { S3MetricExporter } from '../../../src/index.js';
import { scriptedExporter } from '../scripted-exporter.js';
import { ScriptedS3 } from '../scripted-s3.js';

let exporter: S3MetricExporter;
try {
  exporter = scriptedExporter(new ScriptedS3(), {
    bucket: 'unused',
    compression: 'none',
    spoolDir: process.env.SPOOL_DIR as string,
  });
} catch (error) {
  console.log(JSON.stringify({ error: (error as Error).name, message: (error as Error).message }));
  process.exit(3);
}
console.log(JSON.stringify({ constructed: true, pid: process.pid }));
let state: string | undefined;
setInterval(() => {
  const now = exporter.stats().spool?.state;
  if (now === state) return;
  state = now;
  console.log(JSON.stringify({ state, pid: process.pid }));
}, 10);
process.on('SIGTERM', () => void exporter.shutdown().then(() => process.exit(0)));
