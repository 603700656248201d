import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { OtlpObject } from '../../../encoding/otlp-proto-decode.js';
import type { ExportTally } from '../../../encoding/records.js';
import { StoreBuilders } from '../../store-builders.js';
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
export class MetricColumnBuilders extends StoreBuilders<
  ResourceMetrics,
  StoreMark,
  SealedColumns,
  ColumnStore
> {
  readonly #sdk = new SdkAppender();

  constructor() {
    super(() => new ColumnStore(), EMPTY);
  }

  /** Appends every data point of the SDK's ResourceMetrics, all or none, counting them. */
  append(rm: ResourceMetrics, tally: ExportTally): void {
    tally.items += this.atomically((store) => this.#sdk.append(store, rm, tally));
  }

  /** Appends every data point of the SDK's ResourceMetrics; returns how many. */
  appendResourceMetrics(rm: ResourceMetrics): number {
    return this.atomically((store) => this.#sdk.append(store, rm));
  }

  /**
   * Appends every data point of a decoded ExportMetricsServiceRequest in this package's OTLP/JSON
   * object shape (what decodeJsonRequest, decodeProtoRequest and parquetToRequest return);
   * returns how many.
   */
  appendRequest(request: OtlpObject): number {
    return this.atomically((store) => appendRequest(store, request));
  }
}

/** Where an empty batch ends: a rollback to it drops the store. */
const EMPTY: StoreMark = { rows: 0, counts: 0, capacity: 0, countSlots: 0 };
