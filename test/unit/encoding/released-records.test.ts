/**
 * An export's record is freed as soon as its batch's body is made, not left to a collection:
 * megabytes per export would otherwise stay in the RSS (and in V8's external memory) until then.
 */
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import { releaseRecords } from '../../../src/encoding/handed-over.js';
import { JsonWriter } from '../../../src/encoding/json-writer.js';

/** ArrayBuffer.prototype.transfer (Node ≥ 22): what frees a buffer before a collection. */
const canFree = 'transfer' in ArrayBuffer.prototype;

/** An export's output of `bytes` bytes, handed over by the writer (not copied out). */
function handedOver(writer: JsonWriter, bytes: number): Buffer {
  writer.raw('x'.repeat(bytes));
  return writer.finish();
}

describe('released records', () => {
  test.runIf(canFree)(
    "handed-over records are freed at once; others' buffers are left alone",
    () => {
      const writer = new JsonWriter();
      handedOver(writer, 300_000); // sizes the writer for ~300 kB outputs
      const many = Array.from({ length: 10 }, () => handedOver(writer, 300_000));
      const notOurs = Buffer.alloc(300_000, 1);
      const small = handedOver(new JsonWriter(), 10); // copied out of the writer's buffer
      const before = process.memoryUsage().arrayBuffers;
      releaseRecords([...many, notOurs, small]);
      const freed = before - process.memoryUsage().arrayBuffers;
      expect(many.map((r) => r.buffer.byteLength)).toEqual(many.map(() => 0));
      expect(freed).toBeGreaterThanOrEqual(10 * 300_000);
      expect(notOurs.length).toBe(300_000);
      expect(notOurs[0]).toBe(1);
      expect(small.toString()).toBe('x'.repeat(10));
      releaseRecords(many); // a second release of the same records is harmless
      // The writer's next output is a buffer of its own, not one of the freed ones.
      expect(handedOver(writer, 300_000).toString()).toBe('x'.repeat(300_000));
    },
  );

  test('a record moved to a worker is skipped: its buffer here is already empty', () => {
    const writer = new JsonWriter();
    handedOver(writer, 300_000);
    const moved = handedOver(writer, 300_000);
    const { port1 } = new MessageChannel();
    port1.postMessage(moved.buffer, [moved.buffer as ArrayBuffer]); // transferred: this side is empty now
    port1.close();
    expect(() => releaseRecords([moved])).not.toThrow();
    expect(moved.buffer.byteLength).toBe(0);
  });

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
      releaseRecords([record]);
    },
  );
});
