import { describe, expect, test } from 'vitest';
import {
  decodePart,
  encodeSegmentHeader,
  JournalFormatError,
  PendingEntries,
  sealBytes,
} from '../../../src/spool/journal-format.js';

const CHAIN = '01a23e5c-0000-7000-8000-000000000001';
const header = () =>
  encodeSegmentHeader({
    signal: 'metrics',
    format: 'otlp-json',
    chain: CHAIN,
    part: 0,
    attributes: { 'service.name': 'a' },
  });

/**
 * Records of awkward sizes: empty, tiny, across a chunk boundary, larger than a chunk; bytes
 * that differ along each record, so a piece copied from the wrong place shows.
 */
const records = [
  0,
  1,
  100,
  PendingEntries.CHUNK_BYTES - 40,
  3 * PendingEntries.CHUNK_BYTES + 7,
].map((n, i) => {
  const r = Buffer.alloc(n);
  for (let j = 0; j < n; j++) r[j] = (j * 31 + (j >> 8) + i * 7) & 0xff;
  return r;
});

function part(): Buffer {
  const p = new PendingEntries();
  for (const [i, r] of records.entries())
    p.record(i, i * 10, i === 2 ? 1_700_000_000_123 : undefined, r);
  p.seal({
    id: '01a23e5c-0000-7000-8000-0000000000ff',
    sealedAt: 5,
    attributes: {},
    dataTimeMillis: 1,
    records: records.length,
  });
  const taken = p.take();
  const file = Buffer.concat([header(), ...taken]);
  p.free(taken);
  expect(p.bytes).toBe(0);
  return file;
}

describe('journal parts', () => {
  test('entries written across chunks read back as they were appended', () => {
    const d = decodePart(part());
    expect(d.records.map((r, i) => r.record.equals(records[i] as Buffer))).toEqual(
      records.map(() => true),
    );
    expect(d.records.map((r) => [r.seq, r.points])).toEqual(records.map((_, i) => [i, i * 10]));
    expect(d.records[2]?.dataTimeMillis).toBe(1_700_000_000_123);
    expect(d.records[0]?.dataTimeMillis).toBeUndefined();
    expect(d.seal?.id).toBe('01a23e5c-0000-7000-8000-0000000000ff');
    expect(d.seal?.records).toBe(records.length);
    expect(d.tornBytes).toBe(0);
  });

  test('a tail a crash cut short: the whole entries before it', () => {
    const file = part();
    const lengths = records.map((r) => r.length + 28);
    const headerBytes = header().length;
    // Cut inside the fourth record: three records survive, no seal.
    const cut = headerBytes + (lengths[0] ?? 0) + (lengths[1] ?? 0) + (lengths[2] ?? 0) + 50;
    const d = decodePart(file.subarray(0, cut));
    expect(d.records.map((r, i) => r.record.equals(records[i] as Buffer))).toEqual([
      true,
      true,
      true,
    ]);
    expect(d.seal).toBeUndefined();
    expect(d.tornBytes).toBe(50);
    expect(d.damage).toBeUndefined();
  });

  test('a torn tail the disk left as zeros or stale bytes, nothing intact after it: not damage', () => {
    const file = part();
    const lengths = records.map((r) => r.length + 28);
    const fourth = header().length + (lengths[0] ?? 0) + (lengths[1] ?? 0) + (lengths[2] ?? 0);
    const zeros = Buffer.from(file);
    zeros.fill(0, fourth + 10);
    expect(decodePart(zeros).damage).toBeUndefined();
    expect(decodePart(zeros).records).toHaveLength(3);
    // Stale bytes: the fourth record's payload repeated over where the rest would be.
    const stale = Buffer.from(file);
    const payload = file.subarray(fourth + 28, fourth + (lengths[3] ?? 0));
    for (let at = fourth + 20; at < stale.length; at += payload.length) payload.copy(stale, at);
    expect(decodePart(stale).damage).toBeUndefined();
  });

  test('damage before intact entries is told apart from a torn tail', () => {
    const file = part();
    const second = header().length + (records[0]?.length ?? 0) + 28;
    // In the second record's payload: that entry is skipped, the rest read.
    const payload = Buffer.from(file);
    payload[second + 28] = (payload[second + 28] as number) ^ 1;
    const skipped = decodePart(payload);
    expect(skipped.records.map((r) => r.seq)).toEqual([0, 2, 3, 4]);
    expect(skipped.seal).toBeDefined();
    expect(skipped.damage).toEqual({ header: false, skipped: 1, cut: 0 });
    // In its length: nothing after it can be framed, but it is known to be there.
    const length = Buffer.from(file);
    length[second + 2] = (length[second + 2] as number) ^ 1;
    const cut = decodePart(length);
    expect(cut.records.map((r) => r.seq)).toEqual([0]);
    expect(cut.damage).toEqual({ header: false, skipped: 0, cut: file.length - second });
  });

  test('a damaged header length is found again by the checksum; a header cut short is still torn', () => {
    const file = part();
    const damaged = Buffer.from(file);
    damaged[11] = 0x7f;
    const d = decodePart(damaged);
    expect(d.records).toHaveLength(records.length);
    expect(d.damage).toEqual({ header: true, skipped: 0, cut: 0 });
    expect(() => decodePart(file.subarray(0, header().length - 3))).toThrow(/torn header/);
  });

  test('a damaged entry with intact ones after it is skipped, and said; a damaged header refuses it', () => {
    const file = part();
    const damaged = Buffer.from(file);
    // The second record's one byte (after the empty first record's header and its own).
    const at = header().length + 28 + 28;
    damaged[at] = (damaged[at] as number) ^ 0xff;
    expect(decodePart(damaged).records.map((r) => r.seq)).toEqual([0, 2, 3, 4]);
    expect(decodePart(damaged).damage).toEqual({ header: false, skipped: 1, cut: 0 });
    const badHeader = Buffer.from(file);
    badHeader[20] = (badHeader[20] as number) ^ 0xff;
    expect(() => decodePart(badHeader)).toThrow(JournalFormatError);
    expect(() => decodePart(file.subarray(0, 10))).toThrow(/torn header/);
  });
  test('an entry adds what growth() said; a seal adds no more than the room counted for it', () => {
    const attributes = { 'service.name': 'svc-é', 'deployment.environment': 'production' };
    for (const fill of [0, 1, 100, PendingEntries.CHUNK_BYTES - 60, PendingEntries.CHUNK_BYTES]) {
      const p = new PendingEntries();
      p.reserveSeal(attributes);
      const room = p.bytes;
      expect(room).toBe(sealBytes(attributes));
      for (const [i, r] of [...records, Buffer.alloc(fill)].entries()) {
        const before = p.bytes;
        const growth = p.growth(r.length);
        p.record(i, 1, undefined, r);
        expect(p.bytes - before).toBe(growth);
      }
      const before = p.bytes;
      p.seal({
        id: '01a23e5c-0000-7000-8000-0000000000ff',
        sealedAt: Date.now(),
        attributes,
        dataTimeMillis: Date.now() - 123_456.5,
        records: Number.MAX_SAFE_INTEGER,
      });
      // The seal took at most its room (into the current chunk, or a buffer of its own size).
      expect(p.bytes).toBeLessThanOrEqual(before);
      expect(p.bytes).toBeGreaterThanOrEqual(before - room);
      const taken = p.take();
      const d = decodePart(Buffer.concat([header(), ...taken]));
      expect(d.seal?.attributes).toEqual(attributes);
      p.free(taken);
      expect(p.bytes).toBe(0);
    }
  });
});
