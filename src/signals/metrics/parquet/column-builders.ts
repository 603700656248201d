import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { OtlpObject } from '../../../encoding/otlp-proto-decode.js';
import type { ExportTally } from '../../../encoding/records.js';
import type { ColumnBuilders } from '../../signal.js';
import { appendRequest } from './append-otlp.js';
import { SdkAppender } from './append-sdk.js';
import { ColumnStore, type StoreMark } from './column-store.js';
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

  /** Appends every data point of the SDK's ResourceMetrics, all or none, counting them. */
  append(rm: ResourceMetrics, tally: ExportTally): void {
    tally.items += this.#atomically(() => this.#sdk.append(this.#store, rm, tally));
  }

  mark(): StoreMark {
    return this.#store.mark();
  }

  rollback(mark: unknown): void {
    const m = mark as StoreMark;
    // Back to empty: a fresh store, so that nothing of what was taken back stays in memory.
    if (m.rows === 0) this.#store = new ColumnStore();
    else this.#store.rollback(m);
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
