import { AggregationTemporality, InstrumentType } from '@opentelemetry/sdk-metrics';
import { OTLP_TEMPORALITY } from '../../encoding/otlp-schema.js';
import type { TemporalityPreference } from './temporalities.js';

/**
 * Temporality per instrument kind, with the meaning OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE
 * has for the OTLP exporters. Cumulative is the default: a lost batch then loses resolution, not totals.
 */
export function temporalitySelector(
  preference: TemporalityPreference,
): (instrumentType: InstrumentType) => AggregationTemporality {
  switch (preference) {
    case 'cumulative':
      return () => AggregationTemporality.CUMULATIVE;
    case 'delta':
      return (type) =>
        type === InstrumentType.UP_DOWN_COUNTER ||
        type === InstrumentType.OBSERVABLE_UP_DOWN_COUNTER
          ? AggregationTemporality.CUMULATIVE
          : AggregationTemporality.DELTA;
    case 'lowmemory':
      return (type) =>
        type === InstrumentType.COUNTER || type === InstrumentType.HISTOGRAM
          ? AggregationTemporality.DELTA
          : AggregationTemporality.CUMULATIVE;
  }
}

/** The SDK's temporality as OTLP's enum value: what every encoder of a metric writes. */
export function otlpTemporality(t: AggregationTemporality): number {
  return t === AggregationTemporality.DELTA ? OTLP_TEMPORALITY.delta : OTLP_TEMPORALITY.cumulative;
}
