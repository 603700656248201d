/**
 * A service that only exports: imports the exporter's entry, constructs an exporter (FORMAT,
 * default otlp-json) and exports one batch. With TRANSPORT=sdk it goes to an S3 client that
 * accepts every PutObject; otherwise through the exporter's own requests to a local HTTP sink
 * that answers 200 to every PUT. Run with test/support/record-modules.mjs to see what it loaded.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type Format, S3MetricExporter, type S3MetricExporterOptions } from '../../../src/index.js';
import { exportSynthetic } from '../service.js';

const keys: string[] = [];
let close = () => {};
let where: Partial<S3MetricExporterOptions>;
if (process.env.TRANSPORT === 'sdk') {
  const accepting = {
    send: async (command: PutObjectCommand) => {
      keys.push(command.input.Key as string);
      if (command.input.ContentMD5 !== undefined)
        throw Object.assign(new Error('BadDigest'), {
          name: 'BadDigest',
          $metadata: { httpStatusCode: 400 },
        });
      return {};
    },
  } as unknown as S3Client;
  where = { s3Client: accepting };
} else {
  const sink = createServer((request, response) => {
    if (request.method === 'PUT') keys.push(decodeURIComponent(request.url ?? ''));
    // The startup check's PutObject (its Content-MD5 is wrong on purpose): answered as S3 does.
    if (request.headers['content-md5'] !== undefined) response.statusCode = 400;
    request.resume().on('end', () => response.end());
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  close = () => sink.close();
  where = {
    endpoint: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  };
}
const exporter = new S3MetricExporter({
  bucket: 'imports',
  ...where,
  format: (process.env.FORMAT ?? 'otlp-json') as Format,
});
await exportSynthetic(exporter, 20, 1);
await exporter.shutdown();
close();
// The name says which body was made (a fallback would be named after the records).
console.log(
  JSON.stringify({
    checks: keys.filter((k) => k.includes('_otel_s3_check/')).length,
    extensions: keys
      .filter((k) => !k.includes('_otel_s3_check/'))
      .map((k) => k.slice(k.indexOf('.'))),
  }),
);
