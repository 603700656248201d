/**
 * Threads of a fresh process (libuv's pool not yet started) before and 100 ms after it
 * constructs an exporter (FORMAT) with the exporter's own requests, as a service starts. Their
 * names, so that a failure says which thread came.
 */
import type { Format } from '../../../src/index.js';
import { threadNames as threads } from '../threads.js';

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));
const { S3MetricExporter } = await import('../../../src/index.js');
// What a Parquet exporter imports on demand at construction, loaded beforehand: under tsx a
// module load runs the loader's own threads, which a plain `node` on dist/ does not.
await import('../../../src/signals/metrics/parquet/column-builders.js');
await settle();
const before = threads();
const exporter = new S3MetricExporter({
  bucket: 'threads',
  endpoint: 'http://127.0.0.1:9',
  credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  format: (process.env.FORMAT ?? 'otlp-json') as Format,
});
await settle();
const after = threads();
await exporter.shutdown();
console.log(JSON.stringify({ before, after }));
