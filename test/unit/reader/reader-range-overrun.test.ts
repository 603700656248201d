import { describe, expect, test } from 'vitest';
import { RangeOverrunError } from '../../../src/reader/errors.js';
import { PartError } from '../../../src/reader/read-parts.js';
import { localS3Sources } from '../../support/local-s3-source.js';

/**
 * Ranged GETs against a local HTTP endpoint that stands in for a faulty S3-compatible server (or
 * proxy): it answers 206 with a Content-Range, and a body longer than the range asked for. The
 * range's length is no limit of the user's: the error says what the server did.
 */
const OBJECT = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz');

const serve = localS3Sources();

/** Answers a range with 4 bytes more than asked; `announce`: with a Content-Length of them. */
function served(announce: boolean) {
  return serve((req, res) => {
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    const start = Number(range?.[1] ?? 0);
    const end = Number(range?.[2] ?? 0);
    const body = OBJECT.subarray(start - 4, end + 1);
    res.writeHead(206, {
      ...(announce ? { 'content-length': String(body.length) } : {}),
      'content-range': `bytes ${start}-${end}/${OBJECT.length}`,
    });
    res.end(body);
  });
}

describe('a ranged GET answered with more bytes than the range', () => {
  test.each([
    [true, 'asked for bytes 30-35 (6 bytes), the server answered 206 with a body of 10 bytes'],
    [false, 'asked for bytes 30-35 (6 bytes), the server answered 206 with a body of more'],
  ])('Content-Length announced: %s', async (announce, message) => {
    const objects = await served(announce);
    try {
      const read = objects.getRange('key', 30, 36, new AbortController().signal);
      await expect(read).rejects.toThrow(RangeOverrunError);
      await expect(read).rejects.toThrow(message);
      await expect(read).rejects.not.toThrow(/maxObjectBytes|limit/);
    } finally {
      objects.close();
    }
  });
});

test('a part of a large Parquet object so refused failed at fetch', () => {
  const cause = new RangeOverrunError(0, 8, { $metadata: { httpStatusCode: 206 } }, 12);
  const error = new PartError('key', cause);
  expect(error.stage).toBe('fetch');
  expect(error.cause).toBe(cause);
});
