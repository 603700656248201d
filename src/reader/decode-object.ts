import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import { decodeOtlpProto, type OtlpObject } from '../encoding/otlp-proto-decode.js';

const require = createRequire(import.meta.url);

export type ObjectEncoding = {
  format: 'otlp-json' | 'otlp-proto';
  compression: 'zstd' | 'gzip' | 'none';
};

/** Format and compression of an object, from its name (`.json`, `.binpb`, then `.zst`, `.gz`). */
export function encodingOfKey(key: string): ObjectEncoding | undefined {
  const match = /\.(json|binpb)(\.zst|\.gz)?$/.exec(key);
  if (match === null) return undefined;
  const format = match[1] === 'binpb' ? 'otlp-proto' : 'otlp-json';
  const compression = match[2] === '.zst' ? 'zstd' : match[2] === '.gz' ? 'gzip' : 'none';
  return { format, compression };
}

export function decompress(bytes: Uint8Array, compression: ObjectEncoding['compression']): Buffer {
  switch (compression) {
    case 'zstd': {
      const zstd: typeof import('zstd-napi') = require('zstd-napi');
      return zstd.decompress(bytes);
    }
    case 'gzip':
      return gunzipSync(bytes);
    case 'none':
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
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
 * object shape whatever the format. Throws ObjectDecodeError.
 */
export function decodeStoredObject(key: string, bytes: Uint8Array): DecodedObject {
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
    raw = decompress(bytes, encoding.compression);
  } catch (error) {
    throw new ObjectDecodeError(
      key,
      'decompress',
      `invalid ${encoding.compression} data: ${messageOf(error)}`,
      error,
    );
  }
  return { request: decodeRequest(key, raw, encoding.format), encoding, rawBytes: raw.length };
}

/** Decodes the bytes of one stored object into its ExportMetricsServiceRequest (see decodeStoredObject). */
export function decodeObject(key: string, bytes: Uint8Array): OtlpObject {
  return decodeStoredObject(key, bytes).request;
}

function decodeRequest(key: string, raw: Buffer, format: ObjectEncoding['format']): OtlpObject {
  if (format === 'otlp-proto') {
    try {
      return decodeOtlpProto(raw);
    } catch (error) {
      throw new ObjectDecodeError(key, 'decode', messageOf(error), error);
    }
  }
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch (error) {
    throw new ObjectDecodeError(key, 'decode', 'invalid UTF-8 in OTLP/JSON', error);
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
