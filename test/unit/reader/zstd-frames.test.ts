import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { zstdFrameEnd } from '../../../src/reader/zstd-frames.js';
import { zstdCompress as zstdCompressSync } from '../../support/zstd.js';

const text = Buffer.from(randomBytes(20_000).toString('hex') + 'x'.repeat(50_000)); // raw, compressed and RLE blocks

describe('zstdFrameEnd', () => {
  test('finds the end of each frame of a stream, skippable frames included', () => {
    const a = zstdCompressSync(text);
    const skippable = Buffer.concat([
      Buffer.from([0x50, 0x2a, 0x4d, 0x18]),
      Buffer.from([3, 0, 0, 0]),
      Buffer.from('abc'),
    ]);
    const b = zstdCompressSync(Buffer.from('second'));
    const stream = Buffer.concat([a, skippable, b]);
    expect(zstdFrameEnd(stream, 0)).toBe(a.length);
    expect(zstdFrameEnd(stream, a.length)).toBe(a.length + skippable.length);
    expect(zstdFrameEnd(stream, a.length + skippable.length)).toBe(stream.length);
  });

  test('a frame cut anywhere is reported as truncated', () => {
    const frame = zstdCompressSync(text);
    for (let cut = 0; cut < frame.length; cut += Math.max(1, Math.floor(frame.length / 300))) {
      expect(() => zstdFrameEnd(frame.subarray(0, cut), 0), `cut at ${cut}`).toThrow(
        /truncated|magic/,
      );
    }
    expect(() => zstdFrameEnd(frame.subarray(0, frame.length - 1), 0)).toThrow(/truncated/);
  });

  test('data that is not zstd is refused', () => {
    expect(() => zstdFrameEnd(Buffer.from('{"resourceMetrics":[]}'), 0)).toThrow(/magic/);
  });
});
