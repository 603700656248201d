import { DataPointType, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { OtlpObject } from '../../../encoding/otlp-proto-decode.js';
import type { ColumnBuilders } from '../../signal.js';
import { appendRequest } from './append-otlp.js';
import { SdkAppender } from './append-sdk.js';
import { ColumnStore } from './column-store.js';
import type { SealedColumns } from './sealed.js';

export type { SealedColumns } from './sealed.js';

/**
 * The open Parquet batch as columns: typed arrays, per-batch string dictionaries and attribute
 * sets interned once per batch (sealed.js describes the layout). Appending costs the main thread
 * about what writing OTLP/JSON does; seal() hands the arrays over for a transfer to the worker,
 * which sorts and encodes them (encode.js).
 */
export class MetricColumnBuilders implements ColumnBuilders<ResourceMetrics> {
  #store = new ColumnStore();
  readonly #sdk = new SdkAppender();

  /** Appends every data point of the SDK's ResourceMetrics, all or none. */
  append(rm: ResourceMetrics): void {
    this.appendResourceMetrics(rm);
  }

  growth(rm: ResourceMetrics, alone: boolean): number {
    let points = 0;
    let counts = 0;
    for (const sm of rm.scopeMetrics) {
      for (const m of sm.metrics) {
        points += m.dataPoints.length;
        if (m.dataPointType === DataPointType.HISTOGRAM) {
          for (const p of m.dataPoints) counts += p.value.buckets.counts.length;
        } else if (m.dataPointType === DataPointType.EXPONENTIAL_HISTOGRAM) {
          for (const p of m.dataPoints)
            counts += p.value.positive.bucketCounts.length + p.value.negative.bucketCounts.length;
        }
      }
    }
    return alone ? MetricColumnBuilders.bytesAlone(points, counts) : this.growthFor(points, counts);
  }

  /** Appends every data point of the SDK's ResourceMetrics; returns how many. */
  appendResourceMetrics(rm: ResourceMetrics): number {
    return this.#atomically(() => this.#sdk.append(this.#store, rm));
  }

  /**
   * Appends every data point of a decoded ExportMetricsServiceRequest in this package's OTLP/JSON
   * object shape (what decodeJsonRequest, decodeProtoRequest and parquetToRequest return);
   * returns how many.
   */
  appendRequest(request: OtlpObject): number {
    return this.#atomically(() => appendRequest(this.#store, request));
  }

  /** Data points appended since the last seal. */
  get rows(): number {
    return this.#store.rows;
  }

  /** Memory the builders hold now: typed-array capacities, dictionaries, cache entries (estimated). */
  get bytes(): number {
    return this.#store.bytes;
  }

  /**
   * Bytes appending `rows` data points with `counts` bucket counts in all makes the arrays grow
   * by: exact (they double as they fill). Strings and attribute sets seen for the first time in
   * this batch come on top; `bytes` counts them once appended.
   */
  growthFor(rows: number, counts: number): number {
    return this.#store.growthFor(rows, counts);
  }

  /** What empty builders take with `rows` data points and `counts` bucket counts appended. */
  static bytesAlone(rows: number, counts: number): number {
    const store = new ColumnStore();
    return store.bytes + store.growthFor(rows, counts);
  }

  /** The columns, with the ArrayBuffers to transfer; the builders start empty again. */
  seal(): SealedColumns {
    const sealed = this.#store.seal();
    this.#store = new ColumnStore();
    return sealed;
  }

  /** All of an append or none of it: rows of a call that threw are taken back. */
  #atomically(append: () => number): number {
    const mark = this.#store.mark();
    try {
      return append();
    } catch (error) {
      this.#store.rollback(mark);
      throw error;
    }
  }
}
