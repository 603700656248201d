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

/**
 * Decodes the bytes of one stored object into its ExportMetricsServiceRequest, in the OTLP/JSON
 * object shape whatever the format.
 */
export function decodeObject(key: string, bytes: Uint8Array): OtlpObject {
  const encoding = encodingOfKey(key);
  if (encoding === undefined) {
    throw new Error(
      `${key}: not an otel-s3-exporter object name (.json or .binpb, optionally .zst or .gz)`,
    );
  }
  const raw = decompress(bytes, encoding.compression);
  if (encoding.format === 'otlp-proto') return decodeOtlpProto(raw);
  const text = raw.toString('utf8');
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines.length !== 1) throw new Error(`${key}: expected one JSON line, found ${lines.length}`);
  return JSON.parse(lines[0] as string) as OtlpObject;
}
