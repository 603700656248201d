/**
 * The exporter's own PutObject requests, against a local HTTP server that records what arrives
 * and answers as scripted. Proof that S3 accepts them (signatures, headers, checksums) comes from
 * the integration tests against a real server; these pin what a server cannot easily be made to
 * do: a skewed clock, an HTML error page, credentials that expire.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { errorFromResponse } from '../../../src/s3/error-response.js';
import { objectAddress } from '../../../src/s3/object-address.js';
import type { PutRequest } from '../../../src/s3/object-writer.js';
import { SignedObjectWriter, type SignedWriterSettings } from '../../../src/s3/signed-writer.js';
import { classifyUploadError } from '../../../src/s3/verdict.js';

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

let server: Server | undefined;
afterEach(() => server?.close());

/** A server that answers from the script (then 200), recording each request's headers. */
async function scripted(answers: Answer[]) {
  const seen: IncomingHttpHeaders[] = [];
  server = createServer((request, response) => {
    seen.push(request.headers);
    const answer = answers.shift() ?? { status: 200 };
    request.resume().on('end', () => {
      response.writeHead(answer.status, answer.headers ?? {});
      response.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { seen, endpoint };
}

function writer(endpoint: string, settings: Partial<SignedWriterSettings> = {}) {
  return new SignedObjectWriter({
    address: objectAddress({ bucket: 'b', region: 'us-east-1', endpoint, forcePathStyle: true }),
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
    userAgent: undefined,
    connectTimeoutMillis: 1_000,
    fields: {},
    ...settings,
  });
}

const put = (key = 'k.json'): PutRequest => ({
  key,
  body: Buffer.from('{}'),
  contentType: 'application/json',
  ifNoneMatch: false,
  crc32: undefined,
  sha256: undefined,
  signal: new AbortController().signal,
});

/** `x-amz-date` (20261201T221500Z) as epoch milliseconds. */
const amzDate = (headers: IncomingHttpHeaders) =>
  Date.parse(
    String(headers['x-amz-date']).replace(
      /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/,
      '$1-$2-$3T$4:$5:$6Z',
    ),
  );

/** A server that answers 200 and keeps each request's body and headers. */
async function recording() {
  const bodies: { headers: IncomingHttpHeaders; body: Buffer }[] = [];
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push({ headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(200);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { bodies, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('SignedObjectWriter', () => {
  test.each([false, true])(
    'a body of many socket slices arrives whole and in order, with its length and hash (background %s)',
    async (background) => {
      const { bodies, endpoint } = await recording();
      // Not a multiple of the slice, and every byte tells its position.
      const body = Buffer.alloc(1024 * 1024 + 5);
      for (let i = 0; i < body.length; i += 4) body.writeUInt32LE(i, Math.min(i, body.length - 4));
      const sha256 = createHash('sha256').update(body).digest('hex');
      await writer(endpoint).put({ ...put(), body, sha256, background });
      expect(bodies).toHaveLength(1);
      expect(bodies[0]?.headers['content-length']).toBe(String(body.length));
      expect(bodies[0]?.headers['x-amz-content-sha256']).toBe(sha256);
      expect(bodies[0]?.body.equals(body)).toBe(true);
    },
  );

  // The startup check's PUT goes on a connection of its own (background): it once looked up
  // "[::1]" as a host name (getaddrinfo ENOTFOUND) and reported a working endpoint unreachable.
  test.each([false, true])(
    'an IPv6 literal endpoint is reached, with its brackets in the Host header (background %s)',
    async (background) => {
      const seen: { host: string | undefined; url: string | undefined }[] = [];
      server = createServer((request, response) => {
        seen.push({ host: request.headers.host, url: request.url });
        request.resume().on('end', () => response.end());
      });
      await new Promise<void>((resolve) => server?.listen(0, '::1', resolve));
      const port = (server.address() as AddressInfo).port;
      const w = writer(`http://[::1]:${port}`);
      await w.put({ ...put('a b/k.json'), background });
      w.destroy();
      expect(seen).toEqual([{ host: `[::1]:${port}`, url: '/b/a%20b/k.json' }]);
    },
  );

  test('a clock an hour behind the server: refused once, then signed in server time', async () => {
    const ahead = new Date(Date.now() + 3_600_000).toUTCString();
    const { seen, endpoint } = await scripted([
      {
        status: 403,
        headers: { date: ahead, 'content-type': 'application/xml' },
        body: '<?xml version="1.0"?><Error><Code>RequestTimeTooSkewed</Code><Message>The difference is too large.</Message></Error>',
      },
    ]);
    const w = writer(endpoint);
    const error = await w.put(put()).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'RequestTimeTooSkewed',
      message: 'The difference is too large.',
      $metadata: { httpStatusCode: 403 },
    });
    expect(classifyUploadError(error)).toEqual({ kind: 'retry', reason: 'server' });
    await w.put(put());
    w.destroy();
    const [first, second] = seen.map(amzDate) as [number, number];
    expect(Math.abs(first - Date.now())).toBeLessThan(60_000);
    expect(Math.abs(second - (Date.now() + 3_600_000))).toBeLessThan(60_000);
  });

  // Some servers answer a signing time outside S3's 15-minute window with 403
  // SignatureDoesNotMatch, not RequestTimeTooSkewed. It was taken for a wrong secret (a
  // configuration fault, retried slowly) and the working credentials were asked for again.
  test.each([
    ['an hour ahead', 3_600_000],
    ['20 minutes behind', -20 * 60_000],
  ])(
    "SignatureDoesNotMatch, the server's Date %s: a skew, retried, then signed in server time",
    async (_, off) => {
      const refusal = (date: string): Answer => ({
        status: 403,
        headers: { date, 'content-type': 'application/xml' },
        body: '<Error><Code>SignatureDoesNotMatch</Code><Message>No.</Message></Error>',
      });
      const { seen, endpoint } = await scripted([
        refusal(new Date(Date.now() + off).toUTCString()),
      ]);
      let calls = 0;
      const credentials = async () => {
        calls++;
        return { accessKeyId: 'AKID', secretAccessKey: 'secret' };
      };
      const w = writer(endpoint, { credentials });
      const error = await w.put(put()).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'SignatureDoesNotMatch' });
      expect(classifyUploadError(error)).toEqual({ kind: 'retry', reason: 'server' });
      await w.put(put());
      w.destroy();
      expect(calls).toBe(1); // the credentials were not refused
      const [, second] = seen.map(amzDate) as [number, number];
      expect(Math.abs(second - (Date.now() + off))).toBeLessThan(60_000);
    },
  );

  test('SignatureDoesNotMatch with a Date within 15 minutes of the signing time: bad credentials', async () => {
    const { endpoint } = await scripted([
      {
        status: 403,
        headers: { date: new Date(Date.now() + 10 * 60_000).toUTCString() },
        body: '<Error><Code>SignatureDoesNotMatch</Code><Message>No.</Message></Error>',
      },
    ]);
    const w = writer(endpoint);
    const error = await w.put(put()).catch((e: unknown) => e);
    w.destroy();
    expect(classifyUploadError(error)).toMatchObject({ kind: 'config', reason: 'bad-credentials' });
  });

  // Some S3-compatible servers wrap the error in <ErrorResponse>, as AWS's query protocol does:
  // once unread, a 404 NoSuchBucket was dropped as fatal and a 403 quota taken for a permission.
  test.each([
    [403, 'AccessDenied', 'access-denied'],
    [403, 'QuotaExceeded', 'quota-exceeded'],
    [404, 'NoSuchBucket', 'no-such-bucket'],
    [400, 'InvalidAccessKeyId', 'bad-credentials'],
  ])('an <ErrorResponse>-wrapped %i %s is classified by its code', async (status, code, reason) => {
    const { endpoint } = await scripted([
      {
        status,
        headers: { 'content-type': 'text/xml' },
        body: `<?xml version="1.0"?>\n<ErrorResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><Error><Type>Sender</Type><Code>${code}</Code><Message>No.</Message></Error><RequestId>r1</RequestId></ErrorResponse>`,
      },
    ]);
    const w = writer(endpoint);
    const error = await w.put(put()).catch((e: unknown) => e);
    w.destroy();
    expect(error).toMatchObject({
      name: code,
      message: 'No.',
      $metadata: { httpStatusCode: status },
    });
    expect(classifyUploadError(error)).toMatchObject({ kind: 'config', reason });
  });

  test('error bodies of any other shape give no code: the status decides', () => {
    for (const body of [
      '<Other><Error><Code>NoSuchBucket</Code></Error></Other>',
      '<ErrorResponse><Code>NoSuchBucket</Code></ErrorResponse>',
      '<ErrorResponse><Error><Code>NoSuchBucket</Code></Error><Error><Code>AccessDenied</Code></Error></ErrorResponse>',
      '<ErrorResponse><Error><Code><X>NoSuchBucket</X></Code></Error></ErrorResponse>',
      '<ErrorResponse>NoSuchBucket</ErrorResponse>',
      '<ErrorResponse><Error><Code>NoSuchBucket</Code></Error>',
    ]) {
      expect(errorFromResponse(400, {}, Buffer.from(body)).name, body).toBe('UnknownError');
    }
  });

  test("a proxy's HTML error page: the status decides, as with the SDK", async () => {
    const { endpoint } = await scripted([
      { status: 502, headers: { 'content-type': 'text/html' }, body: '<html><h1>Bad gateway' },
      { status: 404, body: '' },
    ]);
    const w = writer(endpoint);
    const bad = await w.put(put()).catch((e: unknown) => e);
    expect(bad).toMatchObject({
      name: 'UnknownError',
      // What the page said, in one line: the operator sees which server answered.
      message: 'not an S3 answer: "Bad gateway"',
      $metadata: { httpStatusCode: 502 },
    });
    expect(classifyUploadError(bad)).toEqual({ kind: 'retry', reason: 'server' });
    const missing = await w.put(put()).catch((e: unknown) => e);
    expect(missing).toMatchObject({
      name: 'NotFound',
      message: 'NotFound',
      $metadata: { httpStatusCode: 404 },
    });
    w.destroy();
  });

  test('credentials from a provider are asked for again only when they near expiry', async () => {
    const { seen, endpoint } = await scripted([]);
    /** A provider whose credentials (named prefix + call number) expire `lifetime` ms after each call. */
    const provider = (prefix: string, lifetime: number) => {
      const counter = { calls: 0 };
      const credentials = async () => {
        counter.calls++;
        return {
          accessKeyId: `${prefix}${counter.calls}`,
          secretAccessKey: 's',
          expiration: new Date(Date.now() + lifetime),
        };
      };
      return { counter, credentials };
    };
    /** Three PUTs through a writer signing with `credentials`. */
    const putThree = async (credentials: SignedWriterSettings['credentials']) => {
      const w = writer(endpoint, { credentials });
      for (let i = 0; i < 3; i++) await w.put(put());
      w.destroy();
    };
    const lasting = provider('L', 3_600_000);
    await putThree(lasting.credentials);
    expect(lasting.counter.calls).toBe(1);
    // Within the SDK's five-minute refresh window: fetched again before each use.
    const expiring = provider('E', 60_000);
    await putThree(expiring.credentials);
    const keys = seen.map((h) => /Credential=([^/]+)\//.exec(String(h.authorization))?.[1]);
    expect(keys.slice(0, 3)).toEqual(['L1', 'L1', 'L1']);
    // Each request signed with credentials fetched for it (the first use fetches twice, as the
    // SDK's memoizer does when the first answer is already near expiry).
    expect(new Set(keys.slice(3)).size).toBe(3);
    expect(expiring.counter.calls).toBeGreaterThanOrEqual(3);
  });
});

describe('credentials whose refresh fails', () => {
  /** A provider whose n-th call (from 1) answers `script[n-1]`: a lifetime in ms, or an error. */
  const scriptedProvider = (script: (number | Error)[]) => {
    const counter = { calls: 0 };
    const credentials = async () => {
      const step = script[counter.calls++];
      await new Promise((resolve) => setTimeout(resolve, 20)); // concurrent asks overlap
      if (step === undefined || step instanceof Error) throw step ?? new Error('no more');
      return {
        accessKeyId: `K${counter.calls}`,
        secretAccessKey: 's',
        sessionToken: `T${counter.calls}`,
        expiration: new Date(Date.now() + step),
      };
    };
    return { counter, credentials };
  };
  const signedWith = (h: IncomingHttpHeaders) => ({
    key: /Credential=([^/]+)\//.exec(String(h.authorization))?.[1],
    token: h['x-amz-security-token'],
    tokenSigned: /SignedHeaders=[^,]*x-amz-security-token/.test(String(h.authorization)),
  });

  // A refresh that fails while the held credentials still have minutes to live (the SDK's
  // refresh window is the last 5) failed every upload: the server would have taken them.
  test('within the refresh window, a failed refresh signs with the held credentials, once asked per wave', async () => {
    const { seen, endpoint } = await scripted([]);
    const { counter, credentials } = scriptedProvider([
      60_000,
      new Error('IMDS is down'),
      new Error('IMDS is down'),
      3_600_000,
    ]);
    const w = writer(endpoint, { credentials });
    await w.put(put()); // call 1: K1, in its refresh window from the start
    // Twenty uploads at once: one question to the provider (call 2, fails), all signed with K1.
    await Promise.all(Array.from({ length: 20 }, () => w.put(put())));
    expect(counter.calls).toBe(2);
    await w.put(put()); // call 3 fails too: K1 still
    await w.put(put()); // call 4: K4, kept for an hour
    await w.put(put());
    w.destroy();
    expect(counter.calls).toBe(4);
    const signed = seen.map(signedWith);
    expect(signed.slice(0, 22)).toEqual(
      Array.from({ length: 22 }, () => ({ key: 'K1', token: 'T1', tokenSigned: true })),
    );
    expect(signed.slice(22)).toEqual([
      { key: 'K4', token: 'T4', tokenSigned: true },
      { key: 'K4', token: 'T4', tokenSigned: true },
    ]);
  });

  /** A provider whose n-th call answers `script[n-1]`: a lifetime in ms, or `hang` (never). */
  const hangingProvider = (script: (number | 'hang')[]) => {
    const counter = { calls: 0 };
    const credentials = () => {
      const step = script[counter.calls++];
      if (step === 'hang') return new Promise<never>(() => {});
      if (step === undefined) return Promise.reject(new Error('no more'));
      return Promise.resolve({
        accessKeyId: `K${counter.calls}`,
        secretAccessKey: 's',
        expiration: new Date(Date.now() + step),
      });
    };
    return { counter, credentials };
  };
  const within = (millis: number): PutRequest => ({
    ...put(),
    signal: AbortSignal.timeout(millis),
  });

  // A refresh that hangs (a metadata service that takes the connection and never answers) while
  // the held credentials still have minutes to live failed every upload at its deadline, as
  // CredentialsProviderTimeout: the server would have taken them.
  test('within the refresh window, a refresh that hangs signs with the held credentials', async () => {
    const { seen, endpoint } = await scripted([]);
    const { counter, credentials } = hangingProvider([4 * 60_000, 'hang']);
    const w = writer(endpoint, { credentials });
    await w.put(put()); // call 1: K1, in its refresh window (the last 5 minutes) from the start
    await Promise.all(Array.from({ length: 5 }, () => w.put(within(4_000))));
    const started = Date.now();
    await w.put(within(4_000)); // the question in flight is not waited on again
    const waited = Date.now() - started;
    w.destroy();
    expect(counter.calls).toBe(2);
    expect(seen.map((h) => /Credential=([^/]+)\//.exec(String(h.authorization))?.[1])).toEqual(
      Array.from({ length: 7 }, () => 'K1'),
    );
    expect(waited).toBeLessThan(500);
  });

  // Past their expiration, a refresh that hangs fails the request at its deadline; the question
  // was then kept in flight for good (never asked again), so every later upload failed too.
  test('past their expiration, a refresh that hangs fails that request, and the next asks again', async () => {
    const { seen, endpoint } = await scripted([]);
    const { counter, credentials } = hangingProvider([50, 'hang', 3_600_000]);
    const w = writer(endpoint, { credentials });
    await w.put(put());
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(w.put(within(300))).rejects.toMatchObject({ name: 'CredentialsProviderTimeout' });
    await w.put(within(4_000)); // call 3: K3
    w.destroy();
    expect(counter.calls).toBe(3);
    expect(seen.map((h) => /Credential=([^/]+)\//.exec(String(h.authorization))?.[1])).toEqual([
      'K1',
      'K3',
    ]);
  });

  test('past their expiration, a failed refresh fails the upload with its error', async () => {
    const { seen, endpoint } = await scripted([]);
    const { credentials } = scriptedProvider([50, new Error('IMDS is down')]);
    const w = writer(endpoint, { credentials });
    await w.put(put());
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(w.put(put())).rejects.toThrow('IMDS is down');
    w.destroy();
    expect(seen).toHaveLength(1);
  });

  test('credentials the server refused are not fallen back on when their refresh fails', async () => {
    const refused = {
      status: 403,
      headers: { 'content-type': 'application/xml' },
      body: '<Error><Code>ExpiredToken</Code><Message>The provided token has expired.</Message></Error>',
    };
    const { seen, endpoint } = await scripted([refused]);
    const { credentials } = scriptedProvider([60_000, new Error('IMDS is down')]);
    const w = writer(endpoint, { credentials });
    await expect(w.put(put())).rejects.toMatchObject({ name: 'ExpiredToken' });
    await expect(w.put(put())).rejects.toThrow('IMDS is down');
    w.destroy();
    expect(seen).toHaveLength(1);
  });
});
