// @ts-check
// Appends a decoded ExportMetricsServiceRequest (the OTLP/JSON object shape) to the columns,
// through the one OTLP walk (src/encoding/otlp-walk.js). Integers stay exact: int64 and uint64
// fields come as numbers while they are exact and as decimal strings beyond, and both land as
// their 64 bits. Used by the compactor, and by the worker for batches of OTLP/JSON records.

import { otlpValueText } from '../../../parquet/attribute-text.js';
import { list, numberOf, obj, str, temporalityOf, walkRequest } from '../otlp-walk.js';
import { setInt64, setInt64Big } from './column-store.js';
import { LIST_STRIDE, LISTS, PRESENT, TYPE } from './sealed.js';
import { textOf } from './tables.js';

/** @typedef {import('./column-store.js').ColumnStore} ColumnStore */
/** @typedef {import('../otlp-walk.js').Json} Json */

const INTEGER = /^-?\d+$/;

/**
 * Stores an int64 / uint64 as OTLP/JSON spells it; false (nothing stored) if it is none.
 * @param {Int32Array} slots @param {number} at @param {unknown} v
 */
function setOtlpInt64(slots, at, v) {
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) return false;
    setInt64(slots, at, v);
    return true;
  }
  if (typeof v !== 'string' || !INTEGER.test(v)) return false;
  const n = Number(v); // exact iff the result is a safe integer (rounding is monotonic)
  if (Number.isSafeInteger(n)) setInt64(slots, at, n);
  else setInt64Big(slots, at, BigInt(v));
  return true;
}

/** Nanoseconds (a decimal string, or a number) as whole microseconds. @param {Int32Array} slots @param {number} at @param {unknown} v */
function setMicros(slots, at, v) {
  if (typeof v === 'string' && INTEGER.test(v) && v[0] !== '-') {
    const micros = v.length > 3 ? v.slice(0, -3) : '0';
    const n = Number(micros);
    if (n <= Number.MAX_SAFE_INTEGER) setInt64(slots, at, n);
    else setInt64Big(slots, at, BigInt(micros));
  } else if (typeof v === 'number' && Number.isInteger(v) && v >= 0) {
    if (v <= Number.MAX_SAFE_INTEGER) setInt64(slots, at, Math.floor(v / 1000));
    else setInt64Big(slots, at, BigInt(v) / 1000n);
  } else setInt64(slots, at, 0);
}

/** A KeyValue list as keys and value texts. @param {unknown} attributes */
function keyTexts(attributes) {
  const items = list(attributes);
  /** @type {string[]} */
  const keys = new Array(items.length);
  /** @type {(string | null)[]} */
  const texts = new Array(items.length);
  items.forEach((kv, i) => {
    keys[i] = str(obj(kv).key);
    texts[i] = otlpValueText(obj(kv).value);
  });
  return { keys, texts };
}

/**
 * Appends every data point of `request`; returns how many.
 * @param {ColumnStore} store
 * @param {unknown} request
 */
export function appendRequest(store, request) {
  const { strings } = store;
  let points = 0;
  let resourceId = 0;
  let metricId = 0;
  let type = 0;
  /** @type {number[]} */
  let scope = [];
  walkRequest(request, {
    resource(rm) {
      const { keys, texts } = keyTexts(obj(rm.resource).attributes);
      const set = store.sets.intern(strings, keys, texts);
      const service = strings.id(textOf(keys, texts, 'service.name') ?? '');
      resourceId = store.resources.intern([service, strings.id(str(rm.schemaUrl)), set]);
    },
    scope(sm) {
      const s = obj(sm.scope);
      scope = [str(s.name), str(s.version), str(sm.schemaUrl)].map((t) => strings.id(t));
    },
    metric(metric, t, data) {
      type = t;
      const texts = [metric.name, metric.description, metric.unit];
      metricId = store.metrics.intern([
        ...scope,
        ...texts.map((text) => strings.id(str(text))),
        t,
        temporalityOf(data),
        data.isMonotonic === true ? 1 : 0,
      ]);
    },
    point(p) {
      const r = store.nextRow();
      store.resource[r] = resourceId;
      store.metric[r] = metricId;
      const { keys, texts } = keyTexts(p.attributes);
      store.attributes[r] = store.sets.intern(strings, keys, texts);
      setMicros(store.time, r, p.timeUnixNano);
      setMicros(store.start, r, p.startTimeUnixNano);
      store.flags[r] = numberOf(p.flags) ?? 0;
      store.bounds[r] = 0;
      store.listLengths.fill(0, LIST_STRIDE * r, LIST_STRIDE * r + LIST_STRIDE);
      store.present[r] =
        type === TYPE.GAUGE || type === TYPE.SUM ? numberValue(store, r, p) : summary(store, r, p);
      if (type === TYPE.HISTOGRAM) histogram(store, r, p);
      else if (type === TYPE.EXPONENTIAL_HISTOGRAM) exponential(store, r, p);
      points++;
    },
  });
  return points;
}

/** asInt (exact) or asDouble; returns the PRESENT bits. @param {ColumnStore} s @param {number} r @param {Json} p */
function numberValue(s, r, p) {
  if ('asInt' in p && setOtlpInt64(s.integer, r, p.asInt)) {
    s.double[r] = numberOf(p.asInt) ?? 0;
    return PRESENT.VALUE | PRESENT.INTEGER;
  }
  const v = numberOf(p.asDouble);
  if (v === undefined) return 0;
  s.double[r] = v;
  return PRESENT.VALUE;
}

/** Count, sum, min and max (what every distribution has); returns the PRESENT bits. @param {ColumnStore} s @param {number} r @param {Json} p */
function summary(s, r, p) {
  if (!setOtlpInt64(s.integer, r, p.count)) setInt64(s.integer, r, 0);
  let present = PRESENT.INTEGER;
  for (const [field, bit, column] of /** @type {const} */ ([
    ['sum', PRESENT.SUM, s.double],
    ['min', PRESENT.MIN, s.min],
    ['max', PRESENT.MAX, s.max],
  ])) {
    const v = numberOf(p[field]);
    if (v === undefined) continue;
    column[r] = v;
    present |= bit;
  }
  return present;
}

/** Appends a list of counts to the row's list `which`. @param {ColumnStore} s @param {number} r @param {number} which @param {unknown} counts */
function countList(s, r, which, counts) {
  const items = list(counts);
  const at = s.reserveCounts(items.length);
  for (let i = 0; i < items.length; i++) {
    if (!setOtlpInt64(s.counts, at + i, items[i])) setInt64(s.counts, at + i, 0);
  }
  s.listLengths[LIST_STRIDE * r + which] = items.length;
}

/** @param {ColumnStore} s @param {number} r @param {Json} p */
function histogram(s, r, p) {
  s.bounds[r] = s.boundLists.intern(list(p.explicitBounds).map((b) => numberOf(b) ?? 0));
  countList(s, r, LISTS.BUCKETS, p.bucketCounts);
}

/** @param {ColumnStore} s @param {number} r @param {Json} p */
function exponential(s, r, p) {
  s.scale[r] = numberOf(p.scale) ?? 0;
  if (!setOtlpInt64(s.zeroCount, r, p.zeroCount)) setInt64(s.zeroCount, r, 0);
  const positive = obj(p.positive);
  const negative = obj(p.negative);
  s.positiveOffset[r] = numberOf(positive.offset) ?? 0;
  s.negativeOffset[r] = numberOf(negative.offset) ?? 0;
  countList(s, r, LISTS.POSITIVE, positive.bucketCounts);
  countList(s, r, LISTS.NEGATIVE, negative.bucketCounts);
}
