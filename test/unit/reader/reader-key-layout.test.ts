import { describe, expect, test } from 'vitest';
import {
  compareKeys,
  isPastRange,
  type KeyRange,
  partitionMarginMillis,
  sortableLeadingChars,
} from '../../../src/layout/listing-range.js';
import { resolveKeyLayout } from '../../../src/reader/key-layout.js';
import { encodingOfKey, metricKeyParser } from '../../../src/reader.js';
import { renderKey } from '../../support/layout-fixtures.js';

const MINUTE = 60_000;
const CUSTOM = '{service.name}/%Y/%m/%d/%H/metrics_{uuid}';
/** Parquet's default layout, written out (the test's own copy, not the table's). */
const PARQUET = 'year=%Y/month=%m/day=%d/hour=%H/{filePrefix}metrics_{uuid}';

describe('sortableLeadingChars: how much of a key sorts as time does', () => {
  test.each<[string, number | undefined]>([
    // Up to the end of %M: "year=2026/month=03/day=04/hour=05/minute=06".
    ['year=%Y/month=%m/day=%d/hour=%H/minute=%M/{filePrefix}metrics_{uuid}', 43],
    ['%Y/%m/%d/{service.name}/%H/metrics_{uuid}', 10],
    // "m/2026/03/20260304/050607"
    ['m/%Y/%m/%Y%m%d/%H%M%S-{uuid}', 25],
    ['%Y/%%%m/{uuid}', 8],
    [CUSTOM, undefined],
    ['metrics/{service.name}/%Y/{uuid}', undefined],
    ['%Y/%j/{uuid}', undefined],
    ['%d/%m/%Y/{uuid}', undefined],
    ['%Y/%d/{uuid}', undefined],
    ['static/{uuid}', undefined],
  ])('%s: %s', (template, chars) => {
    expect(sortableLeadingChars(template)).toBe(chars);
  });
});

describe('partitionMarginMillis: how far a partition can precede the seal time', () => {
  const lag = {
    partitionTime: 'upload',
    partitionTimeZone: 'UTC',
    maxBatchAgeMillis: 30_000,
    exportIntervalMillis: 10_000,
  } as const;
  test.each([
    [lag, MINUTE],
    [{ ...lag, partitionTime: 'data' }, 30_000 + 10_000 + MINUTE],
    [{ ...lag, partitionTimeZone: 'local' }, 61 * MINUTE],
    [{ ...lag, partitionTime: 'data', partitionTimeZone: 'local' }, 40_000 + 61 * MINUTE],
  ] as const)('%j: %d ms', (l, margin) => {
    expect(partitionMarginMillis(l)).toBe(margin);
  });
});

describe('KeyLayout.ranges', () => {
  const from = new Date('2026-03-04T05:06:30Z');
  const to = new Date('2026-03-04T05:09:00Z');
  /** The one listing of layouts that share their start. */
  const one = (ranges: KeyRange[]): KeyRange => {
    expect(ranges).toHaveLength(1);
    return ranges[0] as KeyRange;
  };

  test('the OTLP layout: from the partition of from − 1 min to that of to − 1 ms', () => {
    const range = one(resolveKeyLayout('p', { format: 'otlp-proto' }).ranges(from, to));
    expect(range).toEqual({
      startAfter: 'p/year=2026/month=03/day=04/hour=05/minute=05',
      lastPartition: 'p/year=2026/month=03/day=04/hour=05/minute=08',
    });
    const key = (iso: string) => renderKey({ prefix: 'p' }, new Date(iso), '.json.zst');
    expect(compareKeys(key('2026-03-04T05:04:59.999Z'), range.startAfter as string)).toBe(-1);
    expect(compareKeys(key('2026-03-04T05:05:00.000Z'), range.startAfter as string)).toBe(1);
    expect(isPastRange(key('2026-03-04T05:08:59.999Z'), range)).toBe(false);
    expect(isPastRange(key('2026-03-04T05:09:00.000Z'), range)).toBe(true);
    expect(isPastRange('p/year=2027/zzz', range)).toBe(true);
    expect(isPastRange('p/README', range)).toBe(false);
  });

  test("partitionTime 'data' starts maxBatchAgeMillis + the export interval + 1 min earlier", () => {
    const layout = resolveKeyLayout('p', {
      format: 'otlp-json',
      partitionTime: 'data',
      maxBatchAgeMillis: 120_000,
      exportIntervalMillis: 30_000,
    });
    // 05:06:30 − 3.5 min = 05:03:00.
    expect(one(layout.ranges(from, to)).startAfter).toBe(
      'p/year=2026/month=03/day=04/hour=05/minute=03',
    );
  });

  test("format 'parquet': its hour layout, and its 10 min batch age in the 'data' margin", () => {
    const layout = resolveKeyLayout('p', { format: 'parquet', partitionTime: 'data' });
    // 05:06:30 − (10 min + the 60 s export interval + 1 min) = 04:54:30, in hour 04.
    expect(one(layout.ranges(from, to)).startAfter).toBe('p/year=2026/month=03/day=04/hour=04');
    const set = resolveKeyLayout('p', {
      format: 'parquet',
      partitionTime: 'data',
      maxBatchAgeMillis: 60_000,
    });
    expect(one(set.ranges(from, to)).startAfter).toBe('p/year=2026/month=03/day=04/hour=05');
  });

  test("without format or keyTemplate, the union of every format's default layout", () => {
    // From the hour of from − 1 min (Parquet's partitions) to past the hour of to − 1 ms: a key
    // of either layout in that hour is listed.
    const range = one(resolveKeyLayout('p', {}).ranges(from, to));
    expect(range).toEqual({
      startAfter: 'p/year=2026/month=03/day=04/hour=05',
      lastPartition: 'p/year=2026/month=03/day=04/hour=05',
    });
    const minute = renderKey({ prefix: 'p' }, new Date('2026-03-04T05:59:00Z'), '.json.zst');
    const hour = renderKey({ prefix: 'p', keyTemplate: PARQUET }, to, '.parquet');
    expect(isPastRange(minute, range)).toBe(false);
    expect(isPastRange(hour, range)).toBe(false);
    const next = renderKey(
      { prefix: 'p', keyTemplate: PARQUET },
      new Date('2026-03-04T06:00:00Z'),
      '.parquet',
    );
    expect(isPastRange(next, range)).toBe(true);
  });

  test('a template whose time tokens lead is bounded at its coarser partitions', () => {
    const layout = resolveKeyLayout('', {
      keyTemplate: '%Y/%m/%d/{service.name}/%H%M-{uuid}',
    });
    expect(one(layout.ranges(from, to))).toEqual({
      startAfter: '2026/03/04',
      lastPartition: '2026/03/04',
    });
  });

  test('a template that starts with an attribute lists everything; no range, its own keys', () => {
    const none = { startAfter: undefined, lastPartition: undefined };
    expect(one(resolveKeyLayout('p', { keyTemplate: CUSTOM }).ranges(from, to))).toEqual(none);
    // Without an end, keys past the templates' literal start are past every layout's range.
    expect(one(resolveKeyLayout('p', {}).ranges(undefined, undefined))).toEqual({
      startAfter: undefined,
      lastPartition: 'p/year=',
    });
  });

  test('layouts with different starts are listed apart, each narrow, in key order', () => {
    // Spans: OTLP under `year=…`, Parquet under `traces/year=…`. One listing from the earlier
    // start would read every `traces/` hour after it and every `year=` hour before the range.
    const layout = resolveKeyLayout('p', {}, ['traces']);
    const hour = 'year=2026/month=03/day=04/hour=05';
    expect(layout.rangeWithOutputs(from, to)).toEqual([
      { startAfter: `p/traces/${hour}`, lastPartition: `p/traces/${hour}` },
      // OTLP alone: its minutes, from − 1 min to to − 1 ms, after the hour's outputs.
      {
        startAfter: `p/${hour}`,
        lastPartition: `p/${hour}/minute=08`,
        outputsOnlyUntil: `p/${hour}/minute=05`,
      },
    ]);
    // Without an end each listing stops at the end of its own keys.
    expect(
      layout.rangeWithOutputs(from, undefined).map((r) => [r.startAfter, r.lastPartition]),
    ).toEqual([
      [`p/traces/${hour}`, 'p/traces/year='],
      [`p/${hour}`, 'p/year='],
    ]);
    // Metrics' layouts share their start: one listing.
    expect(resolveKeyLayout('p', {}).rangeWithOutputs(from, to)).toHaveLength(1);
    // The compactor's listings (no outputs before the range): each layout's own range.
    expect(layout.ranges(from, to)).toEqual([
      { startAfter: `p/traces/${hour}`, lastPartition: `p/traces/${hour}` },
      {
        startAfter: `p/${hour}/minute=05`,
        lastPartition: `p/${hour}/minute=08`,
      },
    ]);
  });

  test('times whose year %Y does not render in four digits give no bound', () => {
    const range = one(resolveKeyLayout('p', {}).ranges(new Date(-62e12), new Date(3e14)));
    expect(range).toEqual({ startAfter: undefined, lastPartition: undefined });
  });
});

describe('KeyLayout.parse and otherPrefix', () => {
  const sealedAt = new Date('2026-03-04T05:06:07.089Z');

  test('a custom template: seal time, partition, attributes and encoding', () => {
    const layout = resolveKeyLayout('prod', { keyTemplate: CUSTOM });
    const key = renderKey({ prefix: 'prod', keyTemplate: CUSTOM }, sealedAt, '.binpb.gz', {
      partition: new Date('2026-03-04T04:59:00Z'),
      attributes: { 'service.name': 'checkout' },
    });
    expect(key).toMatch(/^prod\/checkout\/2026\/03\/04\/04\/metrics_[0-9a-f-]{36}\.binpb\.gz$/);
    expect(layout.parse(key)).toMatchObject({
      sealedAt,
      partition: {
        start: new Date('2026-03-04T04:00:00Z'),
        end: new Date('2026-03-04T05:00:00Z'),
      },
      attributes: { 'service.name': 'checkout' },
      extension: '.binpb.gz',
      encoding: { format: 'otlp-proto', compression: 'gzip' },
    });
  });

  test.each([
    ['another template', renderKey({ prefix: 'p' }, sealedAt, '.json')],
    ['another filePrefix', renderKey({ prefix: 'p', filePrefix: 'x-' }, sealedAt, '.json')],
    ['an unknown extension', renderKey({ prefix: 'p', keyTemplate: CUSTOM }, sealedAt, '.txt')],
    ['no extension', renderKey({ prefix: 'p', keyTemplate: CUSTOM }, sealedAt, '')],
    ['another prefix', renderKey({ prefix: 'q', keyTemplate: CUSTOM }, sealedAt, '.json')],
  ])('a key with %s is not in the layout', (_what, key) => {
    expect(resolveKeyLayout('p', { keyTemplate: CUSTOM }).parse(key)).toBeUndefined();
  });

  test('otherPrefix finds the prefix under which a key parses', () => {
    const layout = resolveKeyLayout('p', { keyTemplate: CUSTOM });
    const deeper = renderKey({ prefix: 'p/a/b', keyTemplate: CUSTOM }, sealedAt, '.json');
    expect(layout.otherPrefix(deeper)).toBe('p/a/b');
    expect(layout.otherPrefix('p/a/b/README.md')).toBeUndefined();
    const root = resolveKeyLayout('', {});
    expect(root.otherPrefix(renderKey({ prefix: 'x' }, sealedAt, '.json.zst'))).toBe('x');
  });

  test.each([
    ['traces', 'p'],
    ['logs', 'lake/prod'],
  ] as const)('a prefix that is the %s table folder: the prefix above it', (signal, above) => {
    // The Parquet layout of spans and log records, written out (the test's own copy).
    const keyTemplate = `${signal}/year=%Y/month=%m/day=%d/hour=%H/{filePrefix}${signal}_{uuid}`;
    const key = renderKey({ prefix: above, keyTemplate }, sealedAt, '.parquet');
    expect(key.startsWith(`${above}/${signal}/year=2026/month=03/day=04/hour=05/${signal}_`)).toBe(
      true,
    );
    const layout = resolveKeyLayout(`${above}/${signal}`, {}, [signal]);
    expect(layout.parse(key)).toBeUndefined();
    expect(layout.otherPrefix(key)).toBe(above);
    expect(resolveKeyLayout(above, {}, [signal]).parse(key)).toMatchObject({ signal });
    // A compacted hour holds only its output, named as the exporter's files are.
    const output = renderKey({ prefix: above, keyTemplate }, sealedAt, '.compacted.parquet');
    expect(layout.parse(output)).toBeUndefined();
    expect(layout.otherPrefix(output)).toBe(above);
    expect(resolveKeyLayout(above, {}, [signal]).parse(output)).toMatchObject({ compacted: true });
  });

  test("with no format and no keyTemplate, keys of every format's default layout are read", () => {
    const layout = resolveKeyLayout('lake', {});
    const otlp = renderKey({ prefix: 'lake' }, sealedAt, '.binpb.zst');
    const parquet = renderKey({ prefix: 'lake', keyTemplate: PARQUET }, sealedAt, '.parquet');
    // Parquet's fallback (the records as OTLP/JSON) keeps the hour layout.
    const fallback = renderKey({ prefix: 'lake', keyTemplate: PARQUET }, sealedAt, '.json');
    expect(parquet).toMatch(
      /^lake\/year=2026\/month=03\/day=04\/hour=05\/metrics_[0-9a-f-]{36}\.parquet$/,
    );
    expect(layout.parse(otlp)).toMatchObject({ sealedAt, encoding: { format: 'otlp-proto' } });
    expect(layout.parse(parquet)).toMatchObject({ sealedAt, encoding: { format: 'parquet' } });
    expect(layout.parse(fallback)).toMatchObject({ sealedAt, encoding: { format: 'otlp-json' } });
    expect(metricKeyParser({ prefix: 'lake' })(parquet)).toMatchObject({ sealedAt });
    // A format names its own layout only.
    expect(resolveKeyLayout('lake', { format: 'otlp-json' }).parse(parquet)).toBeUndefined();
    expect(resolveKeyLayout('lake', { format: 'parquet' }).parse(otlp)).toBeUndefined();
  });

  test("keys under {prefix}/_otel_s3_…/ are the package's own, not keys out of the layout", () => {
    const layout = resolveKeyLayout('lake', {});
    expect(layout.internal('lake/_otel_s3_compaction/lease.json')).toBe(true);
    expect(layout.parse('lake/_otel_s3_compaction/lease.json')).toBeUndefined();
    expect(layout.internal('lake/year=2026/_otel_s3_x')).toBe(false);
    expect(resolveKeyLayout('', {}).internal('_otel_s3_compaction/x')).toBe(true);
  });

  test('hint: the options under which a skipped key would be read', () => {
    const parquet = renderKey({ prefix: 'p', keyTemplate: PARQUET }, sealedAt, '.parquet');
    const otlp = renderKey({ prefix: 'p' }, sealedAt, '.json.zst');
    const prefixed = renderKey({ prefix: 'p', filePrefix: 'app-' }, sealedAt, '.json.zst');
    const custom = renderKey({ prefix: 'p', keyTemplate: CUSTOM }, sealedAt, '.json', {
      attributes: { 'service.name': 'api' },
    });
    expect(resolveKeyLayout('p', { format: 'otlp-json' }).hint(parquet)).toEqual({
      format: 'parquet',
    });
    expect(resolveKeyLayout('p', { format: 'parquet' }).hint(otlp)).toEqual({
      format: 'otlp-json',
    });
    expect(resolveKeyLayout('p', {}).hint(prefixed)).toEqual({ filePrefix: 'app-' });
    expect(resolveKeyLayout('p', { filePrefix: 'x-' }).hint(otlp)).toEqual({ filePrefix: '' });
    expect(resolveKeyLayout('p', { format: 'parquet' }).hint(prefixed)).toEqual({
      format: 'otlp-json',
      filePrefix: 'app-',
    });
    expect(resolveKeyLayout('p', { keyTemplate: CUSTOM }).hint(otlp)).toEqual({
      format: 'otlp-json',
    });
    expect(resolveKeyLayout('p', {}).hint(custom)).toBeUndefined();
    expect(resolveKeyLayout('p', {}).hint('p/README.md')).toBeUndefined();
  });

  test('metricKeyParser reads keys of any configured layout', () => {
    const parse = metricKeyParser({ prefix: '/prod/', keyTemplate: CUSTOM });
    const key = renderKey({ prefix: 'prod', keyTemplate: CUSTOM }, sealedAt, '.json.zst', {
      attributes: { 'service.name': 'api' },
    });
    expect(parse(key)).toMatchObject({ sealedAt, attributes: { 'service.name': 'api' } });
    expect(metricKeyParser({ prefix: 'prod' })(key)).toBeUndefined();
  });
});

describe('encodingOfKey: the formats table read backwards', () => {
  test.each([
    ['a/metrics_x.json', { format: 'otlp-json', compression: 'none' }],
    ['a/metrics_x.json.zst', { format: 'otlp-json', compression: 'zstd' }],
    ['a.b/svc.v1-metrics_x.binpb.gz', { format: 'otlp-proto', compression: 'gzip' }],
    ['a/metrics_x.zst', undefined],
    ['a/metrics_x.json.bz2', undefined],
    ['a.json/metrics_x', undefined],
  ])('%s', (key, encoding) => {
    expect(encodingOfKey(key)).toEqual(encoding);
  });
});
