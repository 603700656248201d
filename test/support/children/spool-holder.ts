/**
 * Child process: takes the spool directory argv[2] with an exporter (S3 never called), prints
 * {"ready":true,"pid":...} or {"error":name,"message":...}, then stays alive until killed.
 */
import { S3MetricExporter } from '../../../src/index.js';
import { ScriptedS3 } from '../scripted-s3.js';

try {
  const exporter = new S3MetricExporter({
    bucket: 'unused',
    s3Client: new ScriptedS3().client,
    compression: 'none',
    spoolDir: process.argv[2] as string,
  });
  console.log(JSON.stringify({ ready: true, pid: process.pid }));
  setInterval(() => {}, 1_000);
  process.on('SIGTERM', () => void exporter.shutdown().then(() => process.exit(0)));
} catch (error) {
  console.log(JSON.stringify({ error: (error as Error).name, message: (error as Error).message }));
  process.exit(3);
}
