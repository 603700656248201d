import { release } from '../encoding/handed-over.js';
import type { JournalRecordFormat } from '../pipeline/journal-port.js';
import { crc32c } from './file-format.js';

/**
 * The journal's files. The exports of one open batch form a chain (named by a UUIDv7); a chain is
 * one or more parts, `{chain}.{part}.journal`: a part is never written again after a failed write
 * or fsync, and the entries that were not durable yet go into the next part.
 *
 * A part starts with its header:
 *   [0,4)   magic "OS3J"
 *   [4,6)   format version (u16 LE) = 1
 *   [6,8)   reserved, 0
 *   [8,12)  header JSON length H (u32 LE)
 *   [12,16) CRC32C over bytes [0,12) and the JSON (u32 LE)
 *   [16,16+H) UTF-8 JSON (SegmentHeader)
 * then entries, each:
 *   [0,4)   payload length P (u32 LE)
 *   [4,8)   CRC32C over bytes [8,28) and the payload (u32 LE)
 *   [8,9)   kind: 1 an export's record, 2 the seal
 *   [9,12)  reserved, 0
 *   [12,16) a record's number in its chain (u32 LE), 0, 1, 2, ...; the seal: 0
 *   [16,20) a record's items (u32 LE)
 *   [20,28) a record's oldest item time, ms since the epoch (f64 LE; NaN: not noted)
 *   [28,28+P) payload: a record's bytes (the signal's OTLP record of one export), or the seal's
 *             UTF-8 JSON (SealEntry, which says how many records the chain has)
 * Only the tail of a part can be torn (what a crash cut short was never fsynced): a reader takes
 * the entries up to the first that is short or fails its checksum, unless intact entries follow
 * it: that is damage to data already on disk (a bad sector, bit rot), not a torn tail. An entry
 * whose length still leads to an intact entry is skipped (its own bytes are lost); past a damaged
 * length nothing of the part can be framed safely, so it ends there. A header whose length
 * field is damaged is found again by its checksum. A record may be in two parts (rewritten after
 * a failed fsync whose data still reached the disk): its number tells.
 */
const MAGIC = 0x4a33534f; // "OS3J" read as a little-endian u32
const VERSION = 1;
const HEADER_FIXED = 16;
export const ENTRY_HEADER_BYTES = 28;
const RECORD = 1;
const SEAL = 2;

export type { JournalRecordFormat };

/** What a part says about its chain. */
export interface SegmentHeader {
  /** The signal whose exports these are (each signal has a spool, and a journal, of its own). */
  signal: string;
  /** The format of the records. */
  format: JournalRecordFormat;
  chain: string;
  part: number;
  /** The key template's attribute values of the batch's exports (all share them). */
  attributes: Readonly<Record<string, string>>;
}

/** The seal of a chain: what fixes its batch's object key. */
export interface SealEntry {
  /** The batch's UUIDv7, in its key. */
  id: string;
  /** Seal time, ms since the epoch. */
  sealedAt: number;
  attributes: Readonly<Record<string, string>>;
  /** The batch's oldest data point time (partitionTime 'data'), if noted. */
  dataTimeMillis: number | undefined;
  /**
   * The chain's records when it was sealed (numbers 0 to records - 1): what a replay should find,
   * so the loss of its last ones shows. Undefined in seals written before it was noted.
   */
  records: number | undefined;
}

export interface RecordEntry {
  seq: number;
  points: number;
  dataTimeMillis: number | undefined;
  record: Buffer;
}

export class JournalFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JournalFormatError';
  }
}

const CHAIN_FILE =
  /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(\d{1,6})\.journal$/;

export function partName(chain: string, part: number): string {
  return `${chain}.${part}.journal`;
}

/** A journal file's chain and part, or undefined for a name the journal never writes. */
export function parsePartName(name: string): { chain: string; part: number } | undefined {
  const m = CHAIN_FILE.exec(name);
  return m === null ? undefined : { chain: m[1] as string, part: Number(m[2]) };
}

export function encodeSegmentHeader(header: SegmentHeader): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const out = Buffer.alloc(HEADER_FIXED + json.length);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt16LE(VERSION, 4);
  out.writeUInt16LE(0, 6);
  out.writeUInt32LE(json.length, 8);
  json.copy(out, HEADER_FIXED);
  out.writeUInt32LE(crc32c(json, crc32c(out.subarray(0, 12))), 12);
  return out;
}

/**
 * The most a seal entry of a batch with `attributes` takes, header included: its id (a UUID's 36
 * characters) and its numbers at their longest text (24 characters, "-1.7976931348623157e+308").
 */
export function sealBytes(attributes: Readonly<Record<string, string>>): number {
  const longest = -Number.MAX_VALUE;
  const seal: SealEntry = {
    id: '0'.repeat(36),
    sealedAt: longest,
    attributes,
    dataTimeMillis: longest,
    records: longest,
  };
  return ENTRY_HEADER_BYTES + Buffer.byteLength(JSON.stringify(seal));
}

/**
 * Entry headers and payloads, copied into fixed-size chunks until they are written. An entry may
 * span chunks (the file is their concatenation). Chunks are reused from a process-wide pool:
 * copying a record into fresh memory costs a page fault per 4 KiB (measured: 300 KB into a new
 * allocation took 1-6 ms on a busy machine, into a reused one 4 µs). The pool keeps about one
 * interval's worth: trimPool() after each group commit.
 */
export class PendingEntries {
  static readonly CHUNK_BYTES = 256 * 1024;
  /** Idle chunks kept at most, process-wide (64 MiB). */
  static readonly POOL_CHUNKS = 256;
  static readonly #pool: ArrayBuffer[] = [];

  /** Releases idle chunks beyond `keep` (what the last interval used). */
  static trimPool(keep: number): void {
    const pool = PendingEntries.#pool;
    while (pool.length > keep) release(pool.pop() as ArrayBuffer);
  }

  /** Idle chunks in the pool, and their bytes. */
  static get pooledBytes(): number {
    return PendingEntries.#pool.length * PendingEntries.CHUNK_BYTES;
  }
  static readonly #header = Buffer.alloc(ENTRY_HEADER_BYTES);
  /** Chunks filled, each a view of exactly its bytes. */
  #full: Buffer[] = [];
  #current: Buffer | undefined;
  #used = 0;
  #bytes = 0;
  /** Bytes kept for the seal entry (reserveSeal), which its write takes. */
  #reserved = 0;

  /**
   * Memory held (chunk capacities) and the seal's room: what counts in maxBufferedBytes. A seal
   * happens where no room can be made (an age timer, a flush), so its room is counted from the
   * chain's first entry.
   */
  get bytes(): number {
    return this.#bytes + this.#reserved;
  }

  /**
   * What an entry of `payloadBytes` adds to `bytes` now: the chunks it opens (none while it fits
   * in the current one).
   */
  growth(payloadBytes: number): number {
    const free = this.#current === undefined ? 0 : this.#current.length - this.#used;
    return PendingEntries.chunksFor(ENTRY_HEADER_BYTES + payloadBytes - free);
  }

  /** The bytes of the chunks `bytes` more take (none for 0 or less). */
  static chunksFor(bytes: number): number {
    const chunk = PendingEntries.CHUNK_BYTES;
    return bytes <= 0 ? 0 : Math.ceil(bytes / chunk) * chunk;
  }

  /** Counts room for the seal of a chain whose batch has `attributes` (sealBytes). */
  reserveSeal(attributes: Readonly<Record<string, string>>): void {
    this.#reserved = sealBytes(attributes);
  }

  /** No seal will be written (the batch could not be sealed): its room is freed. */
  releaseSeal(): void {
    this.#reserved = 0;
  }

  get isEmpty(): boolean {
    return this.#full.length === 0 && this.#used === 0;
  }

  record(
    seq: number,
    points: number,
    dataTimeMillis: number | undefined,
    record: Uint8Array,
  ): void {
    this.#entry(RECORD, seq, points, dataTimeMillis ?? Number.NaN, record);
  }

  /**
   * The seal: it goes into the current chunk, or into a buffer of its own size (never a new
   * chunk), so it adds no more than the room counted for it.
   */
  seal(seal: SealEntry): void {
    this.#reserved = 0;
    this.#entry(SEAL, 0, 0, Number.NaN, Buffer.from(JSON.stringify(seal)), true);
  }

  /**
   * Hands the entries over for a write, and starts empty. The caller gives them back (putBack)
   * if the write failed, or frees them (free) once it is durable.
   */
  take(): Buffer[] {
    const taken = this.#full;
    if (this.#current !== undefined && this.#used > 0)
      taken.push(this.#current.subarray(0, this.#used));
    else if (this.#current !== undefined) this.free([this.#current]);
    this.#full = [];
    this.#current = undefined;
    this.#used = 0;
    return taken;
  }

  /** Entries taken for a write that failed: they go first, before anything appended since. */
  putBack(taken: Buffer[]): void {
    if (taken.length > 0) this.#full = [...taken, ...this.#full];
  }

  /** Frees entries that are durable (or given up): their chunks go back to the pool. */
  free(taken: readonly Buffer[]): void {
    const pool = PendingEntries.#pool;
    for (const chunk of taken) {
      this.#bytes -= chunk.buffer.byteLength;
      if (
        pool.length < PendingEntries.POOL_CHUNKS &&
        chunk.buffer instanceof ArrayBuffer &&
        chunk.buffer.byteLength === PendingEntries.CHUNK_BYTES
      )
        pool.push(chunk.buffer);
      else release(chunk.buffer);
    }
  }

  /** Frees everything pending (the chain is given up). */
  clear(): void {
    this.#reserved = 0;
    this.free(this.take());
  }

  #entry(
    kind: number,
    seq: number,
    points: number,
    time: number,
    payload: Uint8Array,
    exact = false,
  ): void {
    const h = PendingEntries.#header;
    h.writeUInt32LE(payload.length, 0);
    h.writeUInt8(kind, 8);
    h.writeUInt8(0, 9);
    h.writeUInt16LE(0, 10);
    h.writeUInt32LE(seq, 12);
    h.writeUInt32LE(points, 16);
    h.writeDoubleLE(time, 20);
    h.writeUInt32LE(crc32c(payload, crc32c(h.subarray(8, ENTRY_HEADER_BYTES))), 4);
    if (exact) this.#put(Buffer.concat([h, payload]), true);
    else {
      this.#put(h, false);
      this.#put(payload, false);
    }
  }

  /** Copies `bytes` in; a chunk opened for an `exact` entry is the size of what is left of it. */
  #put(bytes: Uint8Array, exact: boolean): void {
    let at = 0;
    while (at < bytes.length) {
      if (this.#current === undefined || this.#used === this.#current.length) {
        if (this.#current !== undefined) this.#full.push(this.#current);
        const reused = exact ? undefined : PendingEntries.#pool.pop();
        this.#current =
          reused !== undefined
            ? Buffer.from(reused)
            : Buffer.allocUnsafeSlow(exact ? bytes.length - at : PendingEntries.CHUNK_BYTES);
        this.#bytes += this.#current.length;
        this.#used = 0;
      }
      const n = Math.min(bytes.length - at, this.#current.length - this.#used);
      this.#current.set(bytes.subarray(at, at + n), this.#used);
      this.#used += n;
      at += n;
    }
  }
}

/** What one part holds: its header and the entries up to the first torn or corrupt one. */
export interface DecodedPart {
  header: SegmentHeader;
  records: RecordEntry[];
  seal: SealEntry | undefined;
  /** Bytes after the last whole entry (a tail a crash cut short, or damage). */
  tornBytes: number;
  /**
   * Damage to bytes already on disk, not a torn tail (undefined when none): what was lost, for
   * the report. `skipped`: entries that failed their checksum between intact ones; `cut`: bytes
   * after a damaged entry length, before which intact entries lie that cannot be framed.
   */
  damage: { header: boolean; skipped: number; cut: number } | undefined;
}

/** Headers longer than this are not looked for past a damaged length field. */
const HEADER_SEARCH_BYTES = 64 * 1024;
const CLOSE_BRACE = 0x7d;

/**
 * The JSON length of a header whose length field does not fit the file: the one, among the
 * lengths at which the JSON could end, that the header's checksum confirms; undefined if none
 * does (a header a crash cut short).
 */
function recoverHeaderLength(file: Buffer): number | undefined {
  const fixed = Buffer.from(file.subarray(0, 12));
  const want = file.readUInt32LE(12);
  const limit = Math.min(file.length, HEADER_FIXED + HEADER_SEARCH_BYTES);
  for (let end = file.indexOf(CLOSE_BRACE, HEADER_FIXED); end >= 0 && end < limit; ) {
    const length = end + 1 - HEADER_FIXED;
    fixed.writeUInt32LE(length, 8);
    if (crc32c(file.subarray(HEADER_FIXED, end + 1), crc32c(fixed)) === want) return length;
    end = file.indexOf(CLOSE_BRACE, end + 1);
  }
  return undefined;
}

/** Whether a whole entry that passes its checksum starts at `at`. */
function intactEntryAt(file: Buffer, at: number): boolean {
  if (at + ENTRY_HEADER_BYTES > file.length) return false;
  const kind = file[at + 8];
  if ((kind !== RECORD && kind !== SEAL) || file[at + 9] !== 0) return false;
  if (file[at + 10] !== 0 || file[at + 11] !== 0) return false;
  const end = at + ENTRY_HEADER_BYTES + file.readUInt32LE(at);
  return end <= file.length && crc32c(file.subarray(at + 8, end)) === file.readUInt32LE(at + 4);
}

/** Whether an intact entry starts anywhere from `from` on. */
function intactEntryFrom(file: Buffer, from: number): boolean {
  for (let at = from; at + ENTRY_HEADER_BYTES <= file.length; at++)
    if (intactEntryAt(file, at)) return true;
  return false;
}

/**
 * Reads one part; throws JournalFormatError when its header is not a journal header (a part cut
 * short before its header was whole says so in its message: `torn header`).
 */
export function decodePart(file: Buffer): DecodedPart {
  if (file.length < HEADER_FIXED)
    throw new JournalFormatError(`torn header (${file.length} bytes)`);
  if (file.readUInt32LE(0) !== MAGIC)
    throw new JournalFormatError('not a journal file (bad magic)');
  const version = file.readUInt16LE(4);
  if (version !== VERSION) throw new JournalFormatError(`unknown journal version ${version}`);
  let jsonLength = file.readUInt32LE(8);
  let headerDamaged = false;
  if (file.length < HEADER_FIXED + jsonLength) {
    const recovered = recoverHeaderLength(file);
    if (recovered === undefined) throw new JournalFormatError(`torn header (${file.length} bytes)`);
    jsonLength = recovered;
    headerDamaged = true;
  }
  const json = file.subarray(HEADER_FIXED, HEADER_FIXED + jsonLength);
  // A recovered length was checked against the checksum already.
  if (!headerDamaged && crc32c(json, crc32c(file.subarray(0, 12))) !== file.readUInt32LE(12))
    throw new JournalFormatError('header checksum mismatch (corrupt)');
  const header = parseHeader(json);
  const records: RecordEntry[] = [];
  let seal: SealEntry | undefined;
  let at = HEADER_FIXED + jsonLength;
  let skipped = 0;
  let cut = 0;
  while (at + ENTRY_HEADER_BYTES <= file.length) {
    const length = file.readUInt32LE(at);
    const end = at + ENTRY_HEADER_BYTES + length;
    if (end > file.length || crc32c(file.subarray(at + 8, end)) !== file.readUInt32LE(at + 4)) {
      // Its length leads to an intact entry: only this one is damaged.
      if (end < file.length && intactEntryAt(file, end)) {
        skipped++;
        at = end;
        continue;
      }
      // Intact entries after it, which cannot be framed: damage, not a torn tail.
      if (intactEntryFrom(file, at + 1)) cut = file.length - at;
      break;
    }
    const kind = file.readUInt8(at + 8);
    const payload = file.subarray(at + ENTRY_HEADER_BYTES, end);
    if (kind === RECORD) {
      const time = file.readDoubleLE(at + 20);
      records.push({
        seq: file.readUInt32LE(at + 12),
        points: file.readUInt32LE(at + 16),
        dataTimeMillis: Number.isNaN(time) ? undefined : time,
        record: payload,
      });
    } else if (kind === SEAL) {
      seal ??= parseSeal(payload);
    } else {
      throw new JournalFormatError(`unknown entry kind ${kind}`);
    }
    at = end;
  }
  const damage =
    headerDamaged || skipped > 0 || cut > 0 ? { header: headerDamaged, skipped, cut } : undefined;
  return { header, records, seal, tornBytes: file.length - at, damage };
}

function parseJson(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new JournalFormatError(`unreadable ${what}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new JournalFormatError(`${what} is not an object`);
  return value as Record<string, unknown>;
}

function isAttributes(v: unknown): v is Record<string, string> {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((s) => typeof s === 'string')
  );
}

/** Field types: a header is data, and a replay must not act on anything else. */
function parseHeader(json: Buffer): SegmentHeader {
  const h = parseJson(json, 'journal header');
  if (typeof h.signal !== 'string') throw new JournalFormatError('header without a signal');
  if (h.format !== 'otlp-json' && h.format !== 'otlp-proto')
    throw new JournalFormatError(
      `header with an unknown record format ${JSON.stringify(h.format)}`,
    );
  if (typeof h.chain !== 'string' || parsePartName(partName(h.chain, 0)) === undefined)
    throw new JournalFormatError('header with an invalid chain');
  if (typeof h.part !== 'number' || !Number.isSafeInteger(h.part) || h.part < 0)
    throw new JournalFormatError('header with an invalid part');
  if (!isAttributes(h.attributes)) throw new JournalFormatError('header with invalid attributes');
  return {
    signal: h.signal,
    format: h.format,
    chain: h.chain,
    part: h.part,
    attributes: h.attributes,
  };
}

function parseSeal(payload: Buffer): SealEntry {
  const s = parseJson(payload, 'seal');
  if (typeof s.id !== 'string' || !/^[0-9a-f-]{36}$/.test(s.id))
    throw new JournalFormatError('seal with an invalid id');
  if (typeof s.sealedAt !== 'number' || !Number.isFinite(s.sealedAt))
    throw new JournalFormatError('seal with an invalid sealedAt');
  if (!isAttributes(s.attributes)) throw new JournalFormatError('seal with invalid attributes');
  const t = s.dataTimeMillis;
  if (t !== undefined && (typeof t !== 'number' || !Number.isFinite(t)))
    throw new JournalFormatError('seal with an invalid dataTimeMillis');
  const n = s.records;
  if (n !== undefined && (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0))
    throw new JournalFormatError('seal with an invalid records');
  return {
    id: s.id,
    sealedAt: s.sealedAt,
    attributes: s.attributes,
    dataTimeMillis: t,
    records: n,
  };
}
