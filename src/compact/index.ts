export {
  ConditionalWritesUnsupportedError,
  compactLogRecords,
  compactMetrics,
  compactSpans,
} from './compact-metrics.js';
export type { CompactionOptions, CompactMetricsOptions } from './options.js';
export type {
  CompactionEvent,
  CompactionReport,
  PartitionReport,
  PartitionStatus,
  Tally,
} from './report.js';
