import { createRequire } from 'node:module';
import type { BatchRecord } from '../pipeline/sealed-batch.js';

type Crc32c = (data: Uint8Array, initial?: number) => number;
let addon: Crc32c | undefined;

/**
 * CRC32C from the @node-rs/crc32 addon, loaded at the first spool file (or journal entry): without
 * spoolDir, never.
 */
export function crc32c(data: Uint8Array, initial?: number): number {
  addon ??= (createRequire(import.meta.url)('@node-rs/crc32') as { crc32c: Crc32c }).crc32c;
  return addon(data, initial);
}

/**
 * One spooled batch per file:
 *   [0,4)   magic "OS3B"
 *   [4,6)   format version (u16 LE) = 1
 *   [6,8)   reserved, 0
 *   [8,12)  metadata length M (u32 LE)
 *   [12,16) body length B (u32 LE)
 *   [16,20) CRC32C over bytes [0,16), the metadata and the body (u32 LE)
 *   [20,20+M)      metadata: UTF-8 JSON (SpoolMeta)
 *   [20+M,20+M+B)  body: the object's bytes, exactly as uploaded
 * A torn write shows as a length mismatch, a flipped bit as a checksum mismatch.
 */
const MAGIC = 0x4233534f; // "OS3B" read as a little-endian u32
const VERSION = 1;
const HEADER_BYTES = 20;

/**
 * A file's metadata: the batch's record and, in files of this version on, the signal of the
 * exporter that wrote it (`metrics`, `traces`, `logs`); a file without one is read as the
 * reader's own.
 */
export type SpoolMeta = BatchRecord & { signal?: string };

export class SpoolFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpoolFormatError';
  }
}

/** Size of the file that encodeSpoolFile() makes. */
export function spoolFileBytes(meta: SpoolMeta, bodyBytes: number): number {
  return HEADER_BYTES + Buffer.byteLength(JSON.stringify(meta)) + bodyBytes;
}

/** The parts to write, in order: header, metadata, body (the body is not copied). */
export function encodeSpoolFile(meta: SpoolMeta, body: Buffer): Buffer[] {
  const metaBytes = Buffer.from(JSON.stringify(meta));
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(MAGIC, 0);
  header.writeUInt16LE(VERSION, 4);
  header.writeUInt16LE(0, 6);
  header.writeUInt32LE(metaBytes.length, 8);
  header.writeUInt32LE(body.length, 12);
  let crc = crc32c(header.subarray(0, 16));
  crc = crc32c(metaBytes, crc);
  crc = crc32c(body, crc);
  header.writeUInt32LE(crc, 16);
  return [header, metaBytes, body];
}

/** Validates a whole spool file; throws SpoolFormatError saying what is wrong. */
export function decodeSpoolFile(file: Buffer): { meta: SpoolMeta; body: Buffer } {
  if (file.length < HEADER_BYTES)
    throw new SpoolFormatError(`truncated header (${file.length} bytes)`);
  if (file.readUInt32LE(0) !== MAGIC) throw new SpoolFormatError('not a spool file (bad magic)');
  const version = file.readUInt16LE(4);
  if (version !== VERSION) throw new SpoolFormatError(`unknown format version ${version}`);
  const metaLength = file.readUInt32LE(8);
  const bodyLength = file.readUInt32LE(12);
  const expected = HEADER_BYTES + metaLength + bodyLength;
  if (file.length !== expected) {
    throw new SpoolFormatError(`length ${file.length}, header says ${expected} (torn write)`);
  }
  const metaBytes = file.subarray(HEADER_BYTES, HEADER_BYTES + metaLength);
  const body = file.subarray(HEADER_BYTES + metaLength);
  let crc = crc32c(file.subarray(0, 16));
  crc = crc32c(metaBytes, crc);
  crc = crc32c(body, crc);
  if (crc !== file.readUInt32LE(16)) throw new SpoolFormatError('checksum mismatch (corrupt)');
  let meta: SpoolMeta;
  try {
    meta = JSON.parse(metaBytes.toString('utf8')) as SpoolMeta;
  } catch {
    throw new SpoolFormatError('unreadable metadata');
  }
  checkMeta(meta);
  return { meta, body };
}

const isCount = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/**
 * The batch of a spool file that cannot be used, for the drop counts: `items` (its points and
 * rawBytes) only where its checksum held and they are counts, `chains` the journal chains its
 * metadata names as far as they can be read (the journal may hold the batch still), `whole`
 * whether its checksum held.
 */
export interface LostBatch {
  items: { points: number; rawBytes: number } | undefined;
  chains: readonly string[];
  whole: boolean;
}

/**
 * What a spool file that failed its checks tells of its batch; undefined for a file that is no
 * spool file (shorter than a header, another magic).
 */
export function lostBatch(file: Buffer): LostBatch | undefined {
  if (file.length < HEADER_BYTES || file.readUInt32LE(0) !== MAGIC) return undefined;
  const metaEnd = HEADER_BYTES + file.readUInt32LE(8);
  const whole =
    file.readUInt16LE(4) === VERSION &&
    file.length === metaEnd + file.readUInt32LE(12) &&
    crc32c(file.subarray(HEADER_BYTES), crc32c(file.subarray(0, 16))) === file.readUInt32LE(16);
  let meta: Partial<Record<keyof SpoolMeta, unknown>> | undefined;
  try {
    if (metaEnd <= file.length) meta = JSON.parse(file.subarray(HEADER_BYTES, metaEnd).toString());
  } catch {
    meta = undefined;
  }
  const m = typeof meta === 'object' && meta !== null ? meta : {};
  return {
    items:
      whole && isCount(m.points) && isCount(m.rawBytes)
        ? { points: m.points as number, rawBytes: m.rawBytes as number }
        : undefined,
    chains: Array.isArray(m.journal) ? m.journal.filter((c) => typeof c === 'string') : [],
    whole,
  };
}

/** Field types: metadata is data, and a replay must not act on anything else. */
function checkMeta(meta: unknown): asserts meta is SpoolMeta {
  const m = meta as Partial<Record<keyof SpoolMeta, unknown>> | null;
  if (typeof m !== 'object' || m === null) throw new SpoolFormatError('metadata is not an object');
  if (typeof m.key !== 'string' || m.key === '')
    throw new SpoolFormatError('metadata without a key');
  if (typeof m.contentType !== 'string')
    throw new SpoolFormatError('metadata without a content type');
  if (!isCount(m.points) || !isCount(m.rawBytes))
    throw new SpoolFormatError('metadata with invalid points or rawBytes');
  if (typeof m.sealedAt !== 'number' || !Number.isFinite(m.sealedAt))
    throw new SpoolFormatError('metadata with an invalid sealedAt');
  if (
    m.journal !== undefined &&
    !(Array.isArray(m.journal) && m.journal.every((c) => typeof c === 'string'))
  )
    throw new SpoolFormatError('metadata with an invalid journal list');
  if (m.signal !== undefined && (typeof m.signal !== 'string' || m.signal === ''))
    throw new SpoolFormatError('metadata with an invalid signal');
}
