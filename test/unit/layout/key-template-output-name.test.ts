import { describe, expect, test } from 'vitest';
import { OUTPUT_EXTENSION } from '../../../src/layout/formats.js';
import { KeyTemplate } from '../../../src/layout/key-template.js';
import { outputNames } from '../../../src/layout/outputs.js';
import { resolveKeyLayout } from '../../../src/reader/key-layout.js';

const id = '01890a5d-ac96-774b-bcce-b302099a8057';
const hour = new Date(Date.UTC(2026, 2, 4, 5));
const HOUR = 'year=%Y/month=%m/day=%d/hour=%H/{filePrefix}metrics_';

const render = (text: string, attributes: Record<string, string>, extension = '.parquet') =>
  new KeyTemplate(text, { prefix: 'p', filePrefix: '', timeZone: 'UTC' }).render({
    time: hour,
    attributes,
    extension,
    id,
  });

describe('an attribute after {uuid} and the compaction output name', () => {
  test("an output's key is read as an output under such a template", () => {
    const output = outputNames('p', '', 'metrics').render(hour, id);
    // Precondition: the output's name is the one the template could render with `.compacted`.
    expect(output).toBe(`p/year=2026/month=03/day=04/hour=05/metrics_${id}.compacted.parquet`);
    for (const tail of ['{uuid}{a}', '{uuid}.{a}']) {
      const parsed = resolveKeyLayout('p', { keyTemplate: HOUR + tail }).parse(output);
      expect(parsed?.compacted, tail).toBe(true);
      expect(parsed?.attributes, tail).toEqual({});
    }
  });

  test("the exporter never writes a key of an output's name, and its value reads back", () => {
    const cases: [string, Record<string, string>, string][] = [
      ['{uuid}{a}', { a: '.compacted' }, '.compacte_'],
      ['{uuid}.{a}', { a: 'compacted' }, 'compacte_'],
      ['{uuid}.com{a}', { a: 'pacted' }, 'pacte_'],
      ['{uuid}{a}ted', { a: '.compac' }, '.compa_'],
    ];
    for (const [tail, attributes, read] of cases) {
      const key = render(HOUR + tail, attributes);
      expect(key.endsWith(OUTPUT_EXTENSION), key).toBe(false);
      expect(outputNames('p', '', 'metrics').parse(key), key).toBeUndefined();
      const parsed = resolveKeyLayout('p', { keyTemplate: HOUR + tail }).parse(key);
      expect(parsed?.compacted, key).toBeUndefined();
      expect(parsed?.attributes, key).toEqual({ a: read });
      expect(parsed?.extension, key).toBe('.parquet');
    }
  });

  test('a repeated token changes everywhere, so the key still reads back', () => {
    const text = `{a}/${HOUR}{uuid}{a}`;
    const key = render(text, { a: '.compacted' });
    expect(key).toBe(
      `p/.compacte_/year=2026/month=03/day=04/hour=05/metrics_${id}.compacte_.parquet`,
    );
    expect(resolveKeyLayout('p', { keyTemplate: text }).parse(key)?.attributes).toEqual({
      a: '.compacte_',
    });
  });

  test('other values and extensions are kept as they are', () => {
    expect(render(`${HOUR}{uuid}{a}`, { a: '.compacted' }, '.json.zst')).toBe(
      `p/year=2026/month=03/day=04/hour=05/metrics_${id}.compacted.json.zst`,
    );
    expect(render(`${HOUR}{uuid}{a}`, { a: '.compactedx' })).toBe(
      `p/year=2026/month=03/day=04/hour=05/metrics_${id}.compactedx.parquet`,
    );
  });
});
