import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { configure } from '../../../src/config/environment.js';
import { KeyTemplate, sanitizeKeySegment } from '../../../src/layout/key-template.js';
import { resolveKeyLayout } from '../../../src/reader/key-layout.js';

const id = '01890a5d-ac96-774b-bcce-b302099a8057';
const time = new Date(Date.UTC(2026, 2, 4, 5, 6, 7));

const template = (text: string, filePrefix = '') =>
  new KeyTemplate(text, { prefix: 'p', filePrefix, timeZone: 'UTC' });

/** The attributes parse() reads from the key `text` renders with these values. */
function roundTrip(text: string, attributes: Record<string, string>, filePrefix = '') {
  const t = template(text, filePrefix);
  const key = t.render({ time, attributes, extension: '.json.zst', id });
  return t.parse(key)?.attributes;
}

/** Process warnings emitted by `fn`, with their codes. */
function warningsOf(fn: () => void): { message: string; code: string | undefined }[] {
  const warnings: { message: string; code: string | undefined }[] = [];
  const spy = vi
    .spyOn(process, 'emitWarning')
    .mockImplementation((warning: string | Error, options?: unknown) => {
      const code =
        typeof options === 'object' && options !== null
          ? (options as { code?: string }).code
          : undefined;
      warnings.push({ message: String(warning), code });
    });
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return warnings;
}

describe('attribute tokens that nothing separates', () => {
  test('parse back other values than were rendered, and are flagged', () => {
    // Recorded from the parser: the first value takes as much as the second leaves it.
    expect(roundTrip('{a}-{b}/{uuid}', { a: 'x', b: 'y-z' })).toEqual({ a: 'x-y', b: 'z' });
    expect(roundTrip('{a}{b}/{uuid}', { a: 'x', b: 'yz' })).toEqual({ a: 'xy', b: 'z' });
    // With a time token between them the year is misread (0241): the key reads as no object.
    expect(roundTrip('{a}%Y{b}/{uuid}', { a: 'x', b: '12' })).toBeUndefined();
    expect(template('{a}-{b}/{uuid}').ambiguousTokens).toEqual(['a', 'b']);
    expect(template('{a}{b}/{uuid}').ambiguousTokens).toEqual(['a', 'b']);
    expect(template('{a}%Y{b}/{uuid}').ambiguousTokens).toEqual(['a', 'b']);
    expect(template('{a}{uuid}{b}').ambiguousTokens).toEqual(['a', 'b']);
    expect(template('{a}/{b}.{c}/{uuid}').ambiguousTokens).toEqual(['b', 'c']);
    expect(template('{a}{filePrefix}{b}/{uuid}', 'x_').ambiguousTokens).toEqual(['a', 'b']);
  });

  test('a time token glued to one attribute is no ambiguity: its length is fixed', () => {
    expect(template('{a}%Y/{uuid}').ambiguousTokens).toBeUndefined();
    expect(template('%Y{a}%m/{uuid}').ambiguousTokens).toBeUndefined();
    expect(roundTrip('{a}%Y/{uuid}', { a: 'x2' })).toEqual({ a: 'x2' });
  });

  test('a character values cannot hold separates them', () => {
    for (const text of ['{a}/{b}/{uuid}', '{a}={b}/{uuid}', '{a}%%{b}/{uuid}', '{a}/{a}{b}_{uuid}'])
      expect(template(text).ambiguousTokens, text).toBeUndefined();
    expect(template('{a}{filePrefix}{b}/{uuid}', 'x=').ambiguousTokens).toBeUndefined();
  });

  test('every template not flagged reads back the values it rendered', () => {
    const texts = [
      '{a}/{b}/{uuid}',
      '{a}={b}/{uuid}',
      '{a}%%{b}/{uuid}',
      '{a}%Y/{b}%m/{uuid}',
      '%Y{a}%m/{b}_{uuid}',
      '{a}/{uuid}_{b}',
      '{a}{filePrefix}{b}/{uuid}',
    ];
    const value = fc.string({ minLength: 0, maxLength: 12 }).map(sanitizeKeySegment);
    fc.assert(
      fc.property(fc.constantFrom(...texts), value, value, (text, a, b) => {
        expect(template(text, 'f=').ambiguousTokens).toBeUndefined();
        expect(roundTrip(text, { a, b }, 'f=')).toEqual({ a, b });
      }),
    );
  });
});

describe('warning about such a template', () => {
  test('the exporter says it once, naming the template, the tokens and the fix', () => {
    const keyTemplate = '{service.name}-{host.name}/metrics_{uuid}';
    const warnings = warningsOf(() => {
      configure({ bucket: 'b', keyTemplate }, {});
      configure({ bucket: 'b', keyTemplate }, {});
    });
    expect(warnings).toEqual([
      {
        message: expect.stringContaining(`keyTemplate "${keyTemplate}"`),
        code: 'OTEL_S3_INVALID_ENV',
      },
    ]);
    const [message] = warnings.map((w) => w.message);
    expect(message).toContain('{service.name} from {host.name}');
    expect(message).toContain('Put "/" or "="');
  });

  test("its example is the template's own: the text between the tokens", () => {
    // Recorded from the parser, as above: with "_" between them, not "-".
    expect(roundTrip('{a}_{b}/{uuid}', { a: 'x', b: 'y_z' })).toEqual({ a: 'x_y', b: 'z' });
    expect(roundTrip('{a}_{b}/{uuid}', { a: 'x', b: 'y-z' })).toEqual({ a: 'x', b: 'y-z' });
    const warnings = warningsOf(() =>
      configure({ bucket: 'b', keyTemplate: '{a}_{b}/example_{uuid}' }, {}),
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain('a=x with b=y_z reads back as a=x_y with b=z');
  });

  test('the reader says it when the layout is resolved, once', () => {
    const keyTemplate = '{service.name}{host.name}/reader_{uuid}';
    const warnings = warningsOf(() => {
      resolveKeyLayout('p', { keyTemplate });
      resolveKeyLayout('q', { keyTemplate });
    });
    expect(warnings.map((w) => w.code)).toEqual(['OTEL_S3_INVALID_ENV']);
    expect(warnings[0]?.message).toContain(`keyTemplate "${keyTemplate}"`);
  });

  test('a separated template is not warned about', () => {
    const warnings = warningsOf(() => {
      configure({ bucket: 'b', keyTemplate: '{service.name}/{host.name}/quiet_{uuid}' }, {});
      resolveKeyLayout('p', { keyTemplate: '{service.name}={host.name}/quiet_{uuid}' });
    });
    expect(warnings).toEqual([]);
  });
});
