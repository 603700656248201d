export { ConditionalWritesUnsupportedError, compactMetrics } from './compact-metrics.js';
export type { CompactionOptions, CompactMetricsOptions } from './options.js';
export type {
  CompactionEvent,
  CompactionReport,
  PartitionReport,
  PartitionStatus,
  Tally,
} from './report.js';
