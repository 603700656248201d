import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { InvalidOptionError, objectKey, S3MetricExporter } from '../../../src/index.js';
import {
  defaultKeyTemplate,
  KEY_EXTENSIONS,
  OUTPUT_EXTENSION,
} from '../../../src/layout/formats.js';
import { KeyTemplate, sanitizeKeySegment } from '../../../src/layout/key-template.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { exportSynthetic, syntheticMetrics } from '../../support/service.js';

const at = new Date(Date.UTC(2026, 2, 4, 5, 6, 7));

/** Runs `fn` with the process in time zone `zone` (Node reads TZ again when it changes). */
function withTimeZone(zone: string, fn: () => void): void {
  const before = process.env.TZ;
  process.env.TZ = zone;
  try {
    // Precondition: the zone took effect, so 'local' cannot pass by being UTC.
    expect(at.getTimezoneOffset()).not.toBe(0);
    fn();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}
const template = (text: string, prefix = 'pre/fix') =>
  new KeyTemplate(text, { prefix, filePrefix: 'fp_', timeZone: 'UTC' });

describe('KeyTemplate.parse', () => {
  const id = '01a22aa0-f36e-7fca-b5bb-e82e69c9095c';
  // The first 48 bits of the UUIDv7, read by hand.
  const sealedAt = new Date(0x01a22aa0f36e);

  for (const [text, unit] of [
    [defaultKeyTemplate('otlp-json', 'metrics'), 60_000],
    ['{service.name}/%Y/%m/%d/%H/{filePrefix}metrics_{uuid}', 3_600_000],
    ['dt=%Y-%m-%d/{host.name}/{uuid}', 86_400_000],
    ['%Y/day%j/%H%M%S/100%%/{uuid}', 1_000],
  ] as const) {
    test(`reads back what ${text} renders, with its partition`, () => {
      const t = template(text);
      const attributes = t.attributeValues({ 'service.name': 'check out', 'host.name': 'web-1' });
      const key = t.render({ time: at, attributes, extension: '.json.zst', id });
      const parsed = t.parse(key);
      expect(parsed).toEqual({
        id,
        sealedAt,
        attributes,
        extension: '.json.zst',
        partition: { start: expect.any(Date), end: expect.any(Date) },
      });
      const { start, end } = parsed?.partition ?? { start: new Date(0), end: new Date(0) };
      expect(start.getTime()).toBeLessThanOrEqual(at.getTime());
      expect(end.getTime()).toBeGreaterThan(at.getTime());
      expect(end.getTime() - start.getTime()).toBe(unit);
    });
  }

  test('local-time layouts place the partition in local time', () => {
    withTimeZone('Asia/Kolkata', () => {
      const t = new KeyTemplate('%Y/%m/%d/%H/{uuid}', {
        prefix: 'p',
        filePrefix: '',
        timeZone: 'local',
      });
      const parsed = t.parse(t.render({ time: at, attributes: {}, extension: '.binpb', id }));
      // The 10:00 hour in Kolkata starts at 04:30 UTC.
      expect(parsed?.partition?.start.toISOString()).toBe('2026-03-04T04:30:00.000Z');
    });
  });

  test('an attribute right before the extension: the value and the extension are told apart', () => {
    const t = template('%Y/metrics_{uuid}_{host.name}');
    for (const host of ['web', 'ip-10-0-0-1.ec2.internal', 'a.json', 'v1.binpb.gz', '.']) {
      for (const extension of ['.json.zst', '.json', '.binpb.gz', '.parquet']) {
        const attributes = t.attributeValues({ 'host.name': host });
        const parsed = t.parse(t.render({ time: at, attributes, extension, id }));
        expect(parsed?.attributes, `${host} ${extension}`).toEqual(attributes);
        expect(parsed?.extension, `${host} ${extension}`).toBe(extension);
      }
    }
    // A name ending in no extension this package writes is no key of the template.
    expect(t.parse(`pre/fix/2026/metrics_${id}_web.txt`)).toBeUndefined();
  });

  test('the partition holds the time that rendered the key, whatever tokens the template skips', () => {
    // Times at and around the boundaries of every unit, a leap day and the last day of a year.
    const times = [
      '2026-05-10T04:30:15.250Z',
      '2026-12-31T23:59:59.999Z',
      '2027-01-01T00:00:00.000Z',
      '2028-02-29T12:00:00.000Z',
      '2026-03-01T00:00:00.000Z',
      '2026-07-31T23:00:00.000Z',
    ].map((iso) => new Date(iso));
    for (const text of [
      '%Y/%H/{uuid}',
      '%Y/%d/{uuid}',
      '%Y/%M/{uuid}',
      '%Y/%m/%H/{uuid}',
      '%Y/%m/%d/%M/{uuid}',
      '%Y/%m/%d/%H/%S/{uuid}',
      '%Y/%j/%M/{uuid}',
      '%H/%Y/{uuid}',
    ]) {
      const t = template(text);
      for (const time of times) {
        const parsed = t.parse(t.render({ time, attributes: {}, extension: '.json', id }));
        const { start, end } = parsed?.partition ?? { start: new Date(0), end: new Date(0) };
        const where = `${text} at ${time.toISOString()}: ${start.toISOString()}..${end.toISOString()}`;
        expect(start.getTime(), where).toBeLessThanOrEqual(time.getTime());
        expect(end.getTime(), where).toBeGreaterThan(time.getTime());
      }
    }
  });

  test('a key whose time fields no clock renders, or whose repeated tokens differ, is not ours', () => {
    const t = template('%Y/%m/%d/%H/%M/%S/{uuid}');
    const key = (fields: string) => `pre/fix/${fields}/${id}.json`;
    expect(t.parse(key('2026/04/30/23/59/59'))).toBeDefined();
    expect(t.parse(key('2028/02/29/00/00/00'))).toBeDefined();
    for (const fields of [
      '2026/13/01/00/00/00',
      '2026/00/01/00/00/00',
      '2026/04/31/00/00/00',
      '2026/02/29/00/00/00',
      '2026/05/00/00/00/00',
      '2026/05/01/24/00/00',
      '2026/05/01/00/60/00',
      '2026/05/01/00/00/60',
      '0999/05/01/00/00/00',
    ]) {
      expect(t.parse(key(fields)), fields).toBeUndefined();
    }
    const days = template('%Y/%j/{uuid}');
    expect(days.parse(`pre/fix/2028/366/${id}.json`)).toBeDefined();
    expect(days.parse(`pre/fix/2026/366/${id}.json`)).toBeUndefined();
    expect(days.parse(`pre/fix/2026/000/${id}.json`)).toBeUndefined();
    const both = template('%Y/%m/%d/%j/{uuid}');
    expect(both.parse(`pre/fix/2026/02/01/032/${id}.json`)).toBeDefined();
    expect(both.parse(`pre/fix/2026/02/01/033/${id}.json`)).toBeUndefined();
    const monthAndDay = template('%Y/%m/%j/{uuid}');
    expect(monthAndDay.parse(`pre/fix/2026/02/032/${id}.json`)).toBeDefined();
    expect(monthAndDay.parse(`pre/fix/2026/03/032/${id}.json`)).toBeUndefined();
    const twice = template('year=%Y/{service.name}/%Y%m-{service.name}_{uuid}');
    expect(twice.parse(`pre/fix/year=2026/a/202605-a_${id}.json`)).toBeDefined();
    expect(twice.parse(`pre/fix/year=2026/a/202505-a_${id}.json`)).toBeUndefined();
    expect(twice.parse(`pre/fix/year=2026/a/202605-b_${id}.json`)).toBeUndefined();
  });

  test('random templates, times and values: every key reads back as it was rendered', () => {
    const timeToken = fc.constantFrom('%Y', '%m', '%d', '%H', '%M', '%S', '%j', '%%');
    const text = fc.stringMatching(/^[A-Za-z0-9=._-]{1,4}$/);
    const names = ['service.name', 'host.name', 'k8s.pod.name', 'a'];
    // One attribute at most per segment: two in one (`{a}-{b}`) can split a value two ways.
    const segment = fc
      .tuple(
        fc.array(fc.oneof(timeToken, text), { maxLength: 4 }),
        fc.option(fc.constantFrom(...names), { nil: undefined }),
        fc.nat(4),
      )
      .map(([pieces, name, at]) => {
        const all = [...pieces];
        if (name !== undefined) all.splice(Math.min(at, all.length), 0, `{${name}}`);
        return all.join('');
      });
    const last = fc
      .tuple(text, fc.option(fc.constantFrom(...names), { nil: undefined }), fc.boolean())
      .map(([word, name, after]) =>
        name === undefined
          ? `${word}{uuid}`
          : after
            ? `${word}{uuid}_{${name}}`
            : `{${name}}${word}{uuid}`,
      );
    const value = fc.oneof(
      fc.string({ maxLength: 120 }),
      fc.constantFrom(
        '',
        '.',
        '..',
        '../..',
        'ip-10-0-0-1.ec2.internal',
        'a.json',
        '日本',
        'x'.repeat(300),
      ),
    );
    const writtenExtensions = KEY_EXTENSIONS.filter((e) => e !== OUTPUT_EXTENSION);
    fc.assert(
      fc.property(
        fc.array(segment, { maxLength: 5 }),
        last,
        fc.date({
          min: new Date('1970-01-01T00:00:00Z'),
          max: new Date('2200-12-31T23:59:59Z'),
          noInvalidDate: true,
        }),
        fc.dictionary(fc.constantFrom(...names), value),
        fc.constantFrom(...writtenExtensions),
        (segments, name, time, resource, extension) => {
          const text = [...segments.filter((s) => s !== ''), name].join('/');
          let t: KeyTemplate;
          try {
            t = template(text);
          } catch {
            return; // a template the exporter refuses (a "." segment): no keys
          }
          const attributes = t.attributeValues(resource);
          const key = t.render({ time, attributes, extension, id });
          const parsed = t.parse(key);
          expect(parsed, key).toMatchObject({ id, sealedAt, attributes, extension });
          if (parsed?.partition !== undefined) {
            expect(parsed.partition.start.getTime(), key).toBeLessThanOrEqual(time.getTime());
            expect(parsed.partition.end.getTime(), key).toBeGreaterThan(time.getTime());
          }
          expect(parsed?.partition === undefined, key).toBe(!/%Y/.test(text.replaceAll('%%', '')));
        },
      ),
      { seed: 5656, numRuns: 2000 },
    );
  });

  test('keys of another prefix, layout, filePrefix or a foreign name are not ours', () => {
    const t = template(defaultKeyTemplate('otlp-json', 'metrics'));
    const key = t.render({ time: at, attributes: {}, extension: '.json', id });
    expect(t.parse(key)).toBeDefined();
    expect(t.parse(`other/${key}`)).toBeUndefined();
    expect(t.parse(key.replace('pre/fix/', ''))).toBeUndefined();
    expect(t.parse(key.replace('fp_metrics_', 'metrics_'))).toBeUndefined();
    expect(t.parse(key.replace('minute=', 'min='))).toBeUndefined();
    expect(t.parse(key.replace(id, 'not-a-uuid'))).toBeUndefined();
    expect(t.parse(key.replace('.json', '/../../evil.json'))).toBeUndefined();
    expect(t.parse(`${key}\r\nX-Injected: 1`)).toBeUndefined();
  });
});

describe('KeyTemplate', () => {
  test('the default template is the default layout', () => {
    const id = '01a22aa0-f36e-7fca-b5bb-e82e69c9095c';
    expect(
      template(defaultKeyTemplate('otlp-json', 'metrics')).render({
        time: at,
        attributes: {},
        extension: '.json.zst',
        id,
      }),
    ).toBe(
      objectKey({ prefix: 'pre/fix', filePrefix: 'fp_', time: at, extension: '.json.zst', id }),
    );
    expect(objectKey({ prefix: 'p', filePrefix: '', time: at, extension: '.binpb', id })).toBe(
      `p/year=2026/month=03/day=04/hour=05/minute=06/metrics_${id}.binpb`,
    );
  });

  test('renders time tokens, attributes, filePrefix and uuid', () => {
    const t = template(
      '{service.name}/{host.name}/%Y-%m-%d/%H%M%S/day%j/100%%/{filePrefix}m_{uuid}',
    );
    expect(t.attributeNames).toEqual(['service.name', 'host.name']);
    const key = t.render({
      time: at,
      attributes: t.attributeValues({ 'service.name': 'checkout', 'host.name': 'web-1' }),
      extension: '.json',
      id: 'ID',
    });
    expect(key).toBe('pre/fix/checkout/web-1/2026-03-04/050607/day063/100%/fp_m_ID.json');
  });

  test('local time zone renders local fields', () => {
    withTimeZone('Asia/Kolkata', () => {
      const t = new KeyTemplate('%Y%m%d%H%M/{uuid}', {
        prefix: '',
        filePrefix: '',
        timeZone: 'local',
      });
      // 2026-03-04T05:06:07Z is 10:36 in Kolkata (UTC+5:30).
      expect(t.render({ time: at, attributes: {}, extension: '', id: 'X' })).toBe('202603041036/X');
    });
  });

  for (const [bad, why] of [
    ['%Y/%m/metrics', /\{uuid\} in the object name/],
    ['{uuid}/metrics', /\{uuid\} in the object name/],
    ['%Y/%q/{uuid}', /known time tokens only/],
    ['%Y/../{uuid}', /none empty, "\." or "\.\."/],
    ['/%Y/{uuid}', /none empty/],
    ['%Y//{uuid}', /none empty/],
    ['%Y/{uuid}/', /none empty/],
    ['%Y/a\\b/{uuid}', /backslashes/],
    ['%Y/a\nb/{uuid}', /control characters/],
    ['%Y/a\uD800b/{uuid}', /well-formed Unicode/],
    ['{service name}/{uuid}', /tokens such as/],
    ['{unclosed/{uuid}', /tokens such as/],
    ['', /non-empty string/],
  ] as const) {
    test(`rejects ${JSON.stringify(bad)}`, () => {
      expect(() => template(bad)).toThrow(InvalidOptionError);
      expect(() => template(bad)).toThrow(why);
    });
  }

  test('the exporter rejects a bad keyTemplate at construction, naming the option', () => {
    expect(
      () => new S3MetricExporter({ bucket: 'b', compression: 'none', keyTemplate: 'x/%Y' }),
    ).toThrow(/invalid option keyTemplate: "x\/%Y"/);
  });
});

describe('what a key template can render is checked with the real filePrefix and length', () => {
  test('{filePrefix} alone in a segment with an empty filePrefix is an empty segment', () => {
    const keyTemplate = '{filePrefix}/metrics_{uuid}';
    expect(() => new S3MetricExporter({ bucket: 'b', compression: 'none', keyTemplate })).toThrow(
      /invalid option keyTemplate: "\{filePrefix\}\/metrics_\{uuid\}" \(expected segments separated by single "\/", none empty/,
    );
    const t = new KeyTemplate(keyTemplate, { prefix: 'p', filePrefix: 'host1', timeZone: 'UTC' });
    expect(t.render({ time: at, attributes: {}, extension: '.json', id: 'X' })).toBe(
      'p/host1/metrics_X.json',
    );
  });

  test('a layout whose keys can pass 1024 bytes is refused; one reaching exactly 1024 is not', () => {
    // "pre/fix/" 8 + literal n + "/" 1 + attribute 100 + "/metrics_" 9 + uuid 36 + ".binpb.zst" 10
    const text = (n: number) => `${'a'.repeat(n)}/{service.name}/metrics_{uuid}`;
    expect(() => template(text(861))).toThrow(InvalidOptionError);
    expect(() => template(text(861))).toThrow(
      /keyTemplate.*keys of at most 1024 bytes.*reach 1025 bytes/,
    );
    const t = template(text(860));
    const attributes = t.attributeValues({ 'service.name': 'x'.repeat(300) });
    const id = '01a22aa0-f36e-7fca-b5bb-e82e69c9095c';
    expect(t.render({ time: at, attributes, extension: '.binpb.zst', id })).toHaveLength(1024);
  });

  test('the exporter refuses a layout whose keys can pass 1024 bytes, naming keyTemplate', () => {
    // 500 + "/" + 5 attributes of up to 100 and their 4 "/" + "/metrics_" 9 + 36 + ".json.zst"
    // 9: 1059 bytes.
    const keyTemplate = '{a}/{b}/{c}/{d}/{e}/metrics_{uuid}';
    expect(
      () => new S3MetricExporter({ bucket: 'b', prefix: 'p'.repeat(500), keyTemplate }),
    ).toThrow(/invalid option keyTemplate: "\{a\}.*keys of at most 1024 bytes/);
  });
});

describe('hostile resource attribute values never escape the prefix', () => {
  const hostile = [
    '../',
    '..',
    '.',
    '...',
    '/',
    '//',
    '/etc/passwd',
    '../../../../root',
    'a/../../b',
    '\\..\\..\\win',
    '%2e%2e%2f',
    '\u0000',
    '\n\r\t',
    '\u202e\u200b',
    'é',
    '日本語',
    '🚀',
    '',
    ' ',
    'a'.repeat(5_000),
    undefined,
    42,
    true,
  ];

  test('sanitizeKeySegment keeps only [A-Za-z0-9._-], never "." or "..", never empty', () => {
    for (const value of hostile) {
      const out = sanitizeKeySegment(value);
      expect(out, JSON.stringify(value)).toMatch(/^[A-Za-z0-9._-]{1,100}$/);
      expect(out).not.toMatch(/^\.+$/);
    }
    expect(sanitizeKeySegment('checkout-svc_2.v1')).toBe('checkout-svc_2.v1');
  });

  test('every rendered key stays under the prefix with clean segments', () => {
    const t = template(
      '{service.name}/{service.instance.id}/{host.name}.{service.name}/%Y/metrics_{uuid}',
      'tenant/a',
    );
    for (const a of hostile) {
      for (const b of hostile.slice(0, 8)) {
        const key = t.render({
          time: at,
          attributes: t.attributeValues({
            'service.name': a,
            'service.instance.id': b,
            'host.name': a,
          }),
          extension: '.json.gz',
        });
        expect(key.startsWith('tenant/a/')).toBe(true);
        const segments = key.split('/');
        expect(segments.slice(0, 2)).toEqual(['tenant', 'a']);
        for (const segment of segments) {
          expect(segment === '' || segment === '.' || segment === '..', key).toBe(false);
        }
        expect(key).toMatch(/^[\x21-\x7e]+$/);
        expect(segments).toHaveLength(7);
      }
    }
  });
});

describe('the exporter with a key template', () => {
  function withResource(service: string, tag: number): ResourceMetrics {
    return {
      ...syntheticMetrics(2, tag),
      resource: resourceFromAttributes({ 'service.name': service }),
    };
  }
  const exportOne = (exporter: S3MetricExporter, rm: ResourceMetrics) =>
    new Promise((resolve) => exporter.export(rm, resolve));

  test('exports of different services never share an object; each lands under its own name', async () => {
    const s3 = new ScriptedS3();
    const exporter = scriptedExporter(s3, {
      bucket: 'b',
      compression: 'none',
      prefix: 'fleet',
      keyTemplate: '{service.name}/%Y/metrics_{uuid}',
    });
    await exportOne(exporter, withResource('checkout', 1));
    await exportOne(exporter, withResource('checkout', 2));
    await exportOne(exporter, withResource('../../etc', 3));
    await exportOne(exporter, withResource('checkout', 4));
    await exporter.forceFlush();
    await exporter.shutdown();
    const keys = [...s3.stored.keys()].map((k) => k.split('/').slice(0, 2).join('/'));
    expect(keys).toEqual(['fleet/checkout', 'fleet/.._.._etc', 'fleet/checkout']);
    expect(exporter.stats().batchesSealed).toBe(3);
  });

  test("partitionTime 'data' places an object by its oldest data point", async () => {
    const s3 = new ScriptedS3();
    const exporter = scriptedExporter(s3, {
      bucket: 'b',
      compression: 'none',
      partitionTime: 'data',
    });
    // syntheticMetrics() points end at 1_796_000_000 s = 2026-11-30T00:53:20Z.
    await exportSynthetic(exporter, 3, 1);
    await exporter.forceFlush();
    await exporter.shutdown();
    expect([...s3.stored.keys()][0]).toMatch(/^year=2026\/month=11\/day=30\/hour=00\/minute=53\//);
  });
});
