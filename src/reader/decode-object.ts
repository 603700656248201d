import { decodeOtlpProto, type OtlpObject } from '../encoding/otlp-proto-decode.js';
import { encodingOfExtension, type ObjectEncoding } from '../formats.js';
import { requestProblem } from './check-request.js';
import { decompress } from './decompress.js';
import { ObjectTooLargeError, type ReadLimitOptions, resolveReadLimits } from './read-limits.js';
import { ZstdUnavailableError } from './zstd-engine.js';

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

/** A decoded object: its request, its encoding and its uncompressed size. */
export interface DecodedObject {
  request: OtlpObject;
  encoding: ObjectEncoding;
  /** Bytes after decompression. */
  rawBytes: number;
}

/**
 * Decodes the bytes of one stored object into its ExportMetricsServiceRequest, in the OTLP/JSON
 * object shape whatever the format. Throws ObjectDecodeError: for bad data, for an object that
 * decompresses to more than `maxDecompressedBytes` (the cause is an ObjectTooLargeError), when
 * this runtime has no zstd (ZstdUnavailableError), and for a request that recursive code could
 * not walk (nested deeper than MAX_NESTING_DEPTH) or whose times no date can show.
 */
export function decodeStoredObject(
  key: string,
  bytes: Uint8Array,
  options: Pick<ReadLimitOptions, 'maxDecompressedBytes'> = {},
): DecodedObject {
  const { maxDecompressedBytes } = resolveReadLimits(options);
  const encoding = encodingOfKey(key);
  if (encoding === undefined) {
    throw new ObjectDecodeError(
      key,
      'decode',
      'not an otel-s3-exporter object name (.json or .binpb, optionally .zst or .gz)',
    );
  }
  let raw: Buffer;
  try {
    raw = decompress(bytes, encoding.compression, maxDecompressedBytes);
  } catch (error) {
    // A limit or a missing engine is not bad data: say it as it is.
    const plain = error instanceof ObjectTooLargeError || error instanceof ZstdUnavailableError;
    const detail = plain
      ? messageOf(error)
      : `invalid ${encoding.compression} data: ${messageOf(error)}`;
    throw new ObjectDecodeError(key, 'decompress', detail, error);
  }
  const request = decodeRequest(key, raw, encoding.format);
  const problem = requestProblem(request);
  if (problem !== undefined) throw new ObjectDecodeError(key, 'decode', problem);
  return { request, encoding, rawBytes: raw.length };
}

/** Decodes the bytes of one stored object into its ExportMetricsServiceRequest (see decodeStoredObject). */
export function decodeObject(
  key: string,
  bytes: Uint8Array,
  options: Pick<ReadLimitOptions, 'maxDecompressedBytes'> = {},
): OtlpObject {
  return decodeStoredObject(key, bytes, options).request;
}

function decodeRequest(key: string, raw: Buffer, format: ObjectEncoding['format']): OtlpObject {
  if (format === 'otlp-proto') {
    try {
      return decodeOtlpProto(raw);
    } catch (error) {
      // The decoder recurses per message: a hostile nesting runs out of stack before the end.
      const detail = isStackOverflow(error)
        ? 'invalid OTLP protobuf: messages nested too deep to decode'
        : messageOf(error);
      throw new ObjectDecodeError(key, 'decode', detail, error);
    }
  }
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch (error) {
    // TextDecoder's fatal mode throws a TypeError; a RangeError is a text longer than V8's strings.
    const detail =
      error instanceof TypeError
        ? 'invalid UTF-8 in OTLP/JSON'
        : `cannot decode: ${messageOf(error)}`;
    throw new ObjectDecodeError(key, 'decode', detail, error);
  }
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines.length !== 1) {
    throw new ObjectDecodeError(key, 'decode', `expected one JSON line, found ${lines.length}`);
  }
  let request: unknown;
  try {
    request = JSON.parse(lines[0] as string);
  } catch (error) {
    throw new ObjectDecodeError(key, 'decode', `invalid JSON: ${messageOf(error)}`, error);
  }
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new ObjectDecodeError(
      key,
      'decode',
      'the JSON line is not an ExportMetricsServiceRequest object',
    );
  }
  return request as OtlpObject;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
