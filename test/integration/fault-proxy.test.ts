import { setTimeout as sleep } from 'node:timers/promises';
import {
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  type PutObjectCommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { FaultProxy, type ProxyAttempt } from '../support/fault-proxy.js';
import { connection, describeS3, s3Server, skipReason, withS3 } from '../support/s3.js';

if (!s3Server) console.warn(`fault-proxy tests skipped: ${skipReason}`);

/** The parts of an SDK (or Node) error these tests look at. */
interface Failure {
  name: string;
  code?: string;
  message: string;
  cause?: { name?: string };
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
}

async function failure(promise: Promise<unknown>): Promise<Failure> {
  try {
    await promise;
  } catch (error) {
    return error as Failure;
  }
  throw new Error('expected the request to fail');
}

/** The single attempt in `attempts`. */
function only(attempts: ProxyAttempt[]): ProxyAttempt {
  expect(attempts).toHaveLength(1);
  const [attempt] = attempts;
  if (attempt === undefined) throw new Error('unreachable');
  return attempt;
}

async function bytes(body: unknown): Promise<Buffer> {
  return Buffer.from(
    await (body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
  );
}

describeS3('FaultProxy in front of a real S3 server', () => {
  let direct: S3Client; // straight to the upstream, to see what really landed
  let bucket: string;
  let proxy: FaultProxy;
  let client: S3Client; // through the proxy

  function viaProxy(): S3Client {
    return new S3Client({
      ...connection(),
      endpoint: proxy.endpoint,
      maxAttempts: 1,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** A conditional PUT, as the exporter sends it. */
  function put(
    key: string,
    body: Buffer = Buffer.from(`body of ${key}`),
    options: { abortSignal?: AbortSignal; via?: S3Client } = {},
  ): Promise<PutObjectCommandOutput> {
    return (options.via ?? client).send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        ContentLength: body.length,
        IfNoneMatch: '*',
      }),
      options.abortSignal === undefined ? {} : { abortSignal: options.abortSignal },
    );
  }

  /** The object as the upstream has it, or undefined. */
  async function upstreamObject(key: string): Promise<Buffer | undefined> {
    try {
      const got = await direct.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return bytes(got.Body);
    } catch (error) {
      if (error instanceof NoSuchKey) return undefined;
      throw error;
    }
  }

  withS3('fault-proxy', (s) => ({ client: direct, bucket } = s));

  beforeEach(async () => {
    if (s3Server === undefined) throw new Error('unreachable');
    proxy = await FaultProxy.start(s3Server.endpoint);
    client = viaProxy();
  });
  afterEach(async () => {
    client.destroy();
    await proxy.close();
  });

  test('pass: forwards verbatim (SigV4 over the Host header still verifies), records each request', async () => {
    const key = 'pass/sub dir/ünï+cödé %25.txt';
    const body = Buffer.from('hello through the proxy');
    const put1 = await put(key, body);
    expect(put1.$metadata.httpStatusCode).toBe(200);

    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect(await bytes(got.Body)).toEqual(body);

    // RGW implements If-None-Match: * on PutObject; the SDK names the 412 PreconditionFailed.
    const again = await failure(put(key, body));
    expect(again.name).toBe('PreconditionFailed');
    expect(again.$metadata?.httpStatusCode).toBe(412);

    expect(proxy.attempts.map((a) => [a.method, a.bucket, a.key, a.fault, a.outcome])).toEqual([
      ['PUT', bucket, key, 'pass', 'upstream 200'],
      ['GET', bucket, key, 'pass', 'upstream 200'],
      ['PUT', bucket, key, 'pass', 'upstream 412'],
    ]);
    const puts = proxy.putAttempts(key);
    expect(puts).toHaveLength(2);
    expect(puts.every((a) => a.ifNoneMatch === '*' && a.bytesIn === body.length)).toBe(true);
    expect(proxy.putAttempts('some/other/key')).toEqual([]);
  });

  test('blackhole: never answers, even after switching away, until the client aborts or close()', async () => {
    await proxy.set({ kind: 'blackhole' });
    const started = Date.now();
    const timedOut = await failure(
      put('bh/a', undefined, { abortSignal: AbortSignal.timeout(600) }),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    // The SDK wraps the signal's reason: AbortError caused by the DOMException TimeoutError.
    expect(timedOut.name).toBe('AbortError');
    expect(timedOut.cause?.name).toBe('TimeoutError');
    const a = only(proxy.putAttempts('bh/a'));
    expect(a.fault).toBe('blackhole');
    expect(a.bytesIn).toBe(Buffer.byteLength('body of bh/a')); // the request was read in full
    await vi.waitFor(() => expect(a.outcome).toBe('client-aborted'));

    // A request held before the switch stays held after it; only new requests pass.
    let heldSettled = false;
    const held = failure(put('bh/b')).finally(() => {
      heldSettled = true;
    });
    await vi.waitFor(() => expect(proxy.putAttempts('bh/b')[0]?.outcome).toBe('blackholed'));
    await proxy.set({ kind: 'pass' });
    expect((await put('bh/c')).$metadata.httpStatusCode).toBe(200);
    await sleep(200);
    expect(heldSettled).toBe(false);
    expect(only(proxy.putAttempts('bh/b')).outcome).toBe('blackholed');

    // close() destroys the held socket: the client sees the connection reset.
    await proxy.close();
    const dropped = await held;
    expect(dropped.code).toBe('ECONNRESET');
    expect(dropped.name).toBe('TimeoutError'); // node-http-handler renames ECONNRESET errors
    expect(only(proxy.putAttempts('bh/b')).outcome).toBe('dropped');
    expect(await upstreamObject('bh/a')).toBeUndefined();
    expect(await upstreamObject('bh/b')).toBeUndefined();
    expect(await upstreamObject('bh/c')).toBeDefined();
  });

  test('refuse: ECONNREFUSED for new connections, open sockets destroyed, same port afterwards', async () => {
    await put('refuse/warm'); // leaves a pooled keep-alive socket in `client`
    await proxy.set({ kind: 'blackhole' });
    const other = viaProxy();
    const held = failure(put('refuse/held', undefined, { via: other }));
    await vi.waitFor(() => expect(proxy.putAttempts('refuse/held')[0]?.outcome).toBe('blackholed'));
    const endpoint = proxy.endpoint;

    await proxy.set({ kind: 'refuse' });
    expect((await held).code).toBe('ECONNRESET');
    expect(only(proxy.putAttempts('refuse/held')).outcome).toBe('dropped');

    const fresh = viaProxy();
    const refused = await failure(put('refuse/fresh', undefined, { via: fresh }));
    expect(refused.code).toBe('ECONNREFUSED');
    expect(refused.name).toBe('Error');
    // A client holding a pooled socket may first reuse it before noticing it was closed.
    const pooled = await failure(put('refuse/pooled'));
    expect(['ECONNRESET', 'ECONNREFUSED']).toContain(pooled.code);
    expect((await failure(put('refuse/pooled'))).code).toBe('ECONNREFUSED');
    expect(proxy.attempts).toHaveLength(2); // refused connections never reach HTTP

    await proxy.set({ kind: 'pass' });
    expect(proxy.endpoint).toBe(endpoint);
    expect((await put('refuse/after', undefined, { via: fresh })).$metadata.httpStatusCode).toBe(
      200,
    );
    expect(only(proxy.putAttempts('refuse/after')).outcome).toBe('upstream 200');
    other.destroy();
    fresh.destroy();
  });

  test('reset: reads part of the request, then the client sees ECONNRESET', async () => {
    await proxy.set({ kind: 'reset' });
    const body = Buffer.alloc(1024 * 1024, 0x61); // under the SDK's 2 MiB Expect: 100-continue threshold
    const reset = await failure(put('reset/big', body));
    // EPIPE would be possible if the RST arrived while the client was still writing.
    expect(['ECONNRESET', 'EPIPE']).toContain(reset.code);
    expect(reset.name).toBe('TimeoutError'); // node-http-handler renames ECONNRESET/EPIPE errors
    expect(reset.$metadata?.httpStatusCode).toBeUndefined();
    const attempt = only(proxy.putAttempts('reset/big'));
    expect(attempt.outcome).toBe('reset');
    expect(attempt.bytesIn).toBeGreaterThan(0);
    expect(attempt.bytesIn).toBeLessThan(body.length);

    // A request without a body is reset once its headers are read.
    const get = await failure(client.send(new GetObjectCommand({ Bucket: bucket, Key: 'x' })));
    expect(get.code).toBe('ECONNRESET');
    expect(proxy.attempts.map((a) => `${a.method} ${a.outcome}`)).toEqual([
      'PUT reset',
      'GET reset',
    ]);
    expect(await upstreamObject('reset/big')).toBeUndefined();
  });

  test.each([
    { status: 500, code: 'InternalError' },
    { status: 503, code: 'SlowDown', retryAfter: '3' },
    { status: 403, code: 'AccessDenied' },
    { status: 404, code: 'NoSuchBucket' },
  ])(
    'status $status $code: S3-style XML error the SDK parses, nothing forwarded',
    async ({ status, code, retryAfter }) => {
      await proxy.set({ kind: 'status', status, code, ...(retryAfter ? { retryAfter } : {}) });
      const key = `status/${status}`;
      const error = await failure(put(key));
      expect(error.name).toBe(code);
      expect(error.$metadata?.httpStatusCode).toBe(status);
      expect(error.$response?.headers?.['retry-after']).toBe(retryAfter);
      const attempt = only(proxy.putAttempts(key));
      expect(attempt.outcome).toBe(`status ${status}`);
      expect(attempt.bytesIn).toBe(Buffer.byteLength(`body of ${key}`)); // body consumed
      expect(await upstreamObject(key)).toBeUndefined();

      // The connection survives an error answer.
      await proxy.set({ kind: 'pass' });
      expect((await put(key)).$metadata.httpStatusCode).toBe(200);
    },
  );

  test('throttle: request and response bytes both paced to the rate', async () => {
    const rate = 32 * 1024;
    await proxy.set({ kind: 'throttle', bytesPerSecond: rate });
    const body = Buffer.alloc(rate, 0x62); // one second's worth each way
    let started = Date.now();
    await put('throttle/one', body);
    const upload = Date.now() - started;
    started = Date.now();
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'throttle/one' }));
    expect(await bytes(got.Body)).toEqual(body);
    const download = Date.now() - started;
    expect(upload).toBeGreaterThanOrEqual(900);
    expect(upload).toBeLessThan(3_000);
    expect(download).toBeGreaterThanOrEqual(900);
    expect(download).toBeLessThan(3_000);
    expect(proxy.attempts.map((a) => `${a.method} ${a.fault} ${a.outcome}`)).toEqual([
      'PUT throttle upstream 200',
      'GET throttle upstream 200',
    ]);
  });

  test('delay: forwards at once, holds the answer; an abort in between still leaves the write landed', async () => {
    await proxy.set({ kind: 'delay', millis: 600 });
    let started = Date.now();
    expect((await put('delay/ok')).$metadata.httpStatusCode).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(590);

    await proxy.set({ kind: 'delay', millis: 5_000 });
    started = Date.now();
    const aborted = await failure(
      put('delay/aborted', undefined, { abortSignal: AbortSignal.timeout(400) }),
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(aborted.name).toBe('AbortError');
    const attempt = only(proxy.putAttempts('delay/aborted'));
    await vi.waitFor(() => expect(attempt.outcome).toBe('client-aborted'));
    expect(attempt.upstreamStatus).toBe(200);
    expect(await upstreamObject('delay/aborted')).toEqual(Buffer.from('body of delay/aborted'));
  });

  test('corrupt: the body arrives with a byte flipped and is refused; with once, the next one passes', async () => {
    await proxy.set({ kind: 'corrupt', once: true });
    const key = 'corrupt/one';
    const refused = await failure(put(key));
    expect(refused.$metadata?.httpStatusCode).toBe(400);
    expect(refused.name).toMatch(/^(BadDigest|XAmzContentSHA256Mismatch)$/);
    expect(await upstreamObject(key)).toBeUndefined();
    expect(proxy.fault).toEqual({ kind: 'pass' });
    await put(key);
    expect(await upstreamObject(key)).toEqual(Buffer.from(`body of ${key}`));
    expect(proxy.putAttempts(key).map((a) => [a.fault, a.outcome])).toEqual([
      ['corrupt', 'upstream 400'],
      ['pass', 'upstream 200'],
    ]);
  });

  test('lose-response: the write lands upstream, the client sees ECONNRESET; a retry gets 412', async () => {
    await proxy.set({ kind: 'lose-response' });
    const key = 'lose/one';
    const lost = await failure(put(key));
    expect(lost.code).toBe('ECONNRESET');
    expect(lost.name).toBe('TimeoutError');
    expect(lost.$metadata?.httpStatusCode).toBeUndefined();
    expect(await upstreamObject(key)).toEqual(Buffer.from(`body of ${key}`));

    await proxy.set({ kind: 'pass' });
    const retry = await failure(put(key));
    expect(retry.name).toBe('PreconditionFailed');
    expect(proxy.putAttempts(key).map((a) => [a.fault, a.outcome, a.upstreamStatus])).toEqual([
      ['lose-response', 'lost-response', 200],
      ['pass', 'upstream 412', 412],
    ]);
  });
});
