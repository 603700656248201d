// @ts-check
// The Parquet schema of stored metrics: one flat table, one row per data point, in the column
// names of the OpenTelemetry Collector's ClickHouse exporter. Documented in docs/parquet.md;
// changing a column means a new SCHEMA_VERSION.
import {
  listGroup,
  mapElements as map,
  SCHEMA_VERSION_KEY,
  stringElement as string,
} from '../../../parquet/schema-elements.js';

/** Written into every file's key-value metadata as `otel_s3.schema_version`. */
export const SCHEMA_VERSION = '1';
export { SCHEMA_VERSION_KEY };

/** @typedef {import('hyparquet').SchemaElement} SchemaElement */

/** @param {string} name @param {'INT32' | 'INT64' | 'DOUBLE' | 'BOOLEAN'} type @returns {SchemaElement} */
const required = (name, type) => ({ name, type, repetition_type: 'REQUIRED' });
/** @param {string} name @param {'INT32' | 'INT64' | 'DOUBLE'} type @returns {SchemaElement} */
const optional = (name, type) => ({ name, type, repetition_type: 'OPTIONAL' });

/** INT64 microseconds since the epoch, UTC: the timestamp unit every engine reads (Spark and Hive reject NANOS). @param {string} name @returns {SchemaElement} */
const timestamp = (name) => ({
  name,
  type: 'INT64',
  repetition_type: 'REQUIRED',
  converted_type: 'TIMESTAMP_MICROS',
  logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
});

/** LIST<T> in three levels: group LIST / repeated list / element. An empty list where it does not apply. @param {string} name @param {'INT64' | 'DOUBLE'} type @returns {SchemaElement[]} */
const list = (name, type) => [
  ...listGroup(name),
  { name: 'element', type, repetition_type: 'REQUIRED' },
];

/** Top-level columns, in order (leaves.js writes them in this order). */
const COLUMNS = [
  [timestamp('TimeUnix')],
  [timestamp('StartTimeUnix')],
  [string('ServiceName')],
  [string('ResourceSchemaUrl')],
  map('ResourceAttributes'),
  [string('ScopeName')],
  [string('ScopeVersion')],
  [string('ScopeSchemaUrl')],
  [string('MetricName')],
  [string('MetricDescription')],
  [string('MetricUnit')],
  [string('MetricType')],
  map('Attributes'),
  [required('AggregationTemporality', 'INT32')],
  [required('IsMonotonic', 'BOOLEAN')],
  [optional('Value', 'DOUBLE')],
  [optional('ValueAsInt', 'INT64')],
  [optional('Count', 'INT64')],
  [optional('Sum', 'DOUBLE')],
  [optional('Min', 'DOUBLE')],
  [optional('Max', 'DOUBLE')],
  list('BucketCounts', 'INT64'),
  list('ExplicitBounds', 'DOUBLE'),
  [optional('Scale', 'INT32')],
  [optional('ZeroCount', 'INT64')],
  [optional('PositiveOffset', 'INT32')],
  list('PositiveBucketCounts', 'INT64'),
  [optional('NegativeOffset', 'INT32')],
  list('NegativeBucketCounts', 'INT64'),
  [required('Flags', 'INT32')],
];

/** @type {SchemaElement[]} */
export const SCHEMA = [{ name: 'root', num_children: COLUMNS.length }, ...COLUMNS.flat()];

/** What a reader of this schema expects (src/parquet/read.ts, schemaMetadata). */
export const EXPECTED_SCHEMA = { version: SCHEMA_VERSION, schema: SCHEMA };

/**
 * Rows per row group. An 8 MiB batch (the default maxBatchBytes) is about 10-25k data points:
 * one row group; the largest batches a few.
 */
export const ROW_GROUP_ROWS = 65_536;
