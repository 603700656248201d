// Appends a decoded ExportMetricsServiceRequest (the OTLP/JSON object shape) to the columns,
// through the one OTLP walk (otlp-walk.ts). Integers stay exact: int64 and uint64 fields come as
// numbers while they are exact and as decimal strings beyond, and both land as their 64 bits.
// Used by the compactor, for every input it merges. A field holding what it cannot (a scale of
// 2.5, a count of -1 or 2^64) throws FieldValueError.

import { otlpKeyTexts as keyTexts } from '../../../parquet/attribute-text.js';
import { textOf } from '../../../parquet/tables.js';
import {
  doubleField,
  enumField,
  FieldValueError,
  int32Field,
  int64Field,
  UINT64,
  uint32Field,
  uint64Field,
} from '../../plain-values.js';
import {
  type Json,
  list,
  numberOf,
  obj,
  str,
  TEMPORALITY_NAMES,
  walkRequest,
} from '../otlp-walk.js';
import type { ColumnStore } from './column-store.js';
import { LISTS, TYPE } from './sealed.js';

const INTEGER = /^-?\d+$/;

/** Nanoseconds (a decimal string, or a number) as whole microseconds; 0 if they are none. */
function micros(v: unknown): number | bigint {
  if (typeof v === 'string' && INTEGER.test(v) && v[0] !== '-') {
    const digits = v.length > 3 ? v.slice(0, -3) : '0';
    const n = Number(digits);
    return n <= Number.MAX_SAFE_INTEGER ? n : BigInt(digits);
  }
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) {
    return v <= Number.MAX_SAFE_INTEGER ? Math.floor(v / 1000) : BigInt(v) / 1000n;
  }
  return 0;
}

/** Appends every data point of `request`; returns how many. */
export function appendRequest(store: ColumnStore, request: unknown): number {
  let points = 0;
  let resourceId = 0;
  let metricId = 0;
  let type = 0;
  let scope: number[] = [];
  walkRequest(request, {
    resource(rm) {
      const { keys, texts } = keyTexts(obj(rm.resource).attributes);
      const set = store.setId(keys, texts);
      const service = store.stringId(textOf(keys, texts, 'service.name') ?? '');
      resourceId = store.resourceId([service, store.stringId(str(rm.schemaUrl)), set]);
    },
    scope(sm) {
      const s = obj(sm.scope);
      scope = [str(s.name), str(s.version), str(sm.schemaUrl)].map((t) => store.stringId(t));
    },
    metric(metric, t, data) {
      type = t;
      const texts = [metric.name, metric.description, metric.unit];
      metricId = store.metricId([
        ...scope,
        ...texts.map((text) => store.stringId(str(text))),
        t,
        enumField(data.aggregationTemporality, TEMPORALITY_NAMES, 'aggregationTemporality'),
        data.isMonotonic === true ? 1 : 0,
      ]);
    },
    point(p) {
      const { keys, texts } = keyTexts(p.attributes);
      const r = store.addRow(
        resourceId,
        metricId,
        store.setId(keys, texts),
        micros(p.timeUnixNano),
        micros(p.startTimeUnixNano),
        uint32Field(p.flags, 'flags'),
      );
      if (type === TYPE.GAUGE || type === TYPE.SUM) numberValue(store, r, p);
      else summary(store, r, p);
      if (type === TYPE.HISTOGRAM) histogram(store, r, p);
      else if (type === TYPE.EXPONENTIAL_HISTOGRAM) exponential(store, r, p);
      points++;
    },
  });
  return points;
}

/** asInt (exact) or asDouble; neither leaves the row without a value. */
function numberValue(s: ColumnStore, r: number, p: Json): void {
  const integer =
    p.asInt !== undefined && p.asInt !== null ? int64Field(p.asInt, 'asInt') : undefined;
  if (integer !== undefined) {
    s.setValue(r, numberOf(p.asInt) ?? 0, integer);
    return;
  }
  const v = doubleField(p.asDouble, 'asDouble');
  if (v !== undefined) s.setValue(r, v, undefined);
}

/** Count, sum, min and max (what every distribution has). */
function summary(s: ColumnStore, r: number, p: Json): void {
  s.setDistribution(
    r,
    uint64Field(p.count, 'count'),
    doubleField(p.sum, 'sum'),
    doubleField(p.min, 'min'),
    doubleField(p.max, 'max'),
  );
}

/**
 * Appends a list of counts to the row's list `which`. A null in it is no count (a list holds no
 * unset items), as the reader and proto3's JSON mapping refuse it.
 */
function countList(s: ColumnStore, r: number, which: number, counts: unknown, field: string): void {
  const items = list(counts);
  const at = s.reserveCounts(r, which, items.length);
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === null) throw new FieldValueError(field, item, UINT64);
    s.setCount(at + i, uint64Field(item, field));
  }
}

function histogram(s: ColumnStore, r: number, p: Json): void {
  s.setBounds(
    r,
    s.boundsId(
      list(p.explicitBounds).map((b) => doubleField(b, 'an explicit bound', true) as number),
    ),
  );
  countList(s, r, LISTS.BUCKETS, p.bucketCounts, 'a bucket count');
}

function exponential(s: ColumnStore, r: number, p: Json): void {
  const positive = obj(p.positive);
  const negative = obj(p.negative);
  s.setExponential(
    r,
    int32Field(p.scale, 'scale'),
    uint64Field(p.zeroCount, 'zeroCount'),
    int32Field(positive.offset, "the positive buckets' offset"),
    int32Field(negative.offset, "the negative buckets' offset"),
  );
  countList(s, r, LISTS.POSITIVE, positive.bucketCounts, 'a positive bucket count');
  countList(s, r, LISTS.NEGATIVE, negative.bucketCounts, 'a negative bucket count');
}
