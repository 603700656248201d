import { JsonLogsSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import {
  AggregationTemporality,
  DataPointType,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, test } from 'vitest';
import { decodeJsonRequest, decodeProtoRequest } from '../../../src/encoding/decode-request.js';
import { newTally } from '../../../src/encoding/records.js';
import { logsExport } from '../../../src/signals/logs/export.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import { MetricColumnBuilders } from '../../../src/signals/metrics/parquet/column-builders.js';
import { tracesExport } from '../../../src/signals/traces/export.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { handBuiltSpan } from '../../support/readable-span.js';

/**
 * A dropped count (of attributes, events, links) is a uint32. A caller's count no uint32 holds
 * was kept differently by each format: OTLP/protobuf cut 2.5 to 2 and refused -3, OTLP/JSON
 * wrote both as they are, Parquet (which keeps no dropped count) took the item. Every format now
 * refuses its export alike.
 */

const resource = resourceFromAttributes({ 'service.name': 'dropped' });
const S = 1_764_480_000;
const context = { traceId: '1'.padStart(32, '0'), spanId: '2'.padStart(16, '0'), traceFlags: 1 };

const span = (odd: {
  span?: object;
  event?: number;
  link?: number;
  scope?: number;
}): ReadableSpan =>
  handBuiltSpan({
    name: 's',
    spanContext: () => context,
    startTime: [S, 0],
    endTime: [S, 1],
    events: [{ name: 'e', time: [S, 0], attributes: {}, droppedAttributesCount: odd.event ?? 0 }],
    links: [{ context, attributes: {}, droppedAttributesCount: odd.link ?? 0 }],
    resource,
    instrumentationScope: { name: 'n', droppedAttributesCount: odd.scope ?? 0 } as never,
    ...odd.span,
  } as never);
const logRecord = (dropped: number, scope = 0) =>
  ({
    hrTime: [S, 0],
    hrTimeObserved: [S, 0],
    body: 'b',
    attributes: {},
    droppedAttributesCount: dropped,
    resource,
    instrumentationScope: { name: 'n', droppedAttributesCount: scope },
  }) as unknown as ReadableLogRecord;
const gauge = (scopeDropped: number) =>
  ({
    resource,
    scopeMetrics: [
      {
        scope: { name: 'n', droppedAttributesCount: scopeDropped },
        metrics: [
          {
            descriptor: { name: 'g', description: '', unit: '', valueType: 1, type: 'GAUGE' },
            dataPointType: DataPointType.GAUGE,
            aggregationTemporality: AggregationTemporality.CUMULATIVE,
            dataPoints: [{ startTime: [S, 0], endTime: [S, 1], attributes: {}, value: 1 }],
          },
        ],
      },
    ],
  }) as unknown as ResourceMetrics;

const formats = {
  spans: {
    'otlp-json': (i: unknown) => tracesExport.records['otlp-json'].encode(i as ReadableSpan[]),
    'otlp-proto': (i: unknown) => tracesExport.records['otlp-proto'].encode(i as ReadableSpan[]),
    parquet: (i: unknown) => spanColumnBuilders().append(i as ReadableSpan[], newTally(false)),
  },
  logs: {
    'otlp-json': (i: unknown) => logsExport.records['otlp-json'].encode(i as ReadableLogRecord[]),
    'otlp-proto': (i: unknown) => logsExport.records['otlp-proto'].encode(i as ReadableLogRecord[]),
    parquet: (i: unknown) => logColumnBuilders().append(i as ReadableLogRecord[], newTally(false)),
  },
  metrics: {
    'otlp-json': (i: unknown) => metricsExport.records['otlp-json'].encode(i as ResourceMetrics),
    'otlp-proto': (i: unknown) => metricsExport.records['otlp-proto'].encode(i as ResourceMetrics),
    parquet: (i: unknown) =>
      new MetricColumnBuilders().append(i as ResourceMetrics, newTally(false)),
  },
};

const cases = (n: number) =>
  [
    ['spans', 'attributes', 'span', [span({ span: { droppedAttributesCount: n } })]],
    ['spans', 'events', 'span', [span({ span: { droppedEventsCount: n } })]],
    ['spans', 'links', 'span', [span({ span: { droppedLinksCount: n } })]],
    ['spans', 'attributes', 'event', [span({ event: n })]],
    ['spans', 'attributes', 'link', [span({ link: n })]],
    ['spans', 'attributes', 'scope', [span({ scope: n })]],
    ['logs', 'attributes', 'record', [logRecord(n)]],
    ['logs', 'attributes', 'scope', [logRecord(0, n)]],
    ['metrics', 'attributes', 'scope', gauge(n)],
  ] as const;

describe.each([-3, 2.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 32])(
  'a dropped count of %s',
  (bad) => {
    test.each(['otlp-json', 'otlp-proto', 'parquet'] as const)('%s refuses it', (format) => {
      for (const [signal, what, where, item] of cases(bad)) {
        expect(() => formats[signal][format](item), `${signal} ${where} ${what}`).toThrow(
          `a dropped ${what} count ${bad} is not a count: a uint32 holds a whole number from 0 to 2^32 - 1`,
        );
      }
    });
  },
);

test('0 and 2^32 - 1 are taken everywhere, OTLP/JSON as the official serializer writes them', () => {
  for (const good of [0, 2 ** 32 - 1]) {
    for (const [signal, , where, item] of cases(good)) {
      for (const encode of Object.values(formats[signal])) {
        expect(() => encode(item), `${signal} ${where}`).not.toThrow();
      }
    }
    const drops = (json: string) => [...json.matchAll(/"dropped\w+Count":(\d+)/g)].map((m) => m[1]);
    const spans = [span({ span: { droppedAttributesCount: good, droppedLinksCount: good } })];
    expect(drops(String(formats.spans['otlp-json'](spans)))).toEqual(
      drops(Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? []).toString()).filter(
        (d) => d !== '0',
      ),
    );
    const logs = [logRecord(good)];
    expect(drops(String(formats.logs['otlp-json'](logs)))).toEqual(
      drops(Buffer.from(JsonLogsSerializer.serializeRequest(logs) ?? []).toString()).filter(
        (d) => d !== '0',
      ),
    );
  }
});

test("a metrics scope's dropped attributes count is written in OTLP/protobuf as in OTLP/JSON", () => {
  const rm = gauge(7);
  const scopeOf = (request: Record<string, unknown>) =>
    JSON.stringify(
      (request as { resourceMetrics: { scopeMetrics: { scope: unknown }[] }[] }).resourceMetrics[0]
        ?.scopeMetrics[0]?.scope,
    );
  const json = scopeOf(
    decodeJsonRequest(
      Buffer.from(`{"resourceMetrics":[${String(formats.metrics['otlp-json'](rm))}]}`),
    ),
  );
  expect(json).toContain('"droppedAttributesCount":7');
  expect(
    scopeOf(decodeProtoRequest(Buffer.from(formats.metrics['otlp-proto'](rm) as Uint8Array))),
  ).toBe(json);
});
