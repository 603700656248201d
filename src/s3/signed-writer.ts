import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/transport';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { SignatureV4 } from '@smithy/signature-v4';
import { parseHttpDate } from './backoff.js';
import { type Credentials, credentialSource } from './credentials.js';
import { errorFromResponse, type ResponseHeaders, readStart } from './error-response.js';
import { credentialsRefused } from './errors.js';
import { nextTurn } from './event-loop-turns.js';
import { type ObjectAddress, objectPath } from './object-address.js';
import type { ObjectWriter, PutAnswer, PutObjectFields, PutRequest } from './object-writer.js';

export interface SignedWriterSettings {
  address: ObjectAddress;
  region: string;
  credentials: S3ClientConfig['credentials'] | undefined;
  userAgent: string | undefined;
  connectTimeoutMillis: number;
  fields: PutObjectFields;
}

/**
 * A body larger than this goes to the socket in slices of this size, one per turn of the event
 * loop (slicedBody). Writing to a connection copies the bytes into the kernel on this thread (on
 * loopback, the receiving side's TCP work too), so one 2 MiB write was one long turn.
 */
const SOCKET_SLICE_BYTES = 64 * 1024;

/** S3 refuses a request signed more than 15 minutes from its own time. */
const SIGNING_WINDOW_MILLIS = 15 * 60_000;

/** The SDK's rule: a clock more than 5 minutes off signs requests S3 refuses. */
const MAX_CLOCK_SKEW_MILLIS = 5 * 60_000;

/**
 * PutObject as one signed HTTP request, from the AWS SDK's own parts: SigV4 from
 * `@smithy/signature-v4`, connections from `@smithy/node-http-handler`, credentials from the
 * caller or the SDK's default provider chain. It spares a service the ~11 MiB that importing
 * `@aws-sdk/client-s3` costs (docs/performance.md); the SDK's endpoint rules are not needed for
 * the addresses objectAddress makes (sdkNeeded sends the others to SdkObjectWriter).
 */
export class SignedObjectWriter implements ObjectWriter {
  readonly #address: ObjectAddress;
  readonly #fields: PutObjectFields;
  readonly #userAgent: string;
  readonly #region: string;
  readonly #credentials: Credentials;
  readonly #http: NodeHttpHandler;
  /** Server time minus local time, learnt from a refused request, as the SDK does. */
  #clockOffsetMillis = 0;

  constructor(settings: SignedWriterSettings) {
    this.#address = settings.address;
    this.#fields = settings.fields;
    this.#userAgent =
      settings.userAgent === undefined
        ? 'otel-s3-exporter'
        : `otel-s3-exporter ${settings.userAgent}`;
    this.#region = settings.region;
    this.#credentials = credentialSource(settings.credentials);
    this.#http = new NodeHttpHandler({ connectionTimeout: settings.connectTimeoutMillis });
  }

  async put(request: PutRequest): Promise<PutAnswer> {
    const a = this.#address;
    const http = new HttpRequest({
      method: 'PUT',
      protocol: a.protocol,
      hostname: a.hostname,
      ...(a.port === undefined ? {} : { port: a.port }),
      path: objectPath(a, request.key),
      headers: this.#headers(request),
      body: request.body,
    });
    // Within the request's deadline: a provider that hangs fails this attempt, not every one.
    // A signer per request, for the credentials this request got.
    const identity = await this.#credentials.get(request.signal);
    const signer = new SignatureV4({
      service: 's3',
      region: this.#region,
      credentials: identity,
      sha256: Sha256,
      // S3 signs the path as sent: no second encoding, no dot-segment removal.
      uriEscapePath: false,
      applyChecksum: true,
    });
    const signingDate = new Date(Date.now() + this.#clockOffsetMillis);
    const signed = await signer.sign(http, { signingDate });
    await nextTurn(); // signing and opening the request are separate turns of the loop
    // Signed over the whole body (its SHA-256 is in the headers); sent a slice a turn.
    if (request.body.length > SOCKET_SLICE_BYTES) signed.body = slicedBody(request.body);
    const response =
      request.background === true
        ? await sendInBackground(signed as HttpRequest, request.signal)
        : (await this.#http.handle(signed as HttpRequest, { abortSignal: request.signal }))
            .response;
    const headers = response.headers as ResponseHeaders;
    const body = response.body as (AsyncIterable<Uint8Array> & { resume?: () => void }) | undefined;
    if (response.statusCode >= 200 && response.statusCode < 300) {
      body?.resume?.(); // lets the socket go back to the pool
      return { etag: typeof headers.etag === 'string' ? headers.etag : undefined };
    }
    this.#learnClock(headers.date);
    const error = errorFromResponse(response.statusCode, headers, await readStart(body));
    const server = parseHttpDate(headers.date);
    // Signed outside the server's window: the refusal is about the time, whatever its code.
    if (server !== undefined && Math.abs(server - signingDate.getTime()) > SIGNING_WINDOW_MILLIS)
      error.$metadata = { ...error.$metadata, clockSkewCorrected: true };
    else if (credentialsRefused(error)) this.#credentials.refused(identity);
    throw error;
  }

  destroy(): void {
    this.#http.destroy();
  }

  #headers(request: PutRequest): Record<string, string> {
    const a = this.#address;
    const f = this.#fields;
    const headers: Record<string, string> = {
      host: a.port === undefined ? a.hostname : `${a.hostname}:${a.port}`,
      'user-agent': this.#userAgent,
      'content-type': request.contentType,
      'content-length': String(request.body.length),
    };
    if (request.sha256 !== undefined) headers['x-amz-content-sha256'] = request.sha256;
    if (request.ifNoneMatch) headers['if-none-match'] = '*';
    if (request.contentMd5 !== undefined) headers['content-md5'] = request.contentMd5;
    if (request.crc32 !== undefined) headers['x-amz-checksum-crc32'] = request.crc32;
    if (f.ServerSideEncryption !== undefined)
      headers['x-amz-server-side-encryption'] = f.ServerSideEncryption;
    if (f.SSEKMSKeyId !== undefined)
      headers['x-amz-server-side-encryption-aws-kms-key-id'] = f.SSEKMSKeyId;
    if (f.StorageClass !== undefined) headers['x-amz-storage-class'] = f.StorageClass;
    if (f.Tagging !== undefined) headers['x-amz-tagging'] = f.Tagging;
    for (const [name, value] of Object.entries(f.Metadata ?? {}))
      headers[`x-amz-meta-${name.toLowerCase()}`] = value;
    return headers;
  }

  #learnClock(date: string | undefined): void {
    const server = date === undefined ? Number.NaN : Date.parse(date);
    if (Number.isNaN(server)) return;
    if (Math.abs(Date.now() + this.#clockOffsetMillis - server) >= MAX_CLOCK_SKEW_MILLIS)
      this.#clockOffsetMillis = server - Date.now();
  }
}

/**
 * A signed request on a connection of its own whose socket is unref'd, without the SDK's handler
 * (whose timers would hold the process): a service with nothing else to do exits while it is in
 * flight. Its deadline is the caller's `signal`.
 */
function sendInBackground(
  signed: HttpRequest,
  signal: AbortSignal,
): Promise<{ statusCode: number; headers: ResponseHeaders; body: IncomingMessage }> {
  const send = signed.protocol === 'https:' ? httpsRequest : httpRequest;
  // An IPv6 literal is `[::1]` in the URL and the Host header, `::1` to connect to (as the SDK's
  // handler does); with the brackets, Node.js looks it up as a host name and finds none.
  const { hostname } = signed;
  const host =
    hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        method: signed.method,
        protocol: signed.protocol,
        hostname: host,
        ...(signed.port === undefined ? {} : { port: signed.port }),
        path: signed.path,
        headers: signed.headers,
        agent: false,
        signal,
      },
      (response) =>
        resolve({
          statusCode: response.statusCode ?? 0,
          headers: response.headers as ResponseHeaders,
          body: response,
        }),
    );
    req.on('socket', (socket) => socket.unref());
    req.on('error', reject);
    if (signed.body instanceof Readable) signed.body.pipe(req);
    else req.end(signed.body as Buffer | undefined);
  });
}

/**
 * `body` as a stream of SOCKET_SLICE_BYTES slices (views, not copies), each handed over in a turn
 * of the event loop of its own: the socket writes of a large body are spread over turns instead
 * of one. The request's Content-Length and signed payload hash are the whole body's.
 */
function slicedBody(body: Buffer): Readable {
  let at = 0;
  return new Readable({
    highWaterMark: SOCKET_SLICE_BYTES,
    read() {
      if (at >= body.length) {
        this.push(null);
        return;
      }
      const slice = body.subarray(at, at + SOCKET_SLICE_BYTES);
      at += slice.length;
      setImmediate(() => {
        if (!this.destroyed) this.push(slice);
      });
    },
  });
}
