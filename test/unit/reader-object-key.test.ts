import { describe, expect, test } from 'vitest';
import { keyRange, parseObjectKey, partitionPath } from '../../src/reader/object-key.js';
import { objectKey } from '../../src/upload/keys.js';
import { keyAt } from '../support/reader-fixtures.js';

const ID = '019c7a2e-1b2c-7d3e-8f40-0123456789ab';
const ID_MILLIS = 0x019c7a2e1b2c;

describe('partitionPath', () => {
  test.each([
    ['prod/checkout', '2026-03-04T05:06:07.890Z'],
    ['', '2026-12-31T23:59:59.999Z'],
    ['a', '2027-01-01T00:00:00.000Z'],
  ])('is the partition objectKey() writes (prefix %j, %s)', (prefix, iso) => {
    const time = new Date(iso);
    const key = objectKey({ prefix, filePrefix: 'x-', time, extension: '.json', id: ID });
    expect(key.startsWith(`${partitionPath(prefix, time)}/`)).toBe(true);
  });
});

describe('parseObjectKey', () => {
  test('gives the prefix, the partition and the UUIDv7 time', () => {
    const key = objectKey({
      prefix: 'prod/checkout',
      filePrefix: 'svc-',
      time: new Date('2026-03-04T05:06:07Z'),
      extension: '.binpb.gz',
      id: ID,
    });
    expect(parseObjectKey(key)).toEqual({
      prefix: 'prod/checkout',
      partition: new Date('2026-03-04T05:06:00Z'),
      time: new Date(ID_MILLIS),
      extension: '.binpb.gz',
    });
  });

  test('an empty prefix parses as ""', () => {
    const key = objectKey({
      prefix: '',
      filePrefix: '',
      time: new Date(0),
      extension: '.json',
      id: ID,
    });
    expect(parseObjectKey(key)?.prefix).toBe('');
  });

  test.each([
    'prod/metrics_x.json',
    'prod/year=2026/month=03/day=04/hour=05/minute=06/metrics_not-a-uuid.json',
    `prod/year=2026/month=03/day=04/hour=05/minute=06/metrics_${ID}.txt`,
    `prod/year=2026/month=3/day=04/hour=05/minute=06/metrics_${ID}.json`,
  ])('other keys are not in the layout: %s', (key) => {
    expect(parseObjectKey(key)).toBeUndefined();
  });
});

describe('keyRange', () => {
  const from = new Date('2026-03-04T05:06:30Z');
  const to = new Date('2026-03-04T05:09:00Z');
  const { startAfter, stopAt } = keyRange('p', from, to);
  const key = (iso: string) => keyAt('p', new Date(iso), '.json.zst');

  test('startAfter sorts after every key two partitions before from, before those of the minute before', () => {
    expect(startAfter).toBeDefined();
    expect(key('2026-03-04T05:04:59.999Z') < (startAfter as string)).toBe(true);
    // The minute before: a batch sealed then may be named (UUIDv7) after from.
    expect(key('2026-03-04T05:05:00.000Z') > (startAfter as string)).toBe(true);
    expect(key('2026-03-04T05:06:30.000Z') > (startAfter as string)).toBe(true);
  });

  test('stopAt sorts after every key of the partition of to - 1 ms and before those of to (exclusive)', () => {
    expect(key('2026-03-04T05:08:59.999Z') < (stopAt as string)).toBe(true);
    expect(key('2026-03-04T05:09:00.000Z') >= (stopAt as string)).toBe(true);
    expect(keyRange('p', undefined, new Date('2026-03-04T05:09:00.001Z')).stopAt).toBe(
      partitionPath('p', new Date('2026-03-04T05:10:00Z')),
    );
  });

  test('no bounds without from and to', () => {
    expect(keyRange('p')).toEqual({ startAfter: undefined, stopAt: undefined });
  });
});
