import { createServer, type Server, type Socket } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { expect, onTestFinished, test } from 'vitest';
import { s3Source } from '../../../src/reader/s3-source.js';
import { s3ClientConfig } from '../../../src/s3/client-settings.js';

// A server that takes the connection and then says nothing (a black hole), or stops in the
// middle of a body. The reader's client set `requestTimeout`, which this AWS SDK only warns about
// ("Init client requestHandler with throwOnRequestTimeout=true ..."): `otel-s3 ls` on such an
// endpoint printed that warning after a minute and then waited for ever.

/** Each timeout of the reader's own request handler settings, scaled down to `millis`. */
function readerConfigWithin(endpoint: string, millis: number) {
  const config = s3ClientConfig(
    { endpoint, credentials: { accessKeyId: 'k', secretAccessKey: 's' } },
    { role: 'reader' },
    {},
  );
  const handler = Object.fromEntries(
    Object.entries(config.requestHandler as Record<string, unknown>).map(([key, value]) => [
      key,
      typeof value === 'number' ? millis : value,
    ]),
  );
  return { ...config, region: 'us-east-1', maxAttempts: 1, requestHandler: handler };
}

/** A TCP server on the loopback that runs `onSocket` for each connection; closed after the test. */
async function tcpServer(onSocket: (socket: Socket) => void): Promise<string> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

test('an endpoint that accepts and never answers: the listing fails, it does not hang', async () => {
  const endpoint = await tcpServer(() => {});
  const client = new S3Client(readerConfigWithin(endpoint, 300));
  const source = s3Source('b-1', { s3Client: client });
  onTestFinished(() => {
    source.close();
    client.destroy();
  });
  const started = Date.now();
  const listing = source.list('', undefined, new AbortController().signal)[Symbol.asyncIterator]();
  await expect(listing.next()).rejects.toThrow(/^cannot list s3:\/\/b-1\/: TimeoutError/);
  expect(Date.now() - started).toBeLessThan(5_000);
}, 10_000);

test('a body that stops half way: the read fails, it does not hang', async () => {
  const endpoint = await tcpServer((socket) => {
    socket.once('data', () =>
      socket.write(
        'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: application/json\r\n\r\n{"resourceMetrics":',
      ),
    );
  });
  const client = new S3Client(readerConfigWithin(endpoint, 300));
  const source = s3Source('b-1', { s3Client: client });
  onTestFinished(() => {
    source.close();
    client.destroy();
  });
  const started = Date.now();
  const key =
    'year=2026/month=12/day=06/hour=23/minute=39/metrics_01a24dba-1076-759f-93e2-68819ca3bed8.json';
  await expect(source.get(key, new AbortController().signal, 1_000_000)).rejects.toThrow(
    /timed out/,
  );
  expect(Date.now() - started).toBeLessThan(5_000);
}, 10_000);
