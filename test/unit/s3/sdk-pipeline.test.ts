import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, test } from 'vitest';
import { S3MetricExporter } from '../../../src/index.js';
import { exportSynthetic } from '../../support/service.js';

/**
 * What our middleware does to the SDK's request pipeline, seen on the wire by a local HTTP
 * endpoint (an S3 stand-in: these tests are about the client side; uploads to a real server are
 * proven by the integration tests).
 */
interface Received {
  body: Buffer;
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function endpoint(answer: (n: number) => number) {
  const received: Received[] = [];
  server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks) });
      const status = answer(received.length);
      res.writeHead(status, { 'content-type': 'application/xml', etag: '"e"' });
      res.end(
        status === 200
          ? ''
          : '<Error><Code>InternalError</Code><Message>try again</Message></Error>',
      );
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received };
}

function callerClient(url: string): S3Client {
  return new S3Client({
    endpoint: url,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 3, // the caller's client, with the SDK's own retries
    retryMode: 'standard',
  });
}

/** Counts turns of the event loop (check phase) while running. */
function turnCounter() {
  let turns = 0;
  let running = true;
  const spin = () => {
    turns++;
    if (running) setImmediate(spin);
  };
  return {
    start: () => setImmediate(spin),
    count: () => turns,
    stop: () => {
      running = false;
    },
  };
}

describe('the SDK request pipeline under our middleware', () => {
  test('with our middleware in the pipeline, the body reaches the server whole, on the first attempt and on the SDK retry', async () => {
    const { url, received } = await endpoint((n) => (n === 1 ? 500 : 200));
    const client = callerClient(url);
    const exporter = new S3MetricExporter({
      bucket: 'b',
      s3Client: client,
      startupCheck: false, // requests counted here are uploads only
      compression: 'none',
      format: 'otlp-json',
    });
    await exportSynthetic(exporter, 5_000, 1);
    await exporter.forceFlush();
    const stats = exporter.stats();
    await exporter.shutdown();
    client.destroy();
    expect(stats.batchesUploaded).toBe(1);
    expect(received).toHaveLength(2); // the SDK retried the 500 itself
    const [first, second] = received as [Received, Received];
    expect(first.body.length).toBeGreaterThan(512 * 1024);
    expect(first.body.length).toBe(stats.rawBytesUploaded);
    expect(second.body.equals(first.body)).toBe(true);
    expect(JSON.parse(first.body.toString())).toHaveProperty('resourceMetrics');
  });

  test("the SDK's pipeline, from send() to the HTTP handler, runs over several turns of the event loop", async () => {
    const counter = turnCounter();
    const { url, received } = await endpoint(() => 200);
    const client = callerClient(url);
    let atSend = -1;
    let atHandler = -1;
    client.middlewareStack.add(
      (next) => (args) => {
        atSend = counter.count();
        return next(args);
      },
      { step: 'initialize', priority: 'high', name: 'testAtSend' },
    );
    const http = client.config.requestHandler;
    const handle = http.handle.bind(http);
    http.handle = (request, options) => {
      atHandler = counter.count();
      return handle(request, options);
    };
    const exporter = new S3MetricExporter({
      bucket: 'b',
      s3Client: client,
      compression: 'zstd',
      startupCheck: false, // the one request seen is the upload's
    });
    await exportSynthetic(exporter, 50, 1);
    counter.start();
    await exporter.forceFlush();
    counter.stop();
    await exporter.shutdown();
    client.destroy();
    expect(received).toHaveLength(1);
    // Five seams between the SDK's steps: without them, send() reaches the handler in the same turn.
    expect(atSend).toBeGreaterThanOrEqual(0);
    expect(atHandler - atSend).toBeGreaterThanOrEqual(5);
  });
});
