import { type Attributes, type HrTime, ValueType } from '@opentelemetry/api';
import {
  type DataPoint,
  DataPointType,
  type ExponentialHistogram,
  type Histogram,
  type MetricData,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { AttributeCache } from '../../../encoding/attribute-cache.js';
import { checkOtlpTime } from '../../../encoding/hrtime.js';
import {
  checkCount,
  checkCounts,
  checkDropped,
  checkInt32,
  isInt64,
} from '../../../encoding/otlp-schema.js';
import { type ExportTally, noteTime } from '../../../encoding/records.js';
import { jsValueText } from '../../../parquet/attribute-text.js';
import { MAP_ENTRY_BYTES, textOf } from '../../../parquet/tables.js';
import { otlpTemporality } from '../temporality.js';
import type { ColumnStore } from './column-store.js';
import { LISTS, TYPE } from './sealed.js';

/** An interned attribute set or bound list, valid in the batch of `epoch`. */
interface Interned {
  epoch: number;
  id: number;
}
interface InternedSet extends Interned {
  keys: string[];
  texts: (string | null)[];
}
interface InternedBounds extends Interned {
  values: number[];
}

/**
 * Estimated bytes of an identity-cache entry (WeakMap slot, entry objects, the arrays of keys and
 * texts), counted once, in the batch that made it: it lives as long as the SDK's attributes
 * object (one per series), as the OTLP/JSON writer's cache entries do.
 */
const CACHE_ENTRY_BYTES = 160;

/**
 * Points of a metric appended per call: a loop over all 2,000 points of an export, run once an
 * export, was compiled on stack again and again; a call per slice is compiled once, as a function.
 */
const SLICE = 128;

const TYPE_OF: Readonly<Record<DataPointType, number>> = {
  [DataPointType.GAUGE]: TYPE.GAUGE,
  [DataPointType.SUM]: TYPE.SUM,
  [DataPointType.HISTOGRAM]: TYPE.HISTOGRAM,
  [DataPointType.EXPONENTIAL_HISTOGRAM]: TYPE.EXPONENTIAL_HISTOGRAM,
};

/**
 * An HrTime as whole microseconds, each part cut to an integer first, as the official serializers
 * read an HrTime: a number while a double holds it exactly (below 2^53 µs, 2255), a bigint past.
 */
function micros(t: HrTime): number | bigint {
  const seconds = Math.trunc(t[0]);
  const micros = Math.floor(Math.trunc(t[1]) / 1000);
  const m = seconds * 1e6 + micros;
  if (Number.isSafeInteger(m) && m >= 0) return m;
  checkOtlpTime(t);
  return BigInt(seconds) * 1_000_000n + BigInt(micros);
}

/**
 * Appends the SDK's ResourceMetrics to the columns directly, with the values the OTLP encoders
 * write for them (otlp-json.ts). Attribute sets and bound lists are interned once per batch: a
 * series keeps its attributes object from one collection to the next, so an object seen before
 * (and unchanged, as AttributeCache checks) costs one lookup.
 */
export class SdkAppender {
  readonly #sets = new AttributeCache<InternedSet>();
  readonly #bounds = new WeakMap<readonly number[], InternedBounds>();

  /** Appends every data point of `rm`; returns how many (their times go into `tally`). */
  append(store: ColumnStore, rm: ResourceMetrics, tally?: ExportTally): number {
    const resource = rm.resource;
    const set = this.#set(store, resource.attributes);
    const service = textOf(set.keys, set.texts, 'service.name') ?? '';
    const resourceId = store.resourceId([
      store.stringId(service),
      store.stringId(resource.schemaUrl ?? ''),
      set.id,
    ]);
    let points = 0;
    for (const sm of rm.scopeMetrics) {
      // Not kept in the table, but refused as the OTLP formats refuse it.
      checkDropped(
        'a dropped attributes count',
        (sm.scope as { droppedAttributesCount?: number }).droppedAttributesCount,
      );
      const scope = [sm.scope.name, sm.scope.version ?? '', sm.scope.schemaUrl ?? ''].map((s) =>
        store.stringId(s),
      );
      for (const metric of sm.metrics) {
        const metricId = this.#metric(store, scope, metric);
        points += this.#points(store, resourceId, metricId, metric, tally);
      }
    }
    return points;
  }

  #metric(store: ColumnStore, scope: number[], metric: MetricData): number {
    const d = metric.descriptor;
    const type = TYPE_OF[metric.dataPointType];
    const sum = metric.dataPointType === DataPointType.SUM;
    return store.metricId([
      ...scope,
      store.stringId(d.name),
      store.stringId(d.description),
      store.stringId(d.unit),
      type,
      type === TYPE.GAUGE ? 0 : otlpTemporality(metric.aggregationTemporality),
      sum && metric.isMonotonic ? 1 : 0,
    ]);
  }

  /**
   * Appends a metric's points. One loop per kind of point: a loop that took every kind's branch
   * was compiled again for each kind it met (on-stack for the counters, again for the
   * histograms), four TurboFan compiles of it in a 10 s service. Each reads its count of points
   * before its loop: V8 optimizes the loop of the first export while it runs, and a read after
   * the loop, never run then, gave that code up at the end of every later export.
   */
  #points(
    store: ColumnStore,
    resourceId: number,
    metricId: number,
    metric: MetricData,
    tally: ExportTally | undefined,
  ): number {
    switch (metric.dataPointType) {
      case DataPointType.SUM:
      case DataPointType.GAUGE:
        return this.#numbers(store, resourceId, metricId, metric, tally);
      case DataPointType.HISTOGRAM:
        return this.#histograms(store, resourceId, metricId, metric, tally);
      case DataPointType.EXPONENTIAL_HISTOGRAM:
        return this.#exponentials(store, resourceId, metricId, metric, tally);
      default: {
        // A kind this version does not know: its rows, without values.
        const points = (metric as { dataPoints: DataPoint<unknown>[] }).dataPoints;
        for (const p of points) this.#row(store, resourceId, metricId, p, tally);
        return points.length;
      }
    }
  }

  /** A point's row, its values not set yet. */
  #row(
    store: ColumnStore,
    resourceId: number,
    metricId: number,
    p: DataPoint<unknown>,
    tally: ExportTally | undefined,
  ): number {
    if (tally?.times === true) noteTime(tally, p.endTime);
    return store.addRow(
      resourceId,
      metricId,
      this.#set(store, p.attributes).id,
      micros(p.endTime),
      micros(p.startTime),
      0,
    );
  }

  #numbers(
    store: ColumnStore,
    resourceId: number,
    metricId: number,
    metric: MetricData,
    tally: ExportTally | undefined,
  ): number {
    const points = metric.dataPoints as DataPoint<number>[];
    const n = points.length;
    const int = metric.descriptor.valueType === ValueType.INT;
    for (let from = 0; from < n; from += SLICE)
      this.#numberSlice(
        store,
        resourceId,
        metricId,
        points,
        from,
        Math.min(n, from + SLICE),
        int,
        tally,
      );
    return n;
  }

  #numberSlice(
    store: ColumnStore,
    resourceId: number,
    metricId: number,
    points: DataPoint<number>[],
    from: number,
    to: number,
    int: boolean,
    tally: ExportTally | undefined,
  ): void {
    for (let i = from; i < to; i++) {
      const p = points[i] as DataPoint<number>;
      const r = this.#row(store, resourceId, metricId, p, tally);
      const v = p.value;
      // An INT point beyond int64 (or not finite) is written as the double it is. One that is
      // an integer has the integer's Value (+0 for -0, as OTLP's asInt and compaction have it).
      if (int && isInt64(v)) store.setValue(r, v + 0, v);
      else store.setValue(r, v, undefined);
    }
  }

  #histograms(
    store: ColumnStore,
    resourceId: number,
    metricId: number,
    metric: MetricData,
    tally: ExportTally | undefined,
  ): number {
    const points = metric.dataPoints as DataPoint<Histogram>[];
    const n = points.length;
    for (let from = 0; from < n; from += SLICE)
      this.#histogramSlice(
        store,
        resourceId,
        metricId,
        points,
        from,
        Math.min(n, from + SLICE),
        tally,
      );
    return n;
  }

  #histogramSlice(
    store: ColumnStore,
    resourceId: number,
    metricId: number,
    points: DataPoint<Histogram>[],
    from: number,
    to: number,
    tally: ExportTally | undefined,
  ): void {
    for (let i = from; i < to; i++) {
      const p = points[i] as DataPoint<Histogram>;
      const r = this.#row(store, resourceId, metricId, p, tally);
      const h = p.value;
      checkCount('a histogram count', h.count);
      store.setDistribution(r, h.count, h.sum, h.min, h.max);
      store.setBounds(r, this.#boundsId(store, h.buckets.boundaries));
      appendCounts(store, r, LISTS.BUCKETS, h.buckets.counts);
    }
  }

  #exponentials(
    store: ColumnStore,
    resourceId: number,
    metricId: number,
    metric: MetricData,
    tally: ExportTally | undefined,
  ): number {
    const points = metric.dataPoints as DataPoint<ExponentialHistogram>[];
    const n = points.length;
    for (const p of points) {
      const r = this.#row(store, resourceId, metricId, p, tally);
      const h = p.value;
      checkCount('a histogram count', h.count);
      store.setDistribution(r, h.count, h.sum, h.min, h.max);
      checkCount('a zero count', h.zeroCount);
      checkInt32('a scale', h.scale);
      checkInt32('a bucket offset', h.positive.offset);
      checkInt32('a bucket offset', h.negative.offset);
      store.setExponential(r, h.scale, h.zeroCount, h.positive.offset, h.negative.offset);
      appendCounts(store, r, LISTS.POSITIVE, h.positive.bucketCounts);
      appendCounts(store, r, LISTS.NEGATIVE, h.negative.bucketCounts);
    }
    return n;
  }

  /** The attribute set of `attrs` in this batch. */
  #set(store: ColumnStore, attrs: Attributes): InternedSet {
    let entry = this.#sets.get(attrs);
    if (entry === undefined) {
      const keys = Object.keys(attrs);
      const texts = keys.map((key) => jsValueText(attrs[key]));
      entry = { epoch: 0, id: 0, keys, texts };
      this.#sets.set(attrs, keys, entry);
      store.holdExtraBytes(CACHE_ENTRY_BYTES + keys.length * MAP_ENTRY_BYTES);
    }
    if (entry.epoch !== store.epoch) {
      entry.id = store.setId(entry.keys, entry.texts);
      entry.epoch = store.epoch;
    }
    return entry;
  }

  /** The bound list of `bounds` in this batch (points of one histogram share the array). */
  #boundsId(store: ColumnStore, bounds: readonly number[]): number {
    let entry = this.#bounds.get(bounds);
    if (entry === undefined || !sameNumbers(entry.values, bounds)) {
      entry = { epoch: 0, id: 0, values: [...bounds] };
      this.#bounds.set(bounds, entry);
      store.holdExtraBytes(CACHE_ENTRY_BYTES + 8 * bounds.length);
    }
    if (entry.epoch !== store.epoch) {
      entry.id = store.boundsId(bounds);
      entry.epoch = store.epoch;
    }
    return entry.id;
  }
}

function appendCounts(store: ColumnStore, r: number, which: number, counts: number[]): void {
  checkCounts('a bucket count', counts);
  const at = store.reserveCounts(r, which, counts.length);
  for (let i = 0; i < counts.length; i++) store.setCount(at + i, counts[i] as number);
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
