import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

/** What the proxy does with each request that arrives while the fault is set. */
export type Fault =
  | { kind: 'pass' }
  /** Accepts and reads the request, never answers; the socket stays open. */
  | { kind: 'blackhole' }
  /** Stops listening (new connections get ECONNREFUSED) and destroys every open socket. */
  | { kind: 'refuse' }
  /** Reads the headers and the first body chunk, then resets the TCP connection (RST). */
  | { kind: 'reset' }
  /** Consumes the body and answers with an S3-style XML error; nothing reaches the upstream. */
  | { kind: 'status'; status: number; code: string; retryAfter?: string }
  /** Forwards, pacing request and response bodies to this rate (headers pass unpaced). */
  | { kind: 'throttle'; bytesPerSecond: number }
  /** Forwards at once (the write lands), but holds the upstream's answer this long. */
  | { kind: 'delay'; millis: number }
  /** Forwards (the write lands), then resets the client connection instead of answering. */
  | { kind: 'lose-response' }
  /** Reads the request's headers and forwards it only once `until` settles (a late GET). */
  | { kind: 'hold'; until: Promise<unknown> }
  /**
   * Forwards with the body's first byte flipped, as damage in transit does: the upstream finds
   * that it does not match its signed hash and refuses it (400). With `once`, only the next
   * request with a body is damaged, and the fault is 'pass' from then on.
   */
  | { kind: 'corrupt'; once?: boolean }
  /**
   * Answers requests with If-None-Match with an error (default 501 NotImplemented: a server
   * without conditional writes; some answer 400); forwards the rest.
   */
  | { kind: 'reject-conditional'; status?: number; code?: string };

export type FaultKind = Fault['kind'];

/** What once() matches a request on. */
export type ProxyRequest = Pick<ProxyAttempt, 'method' | 'bucket' | 'key'>;

/** One request as the proxy saw it. */
export interface ProxyAttempt {
  /** Date.now() when the request headers arrived. */
  at: number;
  method: string;
  /** First path segment, URL-decoded ('' for the service root). */
  bucket: string;
  /** The rest of the path, each segment URL-decoded, without the query string. */
  key: string;
  /** The fault in force when the request arrived, or its once(): for the whole exchange. */
  fault: FaultKind;
  /**
   * 'pending' until known ('held' while a 'hold' fault holds it), then one of:
   * 'upstream <status>' (answered by the upstream), 'status <status>' (answered by a 'status'
   * fault), 'blackholed' (request read, held), 'reset', 'lost-response', 'client-aborted'
   * (the client closed before a complete answer), 'dropped' (refuse or close() destroyed the
   * connection), 'upstream-error <code>' (the upstream could not be reached; the proxy
   * answered 502).
   */
  outcome: string;
  /** The upstream's status, when the request was forwarded and the upstream answered. */
  upstreamStatus?: number;
  /** The If-None-Match request header, when present. */
  ifNoneMatch?: string;
  /** Request body bytes the proxy has read so far. */
  bytesIn: number;
  /** The request headers, lowercased names. */
  headers: http.IncomingHttpHeaders;
}

/**
 * An HTTP reverse proxy between an S3 client and a real S3 server whose behaviour a test can
 * switch while it runs. Method, path and all headers are forwarded verbatim, Host included: the
 * client signed (SigV4) the Host it used, the proxy's, and the upstream checks the signature
 * against the Host it receives. Bodies are streamed. Each request keeps the fault that was in
 * force when it arrived, so switching away from 'blackhole' leaves held requests hanging.
 */
export class FaultProxy {
  /** Every request, in arrival order; connections refused while 'refuse' never appear. */
  readonly attempts: ProxyAttempt[] = [];
  readonly #upstream: URL;
  readonly #server: http.Server;
  readonly #sockets = new Set<Socket>();
  readonly #upstreamRequests = new Set<http.ClientRequest>();
  /** Settles each exchange still waiting for an answer as 'dropped'. */
  readonly #unanswered = new Set<() => void>();
  #fault: Fault = { kind: 'pass' };
  /** Faults for one request each, ahead of the fault in force: see once(). */
  readonly #once: { match: (request: ProxyRequest) => boolean; fault: Fault }[] = [];
  #port = 0;
  #switching: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(upstream: URL) {
    this.#upstream = upstream;
    this.#server = http.createServer({
      // The proxy never times anything out itself (no 408s while black-holing, no idle closes
      // racing a client's reuse of a pooled socket): deadlines are the client's business.
      requestTimeout: 0,
      headersTimeout: 0,
      keepAliveTimeout: 0,
    });
    this.#server.timeout = 0;
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    this.#server.on('request', (req, res) => this.#handle(req, res));
  }

  /** Starts a proxy on an ephemeral 127.0.0.1 port in front of `upstream` (http only). */
  static async start(upstream: string): Promise<FaultProxy> {
    const url = new URL(upstream);
    if (url.protocol !== 'http:') throw new Error(`FaultProxy upstream must be http: ${upstream}`);
    const proxy = new FaultProxy(url);
    await proxy.#listen();
    return proxy;
  }

  /** http://127.0.0.1:<port>; the port stays the same across 'refuse'. */
  get endpoint(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get fault(): Fault {
    return this.#fault;
  }

  /** Switches the behaviour for requests (and, for 'refuse', connections) from now on. */
  async set(fault: Fault): Promise<void> {
    if (fault.kind === 'throttle' && !(fault.bytesPerSecond > 0)) {
      throw new Error('throttle needs bytesPerSecond > 0');
    }
    // Serialized so a quick refuse/pass/refuse sequence closes and re-listens in order.
    const next = this.#switching.then(async () => {
      if (this.#closed) throw new Error('FaultProxy is closed');
      const wasRefusing = this.#fault.kind === 'refuse';
      this.#fault = fault;
      if (fault.kind === 'refuse' && !wasRefusing) await this.#stopListening();
      else if (fault.kind !== 'refuse' && wasRefusing) await this.#listen();
    });
    this.#switching = next.catch(() => undefined);
    return next;
  }

  /**
   * The first request from now on that `match` picks gets `fault` (a per-request one, not
   * 'refuse'), the fault in force then applies again: e.g. one PUT of one kind of key loses its
   * answer while the rest pass.
   */
  once(match: (request: ProxyRequest) => boolean, fault: Fault): void {
    if (fault.kind === 'refuse') throw new Error("once() takes a request's fault, not 'refuse'");
    this.#once.push({ match, fault });
  }

  /**
   * The PUT attempts of uploads: every PUT but the exporter's startup check (a PutObject under
   * `_otel_s3_check/` that stores nothing, sent once as an exporter starts).
   */
  uploadAttempts(): ProxyAttempt[] {
    return this.putAttempts().filter((a) => !/(^|\/)_otel_s3_check\//.test(a.key));
  }

  /** PUT attempts, optionally only those for one key. */
  putAttempts(key?: string): ProxyAttempt[] {
    return this.attempts.filter((a) => a.method === 'PUT' && (key === undefined || a.key === key));
  }

  /** Stops listening and destroys every connection, black-holed ones included. Idempotent. */
  async close(): Promise<void> {
    await this.#switching;
    if (this.#closed) return;
    this.#closed = true;
    if (this.#fault.kind === 'refuse') this.#dropAll();
    else await this.#stopListening();
  }

  #listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      // Port 0 the first time; afterwards the same port, so the endpoint stays valid.
      this.#server.listen(this.#port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        this.#port = (this.#server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  async #stopListening(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#dropAll();
    await closed;
  }

  #dropAll(): void {
    for (const drop of [...this.#unanswered]) drop();
    for (const socket of this.#sockets) socket.destroy();
    for (const request of this.#upstreamRequests) request.destroy();
  }

  /** The fault for this request: the first once() that picks it (used up), else the one set. */
  #faultFor(request: ProxyRequest): Fault {
    const at = this.#once.findIndex((o) => o.match(request));
    if (at === -1) return this.#fault;
    return this.#once.splice(at, 1)[0]?.fault ?? this.#fault;
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const target = parseTarget(req.url ?? '/');
    const set = this.#faultFor({ method: req.method ?? '', ...target });
    const ifNoneMatch = req.headers['if-none-match'];
    const fault: Fault =
      set.kind !== 'reject-conditional'
        ? set
        : ifNoneMatch === undefined
          ? { kind: 'pass' }
          : { kind: 'status', status: set.status ?? 501, code: set.code ?? 'NotImplemented' };
    if (set.kind === 'corrupt' && set.once === true && Number(req.headers['content-length']) > 0)
      this.#fault = { kind: 'pass' };
    const attempt: ProxyAttempt = {
      at: Date.now(),
      method: req.method ?? '',
      ...target,
      fault: set.kind,
      outcome: 'pending',
      bytesIn: 0,
      headers: req.headers,
    };
    if (ifNoneMatch !== undefined) attempt.ifNoneMatch = ifNoneMatch;
    this.attempts.push(attempt);

    // Interim outcomes are written to attempt.outcome directly; settle() makes one final.
    let settled = false;
    let upstreamRequest: http.ClientRequest | undefined;
    let upstreamResponse: http.IncomingMessage | undefined;
    let delayTimer: NodeJS.Timeout | undefined;
    const settle = (outcome: string): void => {
      if (settled) return;
      settled = true;
      attempt.outcome = outcome;
      this.#unanswered.delete(drop);
    };
    const drop = (): void => settle('dropped');
    this.#unanswered.add(drop);

    // Listeners below are all attached in this tick, so no body chunk is missed.
    req.on('data', (chunk: Buffer) => {
      attempt.bytesIn += chunk.length;
    });
    req.on('error', () => undefined); // the client went away; res 'close' records it
    res.on('error', () => undefined);
    res.on('finish', () => settle(attempt.outcome));
    res.on('close', () => {
      settle('client-aborted'); // no-op when already settled
      clearTimeout(delayTimer);
      // A client that gives up mid-request should look the same to the upstream.
      upstreamRequest?.destroy();
      upstreamResponse?.destroy();
    });
    const resetClient = (outcome: string): void => {
      settle(outcome);
      req.socket.resetAndDestroy();
    };

    switch (fault.kind) {
      case 'blackhole':
        req.on('end', () => {
          if (!settled) attempt.outcome = 'blackholed';
        });
        return;
      case 'reset': {
        // The 'data' listener above keeps the request flowing; 'end' covers bodiless requests.
        const cut = () => resetClient('reset');
        req.once('data', cut);
        req.once('end', cut);
        return;
      }
      case 'status':
        req.on('end', () => {
          if (settled) return;
          attempt.outcome = `status ${fault.status}`;
          const body = errorXml(fault.code, req.url ?? '/', attempt);
          res.writeHead(fault.status, {
            'content-type': 'application/xml',
            'content-length': Buffer.byteLength(body),
            'x-amz-request-id': requestId(attempt),
            ...(fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter }),
          });
          res.end(body);
        });
        req.resume();
        return;
      case 'refuse': // a request can arrive on a connection accepted just before the switch
        drop();
        res.destroy();
        return;
    }

    // pass, throttle, delay, lose-response, corrupt, hold (once released): forward to the upstream.
    const forward = (): void => {
      const upstream = http.request({
        host: this.#upstream.hostname,
        port: this.#upstream.port || 80,
        method: req.method,
        path: req.url,
        headers: req.rawHeaders, // verbatim, including Host: the signature covers it
        agent: false, // a fresh upstream connection each time: no pooled-socket races in tests
      });
      upstreamRequest = upstream;
      this.#upstreamRequests.add(upstream);
      upstream.on('close', () => this.#upstreamRequests.delete(upstream));
      upstream.on('response', (up) => {
        upstreamResponse = up;
        attempt.upstreamStatus = up.statusCode;
        up.on('error', () => res.destroy());
        if (settled) {
          up.destroy();
          return;
        }
        if (fault.kind === 'lose-response') {
          // The upstream has answered, so the write has landed; the client never hears of it.
          resetClient('lost-response');
          return;
        }
        attempt.outcome = `upstream ${up.statusCode}`;
        const answer = () => {
          res.writeHead(up.statusCode ?? 502, up.statusMessage, up.rawHeaders);
          if (fault.kind === 'throttle') up.pipe(pace(fault.bytesPerSecond)).pipe(res);
          else up.pipe(res);
        };
        if (fault.kind === 'delay') delayTimer = setTimeout(answer, fault.millis);
        else answer();
      });
      upstream.on('error', (error: NodeJS.ErrnoException) => {
        if (settled) return;
        if (res.headersSent) {
          res.destroy();
          return;
        }
        attempt.outcome = `upstream-error ${error.code ?? error.message}`;
        const body = errorXml('BadGateway', req.url ?? '/', attempt);
        res.writeHead(502, { 'content-type': 'application/xml', connection: 'close' });
        res.end(body);
      });
      if (fault.kind === 'throttle') req.pipe(pace(fault.bytesPerSecond)).pipe(upstream);
      else if (fault.kind === 'corrupt') req.pipe(flipFirstByte()).pipe(upstream);
      else req.pipe(upstream);
    };

    if (fault.kind === 'hold') {
      req.pause(); // the body waits too; pipe() resumes it
      attempt.outcome = 'held';
      void fault.until.then(() => {
        if (!settled) forward();
      });
    } else forward();
  }
}

/** Splits a path-style URL into bucket and key, decoding each segment. */
function parseTarget(url: string): { bucket: string; key: string } {
  const path = url.split('?', 1)[0] ?? '';
  const [, bucket = '', ...rest] = path.split('/');
  return { bucket: decode(bucket), key: rest.map(decode).join('/') };
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // malformed escapes: keep what was sent
  }
}

function requestId(attempt: ProxyAttempt): string {
  return `fault-proxy-${attempt.at.toString(36)}`;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function errorXml(code: string, resource: string, attempt: ProxyAttempt): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${escapeXml(code)}</Code>` +
    `<Message>injected by FaultProxy</Message>` +
    `<Resource>${escapeXml(resource)}</Resource>` +
    `<RequestId>${requestId(attempt)}</RequestId></Error>`
  );
}

/** Passes bytes through with the first one inverted; its length stays the same. */
function flipFirstByte(): Transform {
  let flipped = false;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      if (!flipped && chunk.length > 0) {
        flipped = true;
        const copy = Buffer.from(chunk);
        copy[0] = (copy[0] as number) ^ 0xff;
        chunk = copy;
      }
      callback(null, chunk);
    },
  });
}

/**
 * Lets bytes through at `bytesPerSecond`, in slices of about 50 ms worth, each released only
 * once its time has come (so the total takes size / rate). Idle time earns no burst credit.
 */
function pace(bytesPerSecond: number): Transform {
  const slice = Math.max(1, Math.floor(bytesPerSecond / 20));
  let due = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      (async () => {
        for (let i = 0; i < chunk.length && !stream.destroyed; i += slice) {
          const part = chunk.subarray(i, i + slice);
          due = Math.max(due, Date.now()) + (part.length * 1000) / bytesPerSecond;
          const wait = due - Date.now();
          if (wait > 0) await sleep(wait);
          stream.push(part);
        }
      })().then(() => callback(), callback);
    },
  });
  stream.on('error', () => undefined);
  return stream;
}
