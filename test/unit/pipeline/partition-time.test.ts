import { ValueType } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import { FORMATS } from '../../../src/config/options.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';

/** An end time the test chooses: `iso` plus `nanos` below the millisecond. */
const at = (iso: string, nanos = 0): [number, number] => {
  const ms = Date.parse(iso);
  return [Math.floor(ms / 1000), (ms % 1000) * 1e6 + nanos];
};

/**
 * An export whose data points end at the given times, spread over two scopes and two metrics
 * each (gauges and a sum), in the order given: the oldest is not first.
 */
function exportWithEndTimes(ends: [number, number][]): ResourceMetrics {
  const point = (end: [number, number], i: number) => ({
    startTime: [end[0] - 60, 0] as [number, number],
    endTime: end,
    attributes: { i },
    value: i,
  });
  const half = Math.ceil(ends.length / 2);
  const scope = (name: string, slice: [number, number][]) => ({
    scope: { name },
    metrics: [
      {
        descriptor: { name: `${name}.gauge`, description: '', unit: '', valueType: ValueType.INT },
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.GAUGE as const,
        dataPoints: slice.slice(0, 1).map(point),
      },
      {
        descriptor: { name: `${name}.sum`, description: '', unit: '', valueType: ValueType.INT },
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.SUM as const,
        isMonotonic: true,
        dataPoints: slice.slice(1).map(point),
      },
    ],
  });
  return {
    resource: resourceFromAttributes({ 'service.name': 'late-data' }),
    scopeMetrics: [scope('first', ends.slice(0, half)), scope('second', ends.slice(half))],
  };
}

/** The time fields of a key of the default layouts (minute only in the OTLP ones). */
function partitionOf(key: string): Record<string, string> {
  const match =
    /year=(\d{4})\/month=(\d{2})\/day=(\d{2})\/hour=(\d{2})\/(?:minute=(\d{2})\/)?/.exec(key);
  if (match === null) throw new Error(`not a key of the default layout: ${key}`);
  const [, year, month, day, hour, minute] = match;
  return { year, month, day, hour, ...(minute === undefined ? {} : { minute }) } as Record<
    string,
    string
  >;
}

/** The UTC partition of `millis`, worked out here from the time the test recorded. */
function expectedPartition(millis: number, withMinute: boolean): Record<string, string> {
  const d = new Date(millis);
  const two = (n: number) => String(n).padStart(2, '0');
  return {
    year: String(d.getUTCFullYear()),
    month: two(d.getUTCMonth() + 1),
    day: two(d.getUTCDate()),
    hour: two(d.getUTCHours()),
    ...(withMinute ? { minute: two(d.getUTCMinutes()) } : {}),
  };
}

const millisOf = ([s, ns]: [number, number]) => s * 1000 + Math.floor(ns / 1e6);

describe("partitionTime 'data': an object is filed under the end time of its oldest point", () => {
  for (const format of FORMATS) {
    test(`${format}: the oldest of points with different end times, in one export and across exports`, async () => {
      const s3 = new ScriptedS3();
      const exporter = scriptedExporter(s3, {
        bucket: 'b',
        format,
        compression: 'none',
        partitionTime: 'data',
        maxBatchAgeMillis: 3_600_000,
      });
      const send = (rm: ResourceMetrics) =>
        new Promise<void>((resolve, reject) =>
          exporter.export(rm, (r) => (r.code === 0 ? resolve() : reject(r.error))),
        );
      // One batch of two exports; the oldest point is inside the second export, neither first
      // in it nor last, and the newest point is in the first export.
      const batch1 = [
        [
          at('2026-03-14T05:10:00Z'),
          at('2026-03-14T03:20:00Z'),
          at('2026-03-14T21:59:59.999Z', 999_999),
          at('2026-03-14T07:00:00Z'),
        ],
        [
          at('2026-03-14T04:00:00Z'),
          at('2026-03-14T09:45:00Z'),
          at('2026-03-14T02:41:07.250Z', 1),
          at('2026-03-14T02:59:00Z'),
        ],
      ];
      // A second batch, later than the first one's oldest point: its own oldest counts.
      const batch2 = [[at('2026-03-14T18:30:00Z'), at('2026-03-14T06:05:00Z')]];
      for (const ends of batch1) await send(exportWithEndTimes(ends));
      await exporter.forceFlush();
      for (const ends of batch2) await send(exportWithEndTimes(ends));
      await exporter.forceFlush();
      await exporter.shutdown();

      const keys = s3.attempts.filter((a) => a.outcome === 'ok').map((a) => a.key);
      expect(keys).toHaveLength(2);
      const withMinute = format !== 'parquet';
      const oldest = (batch: [number, number][][]) => Math.min(...batch.flat().map(millisOf));
      expect(keys.map(partitionOf)).toEqual([
        expectedPartition(oldest(batch1), withMinute), // 02:41
        expectedPartition(oldest(batch2), withMinute), // 06:05
      ]);
    });
  }
});

describe("partitionTime 'data': an end time whose year is not four digits", () => {
  // A timestamp in the wrong unit (nanoseconds given as milliseconds) or from a clock far off:
  // it was filed under `year=NaN/...`, `year=11476/...` or `year=-192/...`, keys that no reader
  // of the layout parses, so the object was stored but never read back. Such a time is no OTLP
  // time either (uint64 nanoseconds: 1970 to 2554, four-digit years), so its export is refused
  // and nothing is stored.
  const ends: [string, [number, number]][] = [
    ['past the largest Date', [1.7e15, 0]],
    ['in a five-digit year', [3e11, 0]],
    ['before year 1000', [-7e10, 0]],
  ];
  for (const [name, end] of ends) {
    test(`${name}: the export is refused, no key is made`, async () => {
      const s3 = new ScriptedS3();
      const exporter = scriptedExporter(s3, {
        bucket: 'b',
        compression: 'none',
        partitionTime: 'data',
      });
      try {
        const result = await new Promise<{ code: number; error?: Error }>((resolve) =>
          exporter.export(exportWithEndTimes([end]), resolve),
        );
        expect(result.code).toBe(1);
        expect(result.error?.message).toContain('is outside what an OTLP time holds');
        await exporter.forceFlush();
        expect(s3.attempts).toHaveLength(0);
        expect(exporter.stats().exportsRejected).toBe(1);
      } finally {
        await exporter.shutdown();
      }
    });
  }
});
