import { describe, expect, test } from 'vitest';
import { RangeIgnoredError } from '../../../src/reader/errors.js';
import { PartError } from '../../../src/reader/read-parts.js';
import { localS3Sources } from '../../support/local-s3-source.js';

/**
 * Ranged GETs against a local HTTP endpoint that stands in for an S3-compatible server (or a
 * proxy) that ignores the Range header: it answers 200 with the whole object.
 */
const OBJECT = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz');

const serve = localS3Sources();

function served(honourRange: boolean) {
  return serve((req, res) => {
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (honourRange && range !== null) {
      const start = Number(range[1]);
      const end = Math.min(Number(range[2]), OBJECT.length - 1);
      res.writeHead(206, {
        'content-length': String(end - start + 1),
        'content-range': `bytes ${start}-${end}/${OBJECT.length}`,
      });
      res.end(OBJECT.subarray(start, end + 1));
      return;
    }
    res.writeHead(200, { 'content-length': String(OBJECT.length) });
    res.end(OBJECT);
  });
}

describe('a ranged GET answered with the whole object', () => {
  test('is refused as a server that ignored Range, not as an object over maxObjectBytes', async () => {
    const objects = await served(false);
    try {
      const read = objects.getRange('key', 30, 36, new AbortController().signal);
      await expect(read).rejects.toThrow(RangeIgnoredError);
      await expect(read).rejects.toThrow(
        'asked for bytes 30-35, the server ignored the Range header: it answered 200 with no Content-Range and a body of 36 bytes',
      );
      await expect(read).rejects.not.toThrow(/maxObjectBytes/);
    } finally {
      objects.close();
    }
  });

  test('a range that is the whole object, answered 200 with exactly it, is taken', async () => {
    const objects = await served(false);
    try {
      const got = await objects.getRange('key', 0, OBJECT.length, new AbortController().signal);
      expect(Buffer.from(got)).toEqual(OBJECT);
    } finally {
      objects.close();
    }
  });

  test('a server that honours Range gives the bytes asked for', async () => {
    const objects = await served(true);
    try {
      const got = await objects.getRange('key', 30, 36, new AbortController().signal);
      expect(Buffer.from(got).toString()).toBe('uvwxyz');
    } finally {
      objects.close();
    }
  });
});

test('a part of a large Parquet object so refused failed at fetch, not decode', () => {
  const cause = new RangeIgnoredError(0, 8, {
    ContentLength: 36,
    $metadata: { httpStatusCode: 200 },
  });
  const error = new PartError('key', cause);
  expect(error.stage).toBe('fetch');
  expect(error.cause).toBe(cause);
});
