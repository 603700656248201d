import { InvalidOptionError } from '../base/invalid-option.js';
import { ZstdUnavailableError } from '../compression/zstd-engine.js';
import { requestProblem } from '../encoding/check-request.js';
import type { OtlpObject } from '../encoding/otlp-proto-decode.js';
import {
  encodingOfExtension,
  type ObjectEncoding,
  SIGNAL_NAMES,
  type SignalName,
  signalOfKey,
} from '../layout/formats.js';
import { SchemaVersionError } from '../parquet/read.js';
import { logsRead } from '../signals/logs/read.js';
import { SCHEMA_VERSION_KEY } from '../signals/metrics/parquet/schema.js';
import { metricsRead } from '../signals/metrics/read.js';
import type { DecodeContext, Decoder, SignalRead } from '../signals/signal.js';
import { tracesRead } from '../signals/traces/read.js';
import { decompress } from './decompress.js';
import { onlyTrace } from './only-trace.js';
import { signalOfSchemaVersion } from './parquet-parts.js';
import { ObjectTooLargeError, type ReadLimitOptions, resolveReadLimits } from './read-limits.js';

export type { ObjectEncoding };

/**
 * Format and compression of an object, from the end of its name (`.json`, `.binpb`, then `.zst`,
 * `.gz`, as the formats table names them); the longest known suffix wins.
 */
export function encodingOfKey(key: string): ObjectEncoding | undefined {
  const name = key.slice(key.lastIndexOf('/') + 1);
  for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
    const encoding = encodingOfExtension(name.slice(dot));
    if (encoding !== undefined) return encoding;
  }
  return undefined;
}

/** Each signal's decoders; an object's signal is the word in its name. */
const READERS: Readonly<Record<SignalName, SignalRead>> = {
  metrics: metricsRead,
  traces: tracesRead,
  logs: logsRead,
};

/** What failed while decoding a stored object: its compression, or the request inside. */
export class ObjectDecodeError extends Error {
  readonly key: string;
  readonly stage: 'decompress' | 'decode';
  /** What is wrong, without the key in front. */
  readonly detail: string;
  constructor(key: string, stage: 'decompress' | 'decode', message: string, cause?: unknown) {
    super(`${key}: ${message}`, { cause });
    this.name = 'ObjectDecodeError';
    this.detail = message;
    this.key = key;
    this.stage = stage;
  }
}

/** How to decode a stored object: its decompression limit, and the signal it holds. */
export interface DecodeOptions extends Pick<ReadLimitOptions, 'maxDecompressedBytes'> {
  /**
   * The signal whose request the object holds. Default: the word in its name (`metrics_`,
   * `traces_`, `logs_`), metrics for a name without one.
   */
  signal?: SignalName;
}

/** A decoded object: its request, its encoding and its uncompressed size. */
export interface DecodedObject {
  request: OtlpObject;
  encoding: ObjectEncoding;
  /** Bytes after decompression. */
  rawBytes: number;
}

/**
 * Decodes the bytes of one stored object into its request (ExportMetricsServiceRequest,
 * ExportTraceServiceRequest or ExportLogsServiceRequest: see DecodeOptions.signal), in the
 * OTLP/JSON object shape whatever the format. Throws ObjectDecodeError: for bad data, for an object that
 * decompresses to more than `maxDecompressedBytes` (the cause is an ObjectTooLargeError), when
 * this runtime has no zstd (ZstdUnavailableError), and for a request that recursive code could
 * not walk (nested deeper than MAX_NESTING_DEPTH) or whose times no date can show. Every format;
 * Parquet is read asynchronously, hence the promise.
 */
export async function decodeStoredObjectAsync(
  key: string,
  bytes: Uint8Array,
  options: DecodeOptions = {},
): Promise<DecodedObject> {
  return decodeNow(key, bytes, options, false);
}

/**
 * As decodeStoredObjectAsync, with the request holding only the spans or log records of trace
 * `traceId` (lower-case hex): a Parquet object of either decodes only the row groups that may
 * hold it, and only its rows (DecodeContext.traceId); other formats decode whole, and are
 * filtered (onlyTrace).
 */
export async function decodeForTrace(
  key: string,
  bytes: Uint8Array,
  options: DecodeOptions,
  traceId: string,
): Promise<DecodedObject> {
  const decoded = await decodeNow(key, bytes, options, false, traceId);
  const signal = options.signal ?? signalOfKey(key);
  return { ...decoded, request: onlyTrace(decoded.request, signal, traceId) };
}

/**
 * As decodeStoredObjectAsync, synchronously, for the formats that allow it (OTLP/JSON and OTLP
 * protobuf); a Parquet object throws ObjectDecodeError saying to use the asynchronous call.
 */
export function decodeStoredObject(
  key: string,
  bytes: Uint8Array,
  options: DecodeOptions = {},
): DecodedObject {
  return decodeNow(key, bytes, options, true) as DecodedObject;
}

/**
 * The one decode path of both calls: unwraps the object, runs its format's decoder and checks
 * the request. With `synchronous`, a decoder that is not refuses; otherwise a decoder's promise
 * is awaited and its failure mapped as a synchronous one is.
 */
function decodeNow(
  key: string,
  bytes: Uint8Array,
  options: DecodeOptions,
  synchronous: boolean,
  traceId?: string,
): DecodedObject | Promise<DecodedObject> {
  const unwrapped = unwrap(key, bytes, options);
  const { encoding, raw } = unwrapped;
  const context = traceId === undefined ? unwrapped.context : { ...unwrapped.context, traceId };
  const decoder: Decoder = readerOf(key, options).decoders[encoding.format];
  if (synchronous && !decoder.synchronous) {
    throw new ObjectDecodeError(
      key,
      'decode',
      `${encoding.format} objects are read asynchronously: use decodeStoredObjectAsync() or the reading functions (readMetrics(), readSpans(), ...)`,
    );
  }
  const signal = options.signal ?? signalOfKey(key);
  let request: OtlpObject | Promise<OtlpObject>;
  try {
    request = decoder.decode(raw, context);
  } catch (error) {
    throw decodeError(key, error, signal);
  }
  const done = (decoded: OtlpObject) => checked(key, decoded, encoding, raw.length, signal);
  if (!(request instanceof Promise)) return done(request);
  return request.then(done, (error: unknown) => {
    throw decodeError(key, error, signal);
  });
}

/** Decodes the bytes of one stored object into its request (see decodeStoredObject). */
export function decodeObject(
  key: string,
  bytes: Uint8Array,
  options: DecodeOptions = {},
): OtlpObject {
  return decodeStoredObject(key, bytes, options).request;
}

/** The decoders of the object's signal: the one given, else the word in its name. */
function readerOf(key: string, options: DecodeOptions): SignalRead {
  const signal = options.signal ?? signalOfKey(key);
  const reader: SignalRead | undefined = READERS[signal];
  if (reader === undefined) {
    throw new InvalidOptionError(
      'signal',
      signal,
      `one of ${SIGNAL_NAMES.map((s) => `'${s}'`).join(', ')}`,
    );
  }
  return reader;
}

/** The object's encoding, its bytes without the outer compression, and what decoding needs. */
function unwrap(
  key: string,
  bytes: Uint8Array,
  options: Pick<ReadLimitOptions, 'maxDecompressedBytes'>,
): { encoding: ObjectEncoding; raw: Buffer; context: DecodeContext } {
  const { maxDecompressedBytes } = resolveReadLimits(options);
  const encoding = encodingOfKey(key);
  if (encoding === undefined) {
    throw new ObjectDecodeError(
      key,
      'decode',
      'not an otel-s3-exporter object name (.json or .binpb, optionally .zst or .gz, or .parquet)',
    );
  }
  let raw: Buffer;
  try {
    raw = decompress(encoding.compression, bytes, maxDecompressedBytes);
  } catch (error) {
    // A limit or a missing engine is not bad data: say it as it is.
    const detail = plainProblem(error)
      ? messageOf(error)
      : `invalid ${encoding.compression} data: ${messageOf(error)}`;
    throw new ObjectDecodeError(key, 'decompress', detail, error);
  }
  const context: DecodeContext = {
    decompress,
    // The outer layer used some of the budget already (none for Parquet: it has no outer one).
    maxDecompressedBytes:
      encoding.compression === 'none' ? maxDecompressedBytes : maxDecompressedBytes - raw.length,
  };
  return { encoding, raw, context };
}

/** A failure inside the format's decoder: a limit or a missing engine is decompression. */
function decodeError(key: string, error: unknown, signal: SignalName): ObjectDecodeError {
  if (error instanceof ObjectDecodeError) return error;
  // Another signal's Parquet file, read as this one's (a name without its signal's word).
  if (error instanceof SchemaVersionError) {
    const other = signalOfSchemaVersion(error.found);
    if (other !== undefined && other !== signal) {
      const detail = `a Parquet file of ${other} (${SCHEMA_VERSION_KEY}: ${error.found}), not of ${signal}: pass signal: '${other}' to decode it`;
      return new ObjectDecodeError(key, 'decode', detail, error);
    }
  }
  const stage = plainProblem(error) ? 'decompress' : 'decode';
  return new ObjectDecodeError(key, stage, messageOf(error), error);
}

/** A request's top-level field, by signal (OTLP/JSON's names; the protobuf decoder's too). */
export const REQUEST_FIELD: Readonly<Record<SignalName, string>> = {
  metrics: 'resourceMetrics',
  traces: 'resourceSpans',
  logs: 'resourceLogs',
};

function checked(
  key: string,
  request: OtlpObject,
  encoding: ObjectEncoding,
  rawBytes: number,
  signal: SignalName,
): DecodedObject {
  const problem = requestProblem(request);
  if (problem !== undefined) throw new ObjectDecodeError(key, 'decode', problem);
  // An OTLP/JSON request of another signal (a key template that named it wrongly) decodes as
  // none of this signal's items: refused, so that no caller takes it as empty (a compaction
  // would delete it). Protobuf cannot tell: the requests' fields share their numbers.
  for (const other of SIGNAL_NAMES) {
    if (other !== signal && REQUEST_FIELD[other] in request) {
      throw new ObjectDecodeError(key, 'decode', `a request of ${other}, not of ${signal}`);
    }
  }
  return { request, encoding, rawBytes };
}

function plainProblem(error: unknown): boolean {
  return error instanceof ObjectTooLargeError || error instanceof ZstdUnavailableError;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
