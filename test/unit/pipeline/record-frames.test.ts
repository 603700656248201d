/**
 * With zstd on node:zlib, an open batch's records are compressed as they are appended and freed
 * once compressed: the batch holds compressed bytes, and each object is its own zstd frame of
 * one reused context, even when the next object's records arrive while the last one is ending.
 * Expected bodies come from the bytes written, joined here; decoded by the test's own zstd.
 */
import { createHash } from 'node:crypto';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { afterAll, describe, expect, test } from 'vitest';
import { type BodyMaker, createBodyMaker } from '../../../src/body/index.js';
import { zstdFrames } from '../../../src/compression/compressors.js';
import { JsonWriter } from '../../../src/encoding/json-writer.js';
import { RecordBatch } from '../../../src/pipeline/open-batch.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import { waitFor } from '../../support/wait.js';
import { builtInZstd, zstdDecompress } from '../../support/zstd.js';

/** Text that compresses like metrics but not trivially; `seed` makes each one differ. */
function text(bytes: number, seed: number): string {
  let out = '';
  for (let j = 0; out.length < bytes; j++) {
    out += `{"key":"http.route","value":{"stringValue":"/api/${(seed * 7919 + j) % 997}"}},"asInt":${j * seed},`;
  }
  return out.slice(0, bytes);
}

const INPUTS = { attributes: {}, group: '', dataTimeMillis: undefined };
/** An OTLP/JSON object: one ExportMetricsServiceRequest around its ResourceMetrics. */
const HEAD = '{"resourceMetrics":[';
const TAIL = ']}\n';

const makers: BodyMaker[] = [];
afterAll(async () => {
  for (const m of makers) await m.close();
});

/** A body maker closed after the file's tests. */
function framedMaker(options: Parameters<typeof createBodyMaker>[0]): BodyMaker {
  const maker = createBodyMaker(options);
  makers.push(maker);
  return maker;
}

const zstdFramedMaker = () =>
  framedMaker({ body: 'framed', compression: 'zstd', level: 3, engine: 'node:zlib' });

describe.runIf(builtInZstd)('records compressed as they are appended (zstd, node:zlib)', () => {
  test('frames written back to back, the next begun before the last has ended, each decode to their own parts', async () => {
    const frames = zstdFrames(3);
    try {
      // Parts past the 64 KiB output chunk, so each frame's output comes in several chunks.
      const objects = Array.from({ length: 6 }, (_, i) =>
        Array.from({ length: 1 + (i % 3) }, (_, j) =>
          Buffer.from(text(150_000 + j * 7_000, i * 10 + j)),
        ),
      );
      const ended: Promise<Uint8Array>[] = [];
      for (const parts of objects) {
        const frame = frames.open();
        for (const part of parts) frame.write(part);
        ended.push(frame.end()); // not awaited: the next frame's parts follow at once
      }
      const bodies = await Promise.all(ended);
      expect(bodies.map((b) => zstdDecompress(b).toString())).toEqual(
        objects.map((parts) => Buffer.concat(parts).toString()),
      );
      // One object a frame: none decodes to more than its own parts.
      expect(new Set(bodies.map((b) => b.length)).size).toBe(bodies.length);
    } finally {
      frames.close();
    }
  });

  test('a frame cannot be opened while another is still being written', () => {
    const frames = zstdFrames(3);
    try {
      const first = frames.open();
      first.write(Buffer.from('a'));
      expect(() => frames.open()).toThrow(/still open/);
      void first.end();
    } finally {
      frames.close();
    }
  });

  test('closing the compressor rejects a frame still ending, and the next frame works', async () => {
    const frames = zstdFrames(3);
    const frame = frames.open();
    frame.write(Buffer.from(text(500_000, 1)));
    const ended = frame.end();
    frames.close();
    await expect(ended).rejects.toThrow(/closed/);
    const next = frames.open();
    next.write(Buffer.from('after'));
    expect(zstdDecompress(await next.end()).toString()).toBe('after');
    frames.close();
  });

  test("a batch's record is freed once compressed, while the batch is still open", async () => {
    const maker = zstdFramedMaker();
    const batch = new RecordBatch(metricsExport.records['otlp-json'], maker.openFrame);
    const writer = new JsonWriter();
    writer.raw(text(300_000, 0));
    writer.finish(); // sizes the writer for such outputs, which it then hands over
    const texts = [0, 1, 2].map((i) => text(300_000, i + 1));
    const records: Buffer[] = [];
    for (const t of texts) {
      writer.raw(t);
      const record = writer.finish(); // handed over: the writer's own buffer, not a copy
      records.push(record);
      batch.append(record, 1, INPUTS);
    }
    // Freed: an empty, detached buffer, long before the seal.
    await waitFor(
      () => records.every((r) => r.buffer.byteLength === 0),
      5_000,
      'the records freed once compressed',
    );
    expect(batch.isEmpty).toBe(false);
    const objectBytes = HEAD.length + 3 * 300_000 + 2 + TAIL.length;
    expect(batch.bytes).toBe(objectBytes);
    const { contents, rawBytes } = batch.take();
    expect(contents.records).toBeUndefined();
    expect(rawBytes).toBe(objectBytes);
    const body = await contents.frame;
    expect(body).toBeDefined();
    expect(zstdDecompress(body ?? new Uint8Array()).toString()).toBe(
      `${HEAD}${texts.join(',')}${TAIL}`,
    );
    expect(batch.isEmpty).toBe(true);
  });

  test("frames ended back to back: each body's SHA-256 and CRC32, taken as its chunks came, are its bytes'", async () => {
    const maker = zstdFramedMaker();
    const openFrame = maker.openFrame;
    if (openFrame === undefined) throw new Error('zstd on node:zlib opens frames');
    // Records past the 64 KiB output chunk, so each frame's body comes in several chunks, and
    // the next frame begun before the last has ended.
    const ended: Promise<Uint8Array>[] = [];
    for (let i = 0; i < 4; i++) {
      const frame = openFrame({ head: HEAD, separator: ',', tail: TAIL }, 200_000);
      for (let j = 0; j <= i; j++) frame.append(Buffer.from(text(200_000, i * 10 + j)));
      ended.push(frame.end());
    }
    for (const frame of ended) {
      const made = await maker.make({ frame, framing: null, sha256: true, crc32: true });
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(zlibCrc32(made.body));
      expect(made.sha256).toBe(createHash('sha256').update(made.body).digest('hex'));
      expect(made.crc32).toBe(crc.toString('base64'));
    }
  });

  test("a frame's zstd window is sized to its first record: two records where exports repeat (metrics), the least for spans and log records", async () => {
    // The window read from each frame's header as RFC 8878 (3.1.1.1.2) defines it.
    const windowOf = (body: Uint8Array): number => {
      expect(Buffer.from(body.subarray(0, 4)).readUInt32LE(0)).toBe(0xfd2fb528);
      const descriptor = body[4] ?? 0;
      expect(descriptor & 0x20).toBe(0); // no single segment: a window descriptor follows
      const w = body[5] ?? 0;
      const base = 2 ** (10 + (w >> 3));
      return base + (base / 8) * (w & 7);
    };
    const frameOf = async (maker: BodyMaker, sizes: number[]) => {
      const openFrame = maker.openFrame;
      if (openFrame === undefined) throw new Error('zstd on node:zlib opens frames');
      const records = sizes.map((n, i) => Buffer.from(text(n, i + 7)));
      const frame = openFrame({ head: HEAD, separator: ',', tail: TAIL }, sizes[0] ?? 0);
      for (const record of records) frame.append(record);
      const body = await frame.end();
      expect(zstdDecompress(body).toString()).toBe(
        `${HEAD}${records.map(String).join(',')}${TAIL}`,
      );
      return windowOf(body);
    };
    const KiB = 1024;
    const metrics = zstdFramedMaker();
    const repeat = framedMaker({
      body: 'framed',
      compression: 'zstd',
      level: 3,
      engine: 'node:zlib',
      recordsRepeat: true,
    });
    // Where exports repeat: the smallest window (256 KiB to level 3's 2 MiB) of two records.
    expect(await frameOf(repeat, [100_000, 100_000])).toBe(256 * KiB);
    expect(await frameOf(repeat, [300_000, 300_000])).toBe(1024 * KiB);
    expect(await frameOf(repeat, [900_000])).toBe(2048 * KiB);
    expect(await frameOf(repeat, [3_000_000])).toBe(2048 * KiB);
    // Back to a small window, then spans' and log records': always the least.
    expect(await frameOf(repeat, [100_000])).toBe(256 * KiB);
    expect(await frameOf(metrics, [900_000, 900_000])).toBe(256 * KiB);
  });

  test('a batch made whole (a replay from the spool) gets the window its records got as they came', async () => {
    const maker = framedMaker({
      body: 'framed',
      compression: 'zstd',
      level: 3,
      engine: 'node:zlib',
      recordsRepeat: true,
    });
    const records = [0, 1].map((i) => Buffer.from(text(300_000, i + 3)));
    const openFrame = maker.openFrame;
    if (openFrame === undefined) throw new Error('zstd on node:zlib opens frames');
    const framing = { head: HEAD, separator: ',', tail: TAIL };
    const frame = openFrame(framing, records[0]?.length ?? 0);
    for (const record of records) frame.append(Buffer.from(record));
    const streamed = await frame.end();
    const whole = await maker.make({ records, framing, sha256: false, crc32: false });
    // The same bytes: the replayed object is the one the first attempt would have stored.
    expect(Buffer.from(whole.body).equals(Buffer.from(streamed))).toBe(true);
  });

  test('gzip keeps the records until the seal: it offers no frames', () => {
    const maker = framedMaker({ body: 'framed', compression: 'gzip', level: 6 });
    expect(maker.openFrame).toBeUndefined();
  });
});
