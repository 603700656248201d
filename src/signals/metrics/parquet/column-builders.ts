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
  /**
   * The batch's columns; none while the batch is empty (before the first append after a seal),
   * so that an empty batch holds no memory: an idle or shut-down exporter's bufferedBytes is 0,
   * not the first arrays' capacity.
   */
  #store: ColumnStore | undefined;
  readonly #sdk = new SdkAppender();

  /** Appends every data point of the SDK's ResourceMetrics, all or none, counting them. */
  append(rm: ResourceMetrics, tally: ExportTally): void {
    tally.items += this.#atomically((store) => this.#sdk.append(store, rm, tally));
  }

  mark(): StoreMark {
    return this.#store?.mark() ?? EMPTY;
  }

  rollback(mark: unknown): void {
    const m = mark as StoreMark;
    // Back to empty: no store, so that nothing of what was taken back stays in memory.
    if (m.rows === 0) this.#store = undefined;
    else this.#store?.rollback(m);
  }

  /** Appends every data point of the SDK's ResourceMetrics; returns how many. */
  appendResourceMetrics(rm: ResourceMetrics): number {
    return this.#atomically((store) => this.#sdk.append(store, rm));
  }

  /**
   * Appends every data point of a decoded ExportMetricsServiceRequest in this package's OTLP/JSON
   * object shape (what decodeJsonRequest, decodeProtoRequest and parquetToRequest return);
   * returns how many.
   */
  appendRequest(request: OtlpObject): number {
    return this.#atomically((store) => appendRequest(store, request));
  }

  /** Data points appended since the last seal. */
  get rows(): number {
    return this.#store?.rows ?? 0;
  }

  /** Memory the builders hold now: typed-array capacities, dictionaries, cache entries (estimated). */
  get bytes(): number {
    return this.#store?.bytes ?? 0;
  }

  /** The columns, with the ArrayBuffers to transfer; the builders start empty again. */
  seal(): SealedColumns {
    const sealed = (this.#store ?? new ColumnStore()).seal();
    this.#store = undefined;
    return sealed;
  }

  /** All of an append or none of it: rows of a call that threw are taken back. */
  #atomically(append: (store: ColumnStore) => number): number {
    this.#store ??= new ColumnStore();
    const mark = this.#store.mark();
    try {
      return append(this.#store);
    } catch (error) {
      this.rollback(mark);
      throw error;
    }
  }
}

/** Where an empty batch ends: a rollback to it drops the store. */
const EMPTY: StoreMark = { rows: 0, counts: 0, capacity: 0, countSlots: 0 };
