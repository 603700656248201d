import type { Compression, Format } from './config/options.js';

/**
 * How objects are named and typed, one row per format and per compression: the one table the
 * writer, the spool's checks and the reader agree on.
 */
export interface NamedKind {
  /** Object name suffix (`.json`, `.zst`, ...); '' for none. */
  extension: string;
  /** Content-Type; undefined for a compression that keeps the format's own. */
  contentType: string | undefined;
}

export const FORMAT_NAMES: Readonly<Record<Format, NamedKind & { contentType: string }>> = {
  'otlp-json': { extension: '.json', contentType: 'application/json' },
  'otlp-proto': { extension: '.binpb', contentType: 'application/x-protobuf' },
};

export const COMPRESSION_NAMES: Readonly<Record<Compression, NamedKind>> = {
  zstd: { extension: '.zst', contentType: 'application/zstd' },
  gzip: { extension: '.gz', contentType: 'application/gzip' },
  none: { extension: '', contentType: undefined },
};

/** A stored object's format and compression. */
export interface ObjectEncoding {
  format: Format;
  compression: Compression;
}

/** Format and compression of an object from its name's suffix (`.json.zst`, `.binpb`, ...). */
export function encodingOfExtension(extension: string): ObjectEncoding | undefined {
  for (const [format, f] of Object.entries(FORMAT_NAMES) as [Format, NamedKind][]) {
    for (const [compression, c] of Object.entries(COMPRESSION_NAMES) as [
      Compression,
      NamedKind,
    ][]) {
      if (extension === f.extension + c.extension) return { format, compression };
    }
  }
  return undefined;
}

/** Every Content-Type this exporter sets. */
export const CONTENT_TYPES: ReadonlySet<string> = new Set(
  [...Object.values(FORMAT_NAMES), ...Object.values(COMPRESSION_NAMES)].flatMap((k) =>
    k.contentType === undefined ? [] : [k.contentType],
  ),
);
