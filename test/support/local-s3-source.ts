import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { s3Source } from '../../src/reader/s3-source.js';

/**
 * For a file of reader tests: `serve(handler)` starts a local HTTP server that answers as
 * `handler` does (an S3-compatible server or proxy at fault) and gives the reader's s3Source of
 * it; the server is closed after each test.
 */
export function localS3Sources(): (
  handler: RequestListener,
) => Promise<ReturnType<typeof s3Source>> {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });
  return async (handler) => {
    server = createServer(handler);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return s3Source('bucket', {
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
  };
}
