import type { Readable } from 'node:stream';
import { expect, test } from 'vitest';
import { formatBytes } from '../../../src/base/byte-size.js';
import { readMetrics, type UnreadableObject } from '../../../src/reader.js';
import { FakeS3 } from '../../support/fake-s3-client.js';
import { collect, encodeObject, keyAt, sampleMetrics } from '../../support/reader-fixtures.js';
import { READER_T0 } from '../../support/time.js';

/**
 * An object replaced since it was listed, now over maxObjectBytes by its Content-Length, is
 * refused before its body is read. The body must be let go (destroyed) then, not left open:
 * with the SDK's HTTP agent, an unread body holds its socket until it is collected.
 */
test('a GetObject body refused by its Content-Length is destroyed', async () => {
  const s3 = new FakeS3();
  const key = keyAt('p', READER_T0, '.json');
  const bytes = encodeObject(await sampleMetrics(), 'otlp-json', 'none');
  s3.put(key, bytes);
  s3.listedSizes.set(key, 10);
  const bodies: Readable[] = [];
  const client = {
    send: async (command: unknown, options?: { abortSignal?: AbortSignal }) => {
      const got = (await s3.send(command, options)) as { Body?: Readable };
      if (got.Body !== undefined) bodies.push(got.Body);
      return got;
    },
    destroy: () => {},
  };
  const problems: UnreadableObject[] = [];
  const read = await collect(
    readMetrics({
      bucket: 'b',
      prefix: 'p',
      s3Client: client as never,
      maxObjectBytes: 100,
      onError: (p) => problems.push(p),
    }),
  );
  expect(read).toEqual([]);
  expect(problems.map((p) => [p.stage, p.error.message])).toEqual([
    ['fetch', `stored size ${formatBytes(bytes.length)} is over the maxObjectBytes limit of 100 B`],
  ]);
  expect(bodies.map((b) => b.destroyed)).toEqual([true]);
});
