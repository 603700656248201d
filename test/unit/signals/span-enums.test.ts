import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import { handBuiltSpan } from '../../support/readable-span.js';
import { columns, encoder, GOOD } from '../../support/time-items.js';

/**
 * A span's kind is the API's SpanKind (0 INTERNAL … 4 CONSUMER) and its status code the API's
 * SpanStatusCode (0 UNSET, 1 OK, 2 ERROR). A number outside them (a hand-built span) is no kind:
 * OTLP/JSON and protobuf wrote it shifted by one as a kind OTLP does not have (the official
 * serializers do the same), Parquet wrote 'Unspecified' or 'Unset'. Every format now refuses it
 * alike, with its export.
 */

const resource = resourceFromAttributes({ 'service.name': 'span-enums' });
const span = (kind: number, code: number): ReadableSpan[] => [
  handBuiltSpan({
    name: 'quote',
    spanContext: () => ({
      traceId: '1'.padStart(32, '0'),
      spanId: '2'.padStart(16, '0'),
      traceFlags: 1,
    }),
    startTime: GOOD,
    endTime: GOOD,
    kind,
    status: { code },
    resource,
    instrumentationScope: { name: 'scope' },
  }),
];
const FORMATS = ['otlp-json', 'otlp-proto', 'parquet'] as const;

describe.each([5, 9, -1, 2.5, Number.NaN])('a span kind of %s', (kind) => {
  test.each(FORMATS)('%s records refuse it', (format) => {
    expect(() => encoder('spans', format)(span(kind, 0))).toThrow(
      `a span kind ${kind} is not one of the API's SpanKind values: a whole number from 0 (INTERNAL) to 4 (CONSUMER)`,
    );
  });
  test('Parquet columns refuse it', () => {
    expect(() => columns.spans(span(kind, 0))).toThrow(`a span kind ${kind}`);
  });
});

describe.each([3, -1, 1.5, Number.NaN])('a status code of %s', (code) => {
  test.each(FORMATS)('%s records refuse it', (format) => {
    expect(() => encoder('spans', format)(span(0, code))).toThrow(
      `a status code ${code} is not one of the API's SpanStatusCode values: 0 (UNSET), 1 (OK) or 2 (ERROR)`,
    );
  });
  test('Parquet columns refuse it', () => {
    expect(() => columns.spans(span(0, code))).toThrow(`a status code ${code}`);
  });
});

test('every kind and status code the API has is written as the official OTLP/JSON serializer writes it', () => {
  const fields = (json: string) =>
    [...json.matchAll(/"kind":(\d+)|"code":(\d+)/g)].map((m) => m[0]);
  for (let kind = 0; kind <= 4; kind++) {
    for (let code = 0; code <= 2; code++) {
      const spans = span(kind, code);
      const official = fields(
        Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? []).toString(),
      );
      expect(fields(encoder('spans', 'otlp-json')(spans).toString())).toEqual(official);
      for (const format of ['otlp-proto', 'parquet'] as const)
        expect(() => encoder('spans', format)(spans)).not.toThrow();
      expect(() => columns.spans(spans)).not.toThrow();
    }
  }
});
