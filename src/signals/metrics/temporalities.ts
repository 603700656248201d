/**
 * OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE's values: apart from temporality.ts, which
 * loads the metrics SDK, so that checking an option (the CLI, the compactor) does not.
 */
export const TEMPORALITIES = ['cumulative', 'delta', 'lowmemory'] as const;
export type TemporalityPreference = (typeof TEMPORALITIES)[number];
