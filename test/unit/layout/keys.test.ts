import { describe, expect, test } from 'vitest';
import { encodingOfExtension } from '../../../src/layout/formats.js';
import { type KeyParts, objectKey } from '../../../src/layout/keys.js';
import { metricKeyParser } from '../../../src/reader/key-layout.js';

const TIME = new Date('2026-03-04T05:06:07Z');
const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const FIXED_ID = '019c7a2e-1b2c-7d3e-8f40-0123456789ab';

/** The object name after the last '/'. */
function fileName(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/** The id between 'metrics_' and the extension. */
function idOf(key: string): string {
  const match = /metrics_([0-9a-f-]{36})/.exec(key);
  if (match?.[1] === undefined) throw new Error(`no id in ${key}`);
  return match[1];
}

/** Unix milliseconds in the first 48 bits of a UUIDv7. */
function uuidv7Millis(id: string): number {
  return Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

/** Runs `fn` with process.env.TZ set to `tz`, restoring the previous value afterwards. */
function withTimeZone<T>(tz: string, fn: () => T): T {
  const previous = process.env.TZ;
  process.env.TZ = tz;
  try {
    return fn();
  } finally {
    if (previous === undefined) delete process.env.TZ;
    else process.env.TZ = previous;
  }
}

describe('objectKey', () => {
  /** The key of FIXED_ID at TIME under prefix `p`, `.json`, unless `parts` say otherwise. */
  const keyWith = (parts: Partial<KeyParts>) =>
    objectKey({
      prefix: 'p',
      filePrefix: '',
      time: TIME,
      extension: '.json',
      id: FIXED_ID,
      ...parts,
    });

  test('renders the exact documented layout in UTC', () => {
    const key = keyWith({ prefix: 'prod/checkout', filePrefix: 'host1_', extension: '.json.zst' });
    expect(key).toBe(
      `prod/checkout/year=2026/month=03/day=04/hour=05/minute=06/host1_metrics_${FIXED_ID}.json.zst`,
    );
  });

  test('has no leading slash with an empty prefix', () => {
    const key = keyWith({ prefix: '', extension: '.binpb' });
    expect(key).toBe(`year=2026/month=03/day=04/hour=05/minute=06/metrics_${FIXED_ID}.binpb`);
  });

  test('zero-pads month, day, hour and minute', () => {
    const key = keyWith({ time: new Date('2027-01-02T03:04:59.999Z') });
    expect(key).toBe(`p/year=2027/month=01/day=02/hour=03/minute=04/metrics_${FIXED_ID}.json`);
  });

  test('does not pad two-digit fields and ignores seconds', () => {
    const key = keyWith({ time: new Date('2026-12-31T23:59:59.999Z') });
    expect(key).toBe(`p/year=2026/month=12/day=31/hour=23/minute=59/metrics_${FIXED_ID}.json`);
  });

  test('partitions by UTC, not local time, across a local midnight and year boundary', () => {
    // 2025-12-31T23:30Z is already 2026-01-01 13:30 in Kiritimati (UTC+14)
    // and still 2025-12-31 15:30 in Los Angeles (UTC-8).
    const time = new Date('2025-12-31T23:30:00Z');
    for (const tz of ['Pacific/Kiritimati', 'America/Los_Angeles']) {
      const key = withTimeZone(tz, () => {
        // Precondition: the time zone really took effect, so local fields differ from UTC.
        expect(time.getHours()).not.toBe(time.getUTCHours());
        return objectKey({ prefix: '', filePrefix: '', time, extension: '.json', id: FIXED_ID });
      });
      expect(key).toBe(`year=2025/month=12/day=31/hour=23/minute=30/metrics_${FIXED_ID}.json`);
    }
  });

  test('uses the given id verbatim', () => {
    const key = objectKey({ prefix: '', filePrefix: '', time: TIME, extension: '', id: 'abc' });
    expect(fileName(key)).toBe('metrics_abc');
  });

  test('generates a valid UUIDv7 whose timestamp is the current time', () => {
    const before = Date.now();
    const key = objectKey({ prefix: 'p', filePrefix: '', time: TIME, extension: '.json' });
    const after = Date.now();
    const id = idOf(key);
    expect(id).toMatch(UUIDV7);
    const millis = uuidv7Millis(id);
    expect(millis).toBeGreaterThanOrEqual(before);
    expect(millis).toBeLessThanOrEqual(after);
  });

  test('generates unique ids that sort in generation order', () => {
    const ids: string[] = [];
    for (let i = 0; i < 5000; i++) {
      ids.push(idOf(objectKey({ prefix: '', filePrefix: '', time: TIME, extension: '.json' })));
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) {
      expect((ids[i - 1] as string) < (ids[i] as string), `${ids[i - 1]} < ${ids[i]}`).toBe(true);
    }
    for (const id of ids) expect(id).toMatch(UUIDV7);
  });
});

describe('metricKeyParser reads what objectKey() writes', () => {
  const extensions: string[] = [];
  for (const format of ['.json', '.binpb']) {
    for (const compression of ['.zst', '.gz', '']) extensions.push(format + compression);
  }
  const PARTITION = {
    start: new Date('2026-03-04T05:06:00Z'),
    end: new Date('2026-03-04T05:07:00Z'),
  };

  for (const extension of extensions) {
    test(`a generated key ending in ${extension}: id, seal time, partition and encoding`, () => {
      const key = objectKey({
        prefix: 'prod/eu/checkout',
        filePrefix: 'node-7_',
        time: TIME,
        extension,
      });
      const parsed = metricKeyParser({ prefix: 'prod/eu/checkout', filePrefix: 'node-7_' })(key);
      expect(parsed).toMatchObject({ id: idOf(key), partition: PARTITION, extension });
      expect(parsed?.sealedAt.getTime()).toBe(uuidv7Millis(idOf(key)));
      expect(parsed?.encoding).toEqual(encodingOfExtension(extension));
    });

    test(`a generated key ending in ${extension} with empty prefix and filePrefix`, () => {
      const key = objectKey({ prefix: '', filePrefix: '', time: TIME, extension });
      expect(metricKeyParser()(key)).toMatchObject({ id: idOf(key), extension });
    });
  }

  test('a filePrefix that itself contains "metrics_"', () => {
    const key = objectKey({
      prefix: 'p',
      filePrefix: 'metrics_a_',
      time: TIME,
      extension: '.json',
    });
    expect(metricKeyParser({ prefix: 'p', filePrefix: 'metrics_a_' })(key)?.id).toBe(idOf(key));
  });

  test('rejects keys that are not of the layout', () => {
    const good = `p/year=2026/month=03/day=04/hour=05/minute=06/metrics_${FIXED_ID}.json`;
    const parse = metricKeyParser({ prefix: 'p' });
    expect(parse(good)?.id).toBe(FIXED_ID);
    for (const bad of [
      good.replace('.json', '.txt'), // unknown format extension
      good.replace('.json', '.json.br'), // unknown compression extension
      good.replace('-7d3e-', '-4d3e-'), // UUIDv4, not v7
      good.replace('-8f40-', '-cf40-'), // wrong variant
      good.replace('month=03', 'month=3'), // unpadded
      good.replace('metrics_', 'traces_'),
      good.replace('metrics_', 'x-metrics_'), // another filePrefix
    ]) {
      expect(parse(bad), bad).toBeUndefined();
    }
    // Without the minute it is Parquet's hour layout: read without a format, not with the
    // OTLP formats' own.
    const hours = good.replace('/minute=06', '');
    expect(parse(hours)?.id).toBe(FIXED_ID);
    expect(metricKeyParser({ prefix: 'p', format: 'otlp-json' })(hours)).toBeUndefined();
  });
});
