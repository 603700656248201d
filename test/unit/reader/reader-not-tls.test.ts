import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { s3Source } from '../../../src/reader/s3-source.js';

// An https:// endpoint on a plain HTTP port: the listing's error quoted OpenSSL's internals and
// asked whether the server was reachable, which it is. It says what to change instead.
test('a listing over TLS from a plain HTTP server says to give the endpoint as http://', async () => {
  const server = createServer((req, res) => {
    req.resume();
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const source = s3Source('b-1', {
    region: 'us-east-1',
    endpoint: `https://127.0.0.1:${port}`,
    credentials: { accessKeyId: 'k', secretAccessKey: 's' },
  });
  try {
    const listing = source.list('', undefined, new AbortController().signal);
    await expect(listing[Symbol.asyncIterator]().next()).rejects.toThrow(
      'cannot list s3://b-1/: EPROTO: write EPROTO (TLS: wrong version number); the server does not answer in TLS: if it serves plain HTTP, give the endpoint as http://',
    );
  } finally {
    source.close();
    server.close();
  }
});
