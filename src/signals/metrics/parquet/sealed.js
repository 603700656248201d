// @ts-check
// The columns of one sealed batch, as the main thread hands them to the Parquet writer: typed
// arrays and numbers only, so they cross to a worker by transfer. Written by column-store.ts,
// read by encode.js and to-request.ts.

/**
 * A 64-bit integer column holds two Int32 slots per entry, low word then high word (the bytes of
 * a little-endian INT64, which is what Parquet's PLAIN encoding writes). Strings are ids into
 * `strings`; attribute sets, resources, metrics and bound lists are ids into their tables.
 *
 * @typedef {object} SealedColumns
 * @property {number} rows data points (rows of the table)
 * @property {Uint32Array} resource per row: resource id (`resources` has RESOURCE_STRIDE slots each)
 * @property {Uint32Array} metric per row: metric id (`metrics` has METRIC_STRIDE slots each)
 * @property {Uint32Array} attributes per row: attribute set id (the point's attributes)
 * @property {Int32Array} time per row: TimeUnix, int64 microseconds (2 slots)
 * @property {Int32Array} start per row: StartTimeUnix, int64 microseconds (2 slots)
 * @property {Uint32Array} flags per row: the point's flags
 * @property {Uint8Array} present per row: PRESENT bits
 * @property {Float64Array} double per row: Value (gauge, sum), Sum (histograms, summary)
 * @property {Int32Array} integer per row: ValueAsInt (gauge, sum), Count (histograms, summary); 2 slots
 * @property {Float64Array} min per row: Min (histograms)
 * @property {Float64Array} max per row: Max (histograms)
 * @property {Int32Array} scale per row: Scale (exponential histograms)
 * @property {Int32Array} zeroCount per row: ZeroCount (exponential histograms); 2 slots
 * @property {Int32Array} positiveOffset per row (exponential histograms)
 * @property {Int32Array} negativeOffset per row (exponential histograms)
 * @property {Uint32Array} bounds per row: ExplicitBounds list id (0 is the empty list)
 * @property {Uint32Array} listLengths per row, 3 slots: lengths of BucketCounts, PositiveBucketCounts, NegativeBucketCounts
 * @property {Int32Array} counts the three lists of every row, row after row, in that order; 2 slots per count
 * @property {number} stringCount
 * @property {Uint8Array} strings every string, UTF-8, one after another
 * @property {Uint32Array} stringOffsets string i is strings[offsets[i], offsets[i + 1])
 * @property {number} setCount attribute sets (set 0 is the empty set)
 * @property {Uint32Array} setOffsets set i is entries [offsets[i], offsets[i + 1])
 * @property {Int32Array} setEntries per entry 2 slots: key string id, value string id or -1 (no value)
 * @property {number} resourceCount
 * @property {Uint32Array} resources per resource RESOURCE_STRIDE slots (RESOURCE)
 * @property {number} metricCount
 * @property {Uint32Array} metrics per metric METRIC_STRIDE slots (METRIC)
 * @property {number} boundsCount
 * @property {Uint32Array} boundsOffsets list i is boundsValues[offsets[i], offsets[i + 1])
 * @property {Float64Array} boundsValues
 * @property {ArrayBuffer[]} transfer every buffer above, for postMessage's transfer list
 */

/** Bits of `present`: which nullable value of a row is there. */
export const PRESENT = /** @type {const} */ ({ VALUE: 1, INTEGER: 2, SUM: 4, MIN: 8, MAX: 16 });

/** Slots of a resource in `resources`. */
export const RESOURCE = /** @type {const} */ ({ SERVICE: 0, SCHEMA_URL: 1, ATTRIBUTES: 2 });
export const RESOURCE_STRIDE = 3;

/** Slots of a metric in `metrics`: strings, then the type code, temporality and monotonic flag. */
export const METRIC = /** @type {const} */ ({
  SCOPE_NAME: 0,
  SCOPE_VERSION: 1,
  SCOPE_SCHEMA_URL: 2,
  NAME: 3,
  DESCRIPTION: 4,
  UNIT: 5,
  TYPE: 6,
  TEMPORALITY: 7,
  MONOTONIC: 8,
});
export const METRIC_STRIDE = 9;

/** The metric's data field in OTLP/JSON and its MetricType in the table, by type code. */
export const METRIC_TYPES = /** @type {const} */ ([
  ['gauge', 'gauge'],
  ['sum', 'sum'],
  ['histogram', 'histogram'],
  ['exponentialHistogram', 'exponential_histogram'],
  ['summary', 'summary'],
]);

export const TYPE = /** @type {const} */ ({
  GAUGE: 0,
  SUM: 1,
  HISTOGRAM: 2,
  EXPONENTIAL_HISTOGRAM: 3,
  SUMMARY: 4,
});

/** Slots of listLengths per row. */
export const LISTS = /** @type {const} */ ({ BUCKETS: 0, POSITIVE: 1, NEGATIVE: 2 });
export const LIST_STRIDE = 3;
