/**
 * A service that only exports: imports the exporter's entry, constructs an exporter (FORMAT,
 * default otlp-json) and exports one batch to an S3 client that accepts every PutObject. Run
 * with test/support/record-modules.mjs to see what it loaded.
 */
import type { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type Format, S3MetricExporter } from '../../../src/index.js';
import { exportSynthetic } from '../service.js';

const keys: string[] = [];
const accepting = {
  send: async (command: PutObjectCommand) => {
    keys.push(command.input.Key as string);
    return {};
  },
} as unknown as S3Client;
const exporter = new S3MetricExporter({
  bucket: 'imports',
  s3Client: accepting,
  format: (process.env.FORMAT ?? 'otlp-json') as Format,
});
await exportSynthetic(exporter, 20, 1);
await exporter.shutdown();
// The name says which body was made (a fallback would be named after the records).
console.log(JSON.stringify({ extensions: keys.map((k) => k.slice(k.indexOf('.'))) }));
