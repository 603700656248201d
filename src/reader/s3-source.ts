import {
  GetObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { InvalidOptionError } from '../base/invalid-option.js';
import { awsRegionVariables, warnIgnoredAwsSwitches } from '../config/environment.js';
import { isHttpUrl, region as regionRule } from '../config/rules.js';
import type { ChecksumMode } from '../s3/client-settings.js';
import {
  defaultRegion,
  endpointName,
  endpointSwitchesOn,
  endpointUrlVariable,
  s3ClientConfig,
} from '../s3/client-settings.js';
import { describeError } from '../s3/errors.js';
import { classifyUploadError, ENDPOINT_FAULTS } from '../s3/verdict.js';
import { withAnswerDeadlines } from './answer-deadlines.js';
import { exactly, readAtMost } from './bounded-read.js';
import { asAccessError, RangeIgnoredError, RangeOverrunError } from './errors.js';
import { ObjectTooLargeError } from './read-limits.js';
import type { ListedKey, ObjectSource } from './source.js';

/** How to reach S3; the same options, with the same defaults, as the exporter's. */
export interface ReaderConnectionOptions {
  /** AWS region. Default: AWS_REGION or AWS_DEFAULT_REGION, else `us-east-1`. */
  region?: string;
  /** Endpoint URL of an S3-compatible server, e.g. `http://127.0.0.1:9000`. */
  endpoint?: string;
  /** Path-style addressing. Default: true when `endpoint` is set. */
  forcePathStyle?: boolean;
  /** Static credentials or a provider. Default: the AWS SDK's default provider chain. */
  credentials?: S3ClientConfig['credentials'];
  /** Bring your own client (it is not destroyed); the options above are then ignored. */
  s3Client?: S3Client;
  /** Default `WHEN_REQUIRED` with a custom endpoint (many S3-compatible servers reject the SDK's CRC32 checksums), else `WHEN_SUPPORTED`. */
  requestChecksumCalculation?: ChecksumMode;
  /** Default as for requestChecksumCalculation. */
  responseChecksumValidation?: ChecksumMode;
}

/** The client to read with: the caller's, or one made (and later destroyed) by the reader. */
export function createReaderClient(options: ReaderConnectionOptions): {
  client: S3Client;
  owned: boolean;
} {
  if (options.s3Client !== undefined) return { client: options.s3Client, owned: false };
  checkRegion(options.region, process.env);
  if (options.endpoint === undefined) checkEndpointVariable(process.env);
  // The SDK reads these from process.env; a value it ignores is said, as the exporter says it.
  warnIgnoredAwsSwitches(process.env);
  return { client: new S3Client(s3ClientConfig(options, { role: 'reader' })), owned: true };
}

/**
 * Without the endpoint option, the AWS SDK's endpoint variable (AWS_ENDPOINT_URL_S3, else
 * AWS_ENDPOINT_URL) is where requests go: one that is not an http(s) URL fails every request
 * before sending, so it is an InvalidOptionError here, naming the variable.
 */
function checkEndpointVariable(env: Readonly<Record<string, string | undefined>>): void {
  const variable = endpointUrlVariable(env);
  if (variable === undefined || isHttpUrl(variable.value)) return;
  throw new InvalidOptionError(
    'endpoint',
    variable.value,
    'an absolute http:// or https:// URL, e.g. "http://127.0.0.1:9000"',
    variable.name,
  );
}

/**
 * The region option, else the variable the default takes it from, checked as the exporter and
 * otel-s3 check the option: one the AWS SDK refuses fails every request before sending
 * ("Region not accepted"), so it is an InvalidOptionError here, naming the option or variable.
 */
function checkRegion(
  region: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): void {
  if (region !== undefined) {
    regionRule('region', region);
    return;
  }
  // The first one set is the default's region.
  for (const { error } of awsRegionVariables(env)) {
    if (error !== undefined) throw error;
    return;
  }
}

/**
 * Calls `answered` when a successful answer to the command begins (its status and headers), before
 * its body is read and parsed: a listing page of a thousand keys that arrives slowly is an
 * answer, not silence (answer-deadlines.ts), as a GET's is once its headers came.
 */
function onAnswerBegun(stack: ListObjectsV2Command['middlewareStack'], answered: () => void): void {
  const begun =
    <A, R extends { response: unknown }>(next: (args: A) => Promise<R>) =>
    async (args: A): Promise<R> => {
      const out = await next(args);
      const status = (out.response as { statusCode?: unknown }).statusCode;
      if (typeof status === 'number' && status >= 200 && status < 300) answered();
      return out;
    };
  // Below the deserializer: the HTTP answer as it arrives, its body not read yet.
  stack.addRelativeTo(begun, {
    relation: 'after',
    toMiddleware: 'deserializerMiddleware',
    name: 'otelS3AnswerBegun',
  });
}

/**
 * Objects in an S3 bucket. `pageSize` is ListObjectsV2's MaxKeys (tests use small pages).
 * `shared`: a client made from `connection` by the caller (the compactor's, for its writes too),
 * used and not destroyed; messages still name the settings of `connection`, not an s3Client given.
 */
export function s3Source(
  bucket: string,
  connection: ReaderConnectionOptions,
  pageSize = 1000,
  shared?: S3Client,
): ObjectSource {
  const { client, owned } =
    shared === undefined ? createReaderClient(connection) : { client: shared, owned: false };
  const where = (prefix: string) => `s3://${bucket}/${prefix === '' ? '' : `${prefix}/`}`;
  return {
    description: where(''),
    async *list(prefix, startAfter, signal): AsyncGenerator<ListedKey> {
      let token: string | undefined;
      do {
        let page: ListObjectsV2CommandOutput;
        try {
          const input = {
            Bucket: bucket,
            ...(prefix === '' ? {} : { Prefix: `${prefix}/` }),
            ...(startAfter === undefined ? {} : { StartAfter: startAfter }),
            ...(token === undefined ? {} : { ContinuationToken: token }),
            MaxKeys: pageSize,
          };
          page = await withAnswerDeadlines((abortSignal, answered) => {
            // A command each sending: each says its own answer's beginning.
            const command = new ListObjectsV2Command(input);
            onAnswerBegun(command.middlewareStack, answered);
            return client.send(command, { abortSignal });
          }, signal);
        } catch (error) {
          signal.throwIfAborted();
          throw await listFailure(`cannot list ${where(prefix)}`, error, connection, client);
        }
        for (const entry of page.Contents ?? []) {
          if (entry.Key === undefined) continue;
          const lastModified = entry.LastModified?.getTime();
          yield lastModified === undefined || Number.isNaN(lastModified)
            ? { key: entry.Key, size: entry.Size ?? 0 }
            : { key: entry.Key, size: entry.Size ?? 0, lastModified };
        }
        token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
      } while (token !== undefined);
    },
    async get(key, signal, maxBytes) {
      try {
        return await withAnswerDeadlines(async (abortSignal, answered) => {
          let body: unknown;
          try {
            const command = new GetObjectCommand({ Bucket: bucket, Key: key });
            const got = await client.send(command, { abortSignal });
            answered();
            body = got.Body;
            if (body === undefined) throw new Error('GetObject returned no body');
            if (!isAsyncIterable(body))
              throw new Error('GetObject returned a body that is not a stream');
            // Not transformToByteArray: it takes whatever the server sends. An object replaced
            // since the listing, or a body longer than announced, stops at the limit.
            return await readAtMost(body, maxBytes, got.ContentLength);
          } catch (error) {
            release(body);
            throw error;
          }
        }, signal);
      } catch (error) {
        signal.throwIfAborted();
        throw asAccessError(`cannot read s3://${bucket}/${key}`, error) ?? error;
      }
    },
    async getRange(key, start, end, signal) {
      try {
        return await withAnswerDeadlines(async (abortSignal, answered) => {
          let body: unknown;
          try {
            const range = `bytes=${start}-${end - 1}`;
            const command = new GetObjectCommand({ Bucket: bucket, Key: key, Range: range });
            const got = await client.send(command, { abortSignal });
            answered();
            body = got.Body;
            if (!isAsyncIterable(body)) throw new Error('GetObject returned no body stream');
            if (got.ContentRange === undefined && !(start === 0 && got.ContentLength === end)) {
              // 200 and the whole object: the server (or a proxy) ignored Range. Not a size limit.
              throw new RangeIgnoredError(start, end, got);
            }
            // A body longer than the range is the server's fault: no limit of the user's.
            if (got.ContentLength !== undefined && got.ContentLength > end - start)
              throw new RangeOverrunError(start, end, got, got.ContentLength);
            const bytes = await readAtMost(body, end - start, got.ContentLength).catch(
              (error: unknown) => {
                throw error instanceof ObjectTooLargeError
                  ? new RangeOverrunError(start, end, got)
                  : error;
              },
            );
            return exactly(bytes, start, end);
          } catch (error) {
            release(body);
            throw error;
          }
        }, signal);
      } catch (error) {
        signal.throwIfAborted();
        throw asAccessError(`cannot read s3://${bucket}/${key}`, error) ?? error;
      }
    },
    close() {
      if (owned) client.destroy();
    },
  };
}

/**
 * A body refused unread or part read (over a limit by its Content-Length, a Range ignored):
 * destroyed, so its connection goes back to the agent now, not when the stream is collected.
 */
function release(body: unknown): void {
  const stream = body as { destroy?: () => void; destroyed?: boolean } | undefined;
  if (stream?.destroyed !== true) stream?.destroy?.();
}

async function listFailure(
  what: string,
  error: unknown,
  connection: ReaderConnectionOptions,
  client: S3Client,
): Promise<Error> {
  const access = asAccessError(what, error);
  if (access !== undefined) return access;
  const status = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
  const own = connection.s3Client !== undefined;
  // The caller's client was not checked: its region may be what failed, before any request.
  const region = own ? await regionOf(client) : { region: undefined };
  let hint = '';
  if ('refused' in region) {
    hint = `; the s3Client given has ${region.refused}, which the AWS SDK refuses before sending any request: make the client with a region such as us-east-1`;
  } else if ((error as { name?: unknown }).name === 'EndpointError') {
    hint = endpointRulesHint(connection, region.region);
  } else if (endpointFault(error) !== undefined) {
    // What answers is not the S3 API as given (a TLS port, a plain one, a web server): the
    // exporter's words for it, and where the endpoint was set.
    const endpoint = own
      ? `${(await endpointOf(client)) ?? 'AWS S3'}, of the s3Client given`
      : endpointName(connection);
    hint = `; ${endpointFault(error)} (the endpoint: ${endpoint})`;
  } else if (status === undefined) {
    // No HTTP answer at all: the server could not be reached.
    if (own || connection.endpoint !== undefined) {
      const endpoint = own ? await endpointOf(client) : connection.endpoint;
      const which = own && endpoint !== undefined ? ' of the s3Client given' : '';
      hint = `; is the endpoint (${endpoint ?? 'AWS S3'})${which} right and the server reachable?`;
    } else {
      // Where the AWS SDK sent it: an AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else AWS S3.
      const name = endpointName(connection);
      const endpoint = name.startsWith('the endpoint ') ? name : `the endpoint ${name}`;
      hint = `; is ${endpoint} right and the server reachable?`;
    }
  }
  return new Error(`${what}: ${describeError(error)}${hint}`, { cause: error });
}

/** The fix when the answer says the endpoint is not the S3 API as given (see ENDPOINT_FAULTS). */
function endpointFault(error: unknown): string | undefined {
  const verdict = classifyUploadError(error);
  return verdict.kind === 'config' && ENDPOINT_FAULTS.has(verdict.reason)
    ? verdict.hint
    : undefined;
}

/**
 * The region of the caller's client as the AWS SDK resolves it, or, when the SDK refuses it
 * ("Region not accepted: region=\"bad region\" ..."), that region as words of a message.
 */
async function regionOf(
  client: S3Client,
): Promise<{ region: string | undefined } | { refused: string }> {
  try {
    return { region: await client.config.region() };
  } catch (error) {
    const named = /region="([^"]*)"/.exec(error instanceof Error ? error.message : '');
    return {
      refused:
        named === null
          ? `a region it cannot resolve (${describeError(error)})`
          : `region ${JSON.stringify(named[1])}`,
    };
  }
}

/** The endpoint the caller's client was made with, as a URL; undefined for AWS S3's own. */
async function endpointOf(client: S3Client): Promise<string | undefined> {
  const provider = client.config.endpoint;
  if (provider === undefined) return undefined;
  try {
    const { protocol, hostname, port, path } = await provider();
    return `${protocol}//${hostname}${port === undefined ? '' : `:${port}`}${path === '/' ? '' : path}`;
  } catch {
    return undefined;
  }
}

/**
 * The SDK's endpoint rules refused the settings before any request (FIPS in aws-cn, say): what
 * to change is a switch, not the server. `clientRegion`: the region of the caller's client.
 */
function endpointRulesHint(connection: ReaderConnectionOptions, clientRegion?: string): string {
  const region =
    connection.s3Client === undefined
      ? `region ${connection.region ?? defaultRegion(process.env)}`
      : `the client's region${clientRegion === undefined ? '' : ` ${clientRegion}`}`;
  const set = connection.s3Client === undefined ? endpointSwitchesOn(process.env) : [];
  if (set.length === 0)
    return `; the AWS SDK has no endpoint for ${region} and this bucket with its FIPS and dual-stack settings (the client's own, AWS_USE_FIPS_ENDPOINT, AWS_USE_DUALSTACK_ENDPOINT, or use_fips_endpoint and use_dualstack_endpoint of the AWS config file)`;
  const named = set.join(' and ');
  const them = set.length === 1 ? 'the variable' : 'the variables';
  return `; the AWS SDK has no endpoint for ${named} with ${region} and this bucket: unset ${them} (or set ${set.length === 1 ? 'it' : 'them'} to false), or give the endpoint`;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<Uint8Array> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}
