import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, test, vi } from 'vitest';
import { s3Source } from '../../../src/reader/s3-source.js';

/** The no-answer deadline at 300 ms (and no request sent again beside a first): a test's time. */
vi.mock('../../../src/reader/answer-deadlines.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/reader/answer-deadlines.js')>();
  return {
    ...original,
    withAnswerDeadlines: <T>(
      attempt: (signal: AbortSignal, answered: () => void) => Promise<T>,
      signal: AbortSignal,
    ) => original.withAnswerDeadlines(attempt, signal, [], 300),
  };
});

const PAGE =
  '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
  '<Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>' +
  '<Contents><Key>p/a</Key><Size>3</Size></Contents><Contents><Key>p/b</Key><Size>4</Size></Contents>' +
  '</ListBucketResult>';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server?.listening) await new Promise((r) => server?.close(r));
  server = undefined;
});

/** A source on a local server answering every request with `handler`. */
async function sourceOf(handler: RequestListener) {
  server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return s3Source('b', {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
  });
}

/** The keys listed under p/; the source closed however the listing ends. */
async function keysOf(source: ReturnType<typeof s3Source>): Promise<string[]> {
  const keys: string[] = [];
  try {
    for await (const { key } of source.list('p', undefined, new AbortController().signal)) {
      keys.push(key);
    }
  } finally {
    source.close();
  }
  return keys;
}

test('a listing page whose answer has begun is not cut by the no-answer deadline while it arrives', async () => {
  // Headers at once, then the page in two halves 600 ms apart: slow, but answering all along.
  const source = await sourceOf((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/xml' });
    response.write(PAGE.slice(0, PAGE.length / 2));
    const later = setTimeout(() => response.end(PAGE.slice(PAGE.length / 2)), 600);
    response.on('close', () => clearTimeout(later));
  });
  expect(await keysOf(source)).toEqual(['p/a', 'p/b']);
});

test('a listing page whose headers never come still ends at the no-answer deadline', async () => {
  const source = await sourceOf(() => {});
  const started = Date.now();
  await expect(keysOf(source)).rejects.toThrow(/no answer in 0.3 s/);
  expect(Date.now() - started).toBeLessThan(5_000);
});
