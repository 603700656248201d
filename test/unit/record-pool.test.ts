/**
 * Record buffers go back to the encoders once their batch's body is made, so that a service
 * exporting about the same bytes every second does not allocate and free a megabyte each time.
 */
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import {
  MAX_POOLED_BYTES,
  pooledRecordBytes,
  recycleRecords,
} from '../../src/encoding/handed-over.js';
import { JsonWriter } from '../../src/encoding/json-writer.js';

/** ArrayBuffer.prototype.transfer (Node ≥ 22): what frees a buffer before a collection. */
const canFree = 'transfer' in ArrayBuffer.prototype;

/** An export's output of `bytes` bytes, handed over by the writer (not copied out). */
function handedOver(writer: JsonWriter, bytes: number): Buffer {
  writer.raw('x'.repeat(bytes));
  return writer.finish();
}

describe('the record pool', () => {
  test("a recycled record's buffer is the next export's, and only once", () => {
    const writer = new JsonWriter();
    handedOver(writer, 600_000); // sizes the writer for ~600 kB outputs
    const first = handedOver(writer, 600_000);
    const before = pooledRecordBytes();
    recycleRecords([first]);
    expect(pooledRecordBytes()).toBe(before + first.buffer.byteLength);
    recycleRecords([first]); // a second release of the same record is ignored
    expect(pooledRecordBytes()).toBe(before + first.buffer.byteLength);
    const second = handedOver(writer, 600_000);
    expect(second.buffer).toBe(first.buffer);
    expect(pooledRecordBytes()).toBe(before);
    const third = handedOver(writer, 600_000);
    expect(third.buffer).not.toBe(first.buffer);
  });

  test('what was moved to a worker, copied out, or does not fit is not kept', () => {
    const writer = new JsonWriter();
    handedOver(writer, 300_000);
    const moved = handedOver(writer, 300_000);
    const { port1 } = new MessageChannel();
    port1.postMessage(moved.buffer, [moved.buffer as ArrayBuffer]); // transferred: this side is empty now
    port1.close();
    const small = handedOver(new JsonWriter(), 10); // copied out of the writer's buffer
    const before = pooledRecordBytes();
    recycleRecords([moved, small, Buffer.alloc(300_000)]);
    expect(pooledRecordBytes()).toBe(before);
    const many = Array.from({ length: 40 }, () => handedOver(writer, 300_000));
    recycleRecords(many);
    expect(pooledRecordBytes()).toBeLessThanOrEqual(MAX_POOLED_BYTES);
    expect(pooledRecordBytes()).toBeGreaterThan(MAX_POOLED_BYTES - 400_000);
  });

  test.runIf(canFree)(
    "records that do not fit are freed at once; others' buffers are left alone",
    () => {
      const writer = new JsonWriter();
      handedOver(writer, 300_000);
      const many = Array.from({ length: 40 }, () => handedOver(writer, 300_000));
      const notOurs = Buffer.alloc(300_000, 1);
      const small = handedOver(new JsonWriter(), 10);
      const sizeBefore = pooledRecordBytes();
      recycleRecords([...many, notOurs, small]);
      const kept = pooledRecordBytes() - sizeBefore;
      const freed = many.filter((r) => r.buffer.byteLength === 0);
      // The 40 records (about 12 MB) do not all fit in the pool: each one is kept or freed.
      expect(freed.length).toBeGreaterThan(0);
      expect(kept).toBe(
        many.filter((r) => r.buffer.byteLength > 0).reduce((n, r) => n + r.buffer.byteLength, 0),
      );
      expect(notOurs.length).toBe(300_000);
      expect(notOurs[0]).toBe(1);
      expect(small.toString()).toBe('x'.repeat(10));
    },
  );

  test.runIf(canFree)(
    "a writer's outgrown buffers are freed as it grows, not left for a collection",
    () => {
      const writer = new JsonWriter();
      const chunk = 'y'.repeat(64 * 1024);
      const before = process.memoryUsage().arrayBuffers;
      // 256 KiB, doubled to 512 KiB, 1, 2, ..., 64 MiB: without freeing, as much again is garbage.
      for (let i = 0; i < 1024; i++) writer.raw(chunk);
      const record = writer.finish();
      const added = process.memoryUsage().arrayBuffers - before;
      expect(record.length).toBe(64 * 1024 * 1024);
      expect(added).toBeLessThan(record.buffer.byteLength * 1.25);
      recycleRecords([record]);
    },
  );
});
