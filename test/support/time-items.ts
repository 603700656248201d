import type { HrTime } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import {
  AggregationTemporality,
  DataPointType,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { newTally } from '../../src/encoding/records.js';
import { logsExport } from '../../src/signals/logs/export.js';
import { logColumnBuilders } from '../../src/signals/logs/parquet.js';
import { metricsExport } from '../../src/signals/metrics/export.js';
import { MetricColumnBuilders } from '../../src/signals/metrics/parquet/column-builders.js';
import { tracesExport } from '../../src/signals/traces/export.js';
import { spanColumnBuilders } from '../../src/signals/traces/parquet.js';
import { handBuiltSpan } from './readable-span.js';

/**
 * One item of each signal with a time of the caller's in each of its time fields: the tests of
 * times no format may store (not finite, outside OTLP's uint64) share them.
 */

/** 2025-11-30, a time every format holds. */
export const S = 1_764_480_000;
export const GOOD: HrTime = [S, 5];

const scope = { name: 'scope' };

/** The items, of a resource named `service`. */
export function timeItems(service: string) {
  const resource = resourceFromAttributes({ 'service.name': service });
  const span = (start: HrTime, end: HrTime, event: HrTime): ReadableSpan =>
    handBuiltSpan({
      name: 'quote',
      spanContext: () => ({
        traceId: '1'.padStart(32, '0'),
        spanId: '2'.padStart(16, '0'),
        traceFlags: 1,
      }),
      startTime: start,
      endTime: end,
      events: [{ name: 'e', time: event, attributes: {} }],
      resource,
      instrumentationScope: scope,
    });
  const logRecord = (time: HrTime, observed: HrTime) =>
    ({
      hrTime: time,
      hrTimeObserved: observed,
      body: 'b',
      attributes: {},
      droppedAttributesCount: 0,
      resource,
      instrumentationScope: scope,
    }) as unknown as ReadableLogRecord;
  const gauge = (start: HrTime, end: HrTime) =>
    ({
      resource,
      scopeMetrics: [
        {
          scope,
          metrics: [
            {
              descriptor: { name: 'g', description: '', unit: '', valueType: 1, type: 'GAUGE' },
              dataPointType: DataPointType.GAUGE,
              aggregationTemporality: AggregationTemporality.CUMULATIVE,
              dataPoints: [{ startTime: start, endTime: end, attributes: {}, value: 1 }],
            },
          ],
        },
      ],
    }) as unknown as ResourceMetrics;
  /** Each signal's items with each of `bad` in each of their time fields. */
  const cases = (bad: HrTime[]) =>
    bad.flatMap((t) => [
      { signal: 'spans', bad: t, field: 'start', item: [span(t, GOOD, GOOD)] },
      { signal: 'spans', bad: t, field: 'end', item: [span(GOOD, t, GOOD)] },
      { signal: 'spans', bad: t, field: 'event', item: [span(GOOD, GOOD, t)] },
      { signal: 'logs', bad: t, field: 'time', item: [logRecord(t, GOOD)] },
      { signal: 'logs', bad: t, field: 'observed', item: [logRecord(GOOD, t)] },
      { signal: 'metrics', bad: t, field: 'start', item: gauge(t, GOOD) },
      { signal: 'metrics', bad: t, field: 'end', item: gauge(GOOD, t) },
    ]);
  return { span, logRecord, gauge, cases };
}

export const rows = { spans: tracesExport, logs: logsExport, metrics: metricsExport } as const;
export type TimeSignal = keyof typeof rows;

/** The records' encoder of a signal and format. */
export const encoder = (signal: TimeSignal, format: 'otlp-json' | 'otlp-proto' | 'parquet') =>
  rows[signal].records[format].encode as (i: unknown) => Buffer;

/** An append to a signal's Parquet columns. */
export const columns = {
  spans: (i: unknown) => spanColumnBuilders().append(i as ReadableSpan[], newTally(false)),
  logs: (i: unknown) => logColumnBuilders().append(i as ReadableLogRecord[], newTally(false)),
  metrics: (i: unknown) => new MetricColumnBuilders().append(i as ResourceMetrics, newTally(false)),
};
