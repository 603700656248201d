/**
 * gzipStream() keeps nothing of a body once it is made: neither the output chunks the member
 * arrived in (joined into the body) nor the body itself may stay referenced until the next
 * batch (after a large batch, megabytes of compressed output held for a batch age).
 */
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Gzip } from 'node:zlib';
import { afterEach, expect, test } from 'vitest';
import { gzipStream } from '../../../src/compression/compressors.js';

afterEach(() => {
  delete (Gzip.prototype as { on?: unknown }).on;
});

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('neither a gzip member nor its output chunks are held after its body is made', async () => {
  /** Every output chunk of the compressor's stream, weakly. */
  const chunks: WeakRef<Buffer>[] = [];
  const on = Gzip.prototype.on;
  Gzip.prototype.on = function (this: Gzip, event: string, listener: (...args: unknown[]) => void) {
    if (event !== 'data') return on.call(this, event, listener);
    return on.call(this, event, (chunk: Buffer) => {
      chunks.push(new WeakRef(chunk));
      listener(chunk);
    });
  } as typeof on;
  const compressor = gzipStream(1);
  try {
    // Random bytes do not compress: several 64 KiB output chunks.
    const body = new WeakRef(await compressor.compress([randomBytes(512 * 1024)]));
    expect(body.deref()?.length).toBeGreaterThan(512 * 1024);
    expect(chunks.length).toBeGreaterThan(4);
    // Collections after the turn that made the body, as an idle exporter's would come.
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(chunks.filter((c) => c.deref() !== undefined)).toHaveLength(0);
    // Sent and released by its batch, the body is not held by the compressor either.
    expect(body.deref()).toBeUndefined();
  } finally {
    compressor.close();
  }
});
