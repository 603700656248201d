import { JsonLogsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { logsExport } from '../../../src/signals/logs/export.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';

/**
 * A log record's flags carry its span context's trace flags in bits 0-7; OTLP reserves bits
 * 8-31 (writers set them to 0). For trace flags of 256, OTLP/JSON and protobuf wrote 256 and
 * Parquet's TraceFlags column 0 (`& 0xff`); for 2.5, 2.5 (JSON) and 2. Every format now refuses
 * trace flags outside 0 to 255 alike.
 */

const resource = resourceFromAttributes({ 'service.name': 'flags' });
const S = 1_764_480_000;

const logRecord = (traceFlags: number) =>
  ({
    hrTime: [S, 0],
    hrTimeObserved: [S, 0],
    body: 'b',
    attributes: {},
    droppedAttributesCount: 0,
    resource,
    instrumentationScope: { name: 'n' },
    spanContext: {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags,
    },
  }) as unknown as ReadableLogRecord;

const logs = {
  'otlp-json': (r: ReadableLogRecord[]) => logsExport.records['otlp-json'].encode(r),
  'otlp-proto': (r: ReadableLogRecord[]) => logsExport.records['otlp-proto'].encode(r),
  parquet: (r: ReadableLogRecord[]) => {
    const builders = logColumnBuilders();
    builders.append(r, newTally(false));
    return builders;
  },
};
const FORMATS = ['otlp-json', 'otlp-proto', 'parquet'] as const;

describe.each([256, 2 ** 31, 2.5, -1, Number.NaN, Number.POSITIVE_INFINITY])(
  'trace flags of %s',
  (bad) => {
    test.each(FORMATS)('%s refuses them', (format) => {
      expect(() => logs[format]([logRecord(bad)])).toThrow(
        `trace flags ${bad} are not trace flags: a whole number from 0 to 255 (bits 8-31 of a log record's flags are reserved)`,
      );
    });
  },
);

test('trace flags of 255 are taken everywhere, OTLP/JSON as the official serializer writes them', () => {
  const records = [logRecord(255)];
  const flags = (json: string) => json.match(/"flags":(\d+)/)?.[1];
  const official = flags(
    Buffer.from(JsonLogsSerializer.serializeRequest(records) ?? []).toString(),
  );
  expect(official).toBe('255');
  expect(flags(String(logs['otlp-json'](records)))).toBe(official);
  expect(() => logs['otlp-proto'](records)).not.toThrow();
  expect(() => logs.parquet(records)).not.toThrow();
});
