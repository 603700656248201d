import { ValueType } from '@opentelemetry/api';
import {
  AggregationTemporalityPreference,
  OTLPMetricExporter,
} from '@opentelemetry/exporter-metrics-otlp-http';
import { AggregationTemporality, InstrumentType, MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, test } from 'vitest';
import { decodeProtobuf } from '../../support/otlp-reference.js';
import { scriptedExporter } from '../../support/scripted-exporter.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { CollectingReader } from '../../support/service.js';

/** Our preference names, and the official OTLP exporter's setting of the same meaning. */
const PREFERENCES = [
  ['cumulative', AggregationTemporalityPreference.CUMULATIVE],
  ['delta', AggregationTemporalityPreference.DELTA],
  ['lowmemory', AggregationTemporalityPreference.LOWMEMORY],
] as const;

const KINDS = Object.values(InstrumentType);

/** What the official OTLPMetricExporter selects for `type` under `preference`. */
function officialSelection(
  preference: AggregationTemporalityPreference,
  type: InstrumentType,
): AggregationTemporality {
  const official = new OTLPMetricExporter({ temporalityPreference: preference });
  try {
    return official.selectAggregationTemporality(type);
  } finally {
    void official.shutdown();
  }
}

/** The OTLP enum as the protobuf JSON mapping spells it. */
const OTLP_NAME = {
  [AggregationTemporality.DELTA]: 'AGGREGATION_TEMPORALITY_DELTA',
  [AggregationTemporality.CUMULATIVE]: 'AGGREGATION_TEMPORALITY_CUMULATIVE',
} as const;

describe('temporalityPreference selects what the official OTLP exporter selects', () => {
  test('the SDK has the seven instrument kinds this test covers', () => {
    expect(KINDS.sort()).toEqual(
      [
        'COUNTER',
        'GAUGE',
        'HISTOGRAM',
        'OBSERVABLE_COUNTER',
        'OBSERVABLE_GAUGE',
        'OBSERVABLE_UP_DOWN_COUNTER',
        'UP_DOWN_COUNTER',
      ].sort(),
    );
  });

  test.each(PREFERENCES)('%s: every instrument kind', (ours, official) => {
    const exporter = scriptedExporter(new ScriptedS3(), {
      temporalityPreference: ours,
    });
    const selected = Object.fromEntries(
      KINDS.map((type) => [
        type,
        AggregationTemporality[exporter.selectAggregationTemporality(type)],
      ]),
    );
    const expected = Object.fromEntries(
      KINDS.map((type) => [type, AggregationTemporality[officialSelection(official, type)]]),
    );
    expect(selected).toEqual(expected);
    void exporter.shutdown();
  });

  test.each(PREFERENCES)(
    '%s: the stored object carries the temporality the official exporter selects',
    async (ours, official) => {
      const s3 = new ScriptedS3();
      const exporter = scriptedExporter(s3, {
        format: 'otlp-proto',
        compression: 'none',
        temporalityPreference: ours,
      });
      const reader = new CollectingReader({
        aggregationTemporalitySelector: (type) => exporter.selectAggregationTemporality(type),
      });
      const provider = new MeterProvider({ readers: [reader] });
      const meter = provider.getMeter('temporality');
      // One instrument of each kind that has a temporality in OTLP (gauges have none).
      const sums: Record<string, InstrumentType> = {
        counter: InstrumentType.COUNTER,
        'up-down-counter': InstrumentType.UP_DOWN_COUNTER,
        histogram: InstrumentType.HISTOGRAM,
        'observable-counter': InstrumentType.OBSERVABLE_COUNTER,
        'observable-up-down-counter': InstrumentType.OBSERVABLE_UP_DOWN_COUNTER,
      };
      meter.createCounter('counter').add(1);
      meter.createUpDownCounter('up-down-counter').add(-1);
      meter.createHistogram('histogram').record(2);
      meter.createObservableCounter('observable-counter').addCallback((r) => r.observe(3));
      meter
        .createObservableUpDownCounter('observable-up-down-counter', { valueType: ValueType.INT })
        .addCallback((r) => r.observe(-4));
      const { resourceMetrics } = await reader.collect();
      await new Promise((resolve) => exporter.export(resourceMetrics, resolve));
      await exporter.shutdown();
      await provider.shutdown();

      const [body] = [...s3.stored.values()];
      if (body === undefined) throw new Error('nothing stored');
      const request = decodeProtobuf(body) as {
        resourceMetrics: {
          scopeMetrics: {
            metrics: {
              name: string;
              sum?: { aggregationTemporality: string };
              histogram?: { aggregationTemporality: string };
            }[];
          }[];
        }[];
      };
      const stored = Object.fromEntries(
        request.resourceMetrics
          .flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics))
          .map((m) => [m.name, (m.sum ?? m.histogram)?.aggregationTemporality]),
      );
      const expected = Object.fromEntries(
        Object.entries(sums).map(([name, type]) => [
          name,
          OTLP_NAME[officialSelection(official, type)],
        ]),
      );
      expect(stored).toEqual(expected);
    },
  );
});
