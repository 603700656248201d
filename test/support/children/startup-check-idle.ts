/**
 * A service that constructs an exporter aimed at ENDPOINT (a server that accepts connections and
 * never answers), waits until the startup check's request is there, and then has nothing left to
 * do: it prints {"idle":true} and lets the event loop run dry, never calling shutdown(). The
 * check in flight must not keep the process alive.
 */
import { S3MetricExporter } from '../../../src/index.js';

new S3MetricExporter({
  bucket: 'idle',
  endpoint: process.env.ENDPOINT,
  region: 'us-east-1',
  credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
});
// Long enough for the check to connect and send its request (the parent sees it arrive).
await new Promise((resolve) => setTimeout(resolve, Number(process.env.WAIT_MILLIS ?? 500)));
console.log(JSON.stringify({ idle: true }));
