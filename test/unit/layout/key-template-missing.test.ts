import { expect, test, vi } from 'vitest';
import { KeyTemplate } from '../../../src/layout/key-template.js';

const template = (text: string) =>
  new KeyTemplate(text, { prefix: 'p', filePrefix: '', timeZone: 'UTC' });

/** Process warnings emitted by `fn`: message and code. */
function warningsOf(fn: () => void): [string, string | undefined][] {
  const warnings: [string, string | undefined][] = [];
  const spy = vi
    .spyOn(process, 'emitWarning')
    .mockImplementation((warning: string | Error, options?: unknown) => {
      warnings.push([String(warning), (options as { code?: string } | undefined)?.code]);
    });
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return warnings;
}

const resource = { 'service.name': 'checkout', 'host.name': 'h1' };

test('a token no resource attribute answers is said once, with the attribute it probably means', () => {
  const t = template('{service}/%Y/{uuid}');
  const warnings = warningsOf(() => {
    expect(t.attributeValues(resource)).toEqual({ service: 'unknown' });
    expect(t.attributeValues(resource)).toEqual({ service: 'unknown' });
  });
  expect(warnings).toEqual([
    [
      'otel-s3-exporter: keyTemplate "{service}/%Y/{uuid}": the resource has no attribute "service" (it has host.name, service.name), so its objects go under "unknown" for {service}; did you mean {service.name}?',
      'OTEL_S3_INVALID_ENV',
    ],
  ]);
});

test('a token the resource answers says nothing; one no attribute resembles names none', () => {
  const t = template('{service.name}/{team}/{uuid}');
  const warnings = warningsOf(() => {
    expect(t.attributeValues(resource)).toEqual({ 'service.name': 'checkout', team: 'unknown' });
  });
  expect(warnings.map(([message]) => message)).toEqual([
    'otel-s3-exporter: keyTemplate "{service.name}/{team}/{uuid}": the resource has no attribute "team" (it has host.name, service.name), so its objects go under "unknown" for {team}',
  ]);
});

test('among several attributes of the token, the one meant is its .name (as an SDK resource holds them)', () => {
  const t = template('{service}/{host}/{uuid}');
  const sdkResource = {
    'host.arch': 'amd64',
    'host.id': 'a1b2',
    'host.name': 'h1',
    'service.instance.id': 'i-1',
    'service.name': 'checkout',
    'service.version': '1.2.3',
  };
  const warnings = warningsOf(() => t.attributeValues(sdkResource));
  expect(warnings.map(([message]) => message.replace(/^.*;/, ''))).toEqual([
    ' did you mean {service.name}?',
    ' did you mean {host.name}?',
  ]);
});
