import { DataPointType, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { ColumnBuilders } from '../parquet/column-builders.js';
import { BatchKey, type KeyInputs, type OpenBatch, type SealedContents } from './open-batch.js';

/**
 * The open batch of a Parquet format: every data point of an export goes into column builders
 * as it arrives (typed arrays, per-batch dictionaries, attribute sets interned once), so the
 * worker gets columns to encode, not records to parse. Its bytes are what the builders really
 * hold, capacity included; sealing hands the arrays over for a transfer to the worker.
 * Loaded only for a Parquet format (src/exporter.ts imports it on demand).
 */
export class ColumnBatch implements OpenBatch<ResourceMetrics> {
  #builders = new ColumnBuilders();
  readonly #key = new BatchKey();

  get isEmpty(): boolean {
    return this.#builders.rows === 0;
  }

  get bytes(): number {
    return this.#builders.bytes;
  }

  keyDiffers(inputs: KeyInputs): boolean {
    return !this.isEmpty && inputs.group !== this.#key.group;
  }

  overflows(rm: ResourceMetrics, points: number, maxBytes: number): boolean {
    return !this.isEmpty && this.bytes + this.growth(rm, points, false) > maxBytes;
  }

  /**
   * The arrays' growth, exact; strings and attribute sets new to the batch come on top, and the
   * budget counts them once appended (Admission makes room for them then).
   */
  growth(rm: ResourceMetrics, points: number, alone: boolean): number {
    const counts = bucketCounts(rm);
    return alone
      ? ColumnBuilders.bytesAlone(points, counts)
      : this.#builders.growthFor(points, counts);
  }

  /** All of the export or none of it: the builders take back the rows of an append that threw. */
  append(rm: ResourceMetrics, _points: number, inputs: KeyInputs): void {
    const first = this.isEmpty;
    this.#builders.appendResourceMetrics(rm);
    this.#key.add(inputs, first);
  }

  take(): SealedContents {
    const rawBytes = this.bytes;
    const points = this.#builders.rows;
    return { contents: { columns: this.#builders.seal() }, rawBytes, points, ...this.#key.take() };
  }
}

/** Bucket counts of an export's histogram points, which the builders keep in one array. */
function bucketCounts(rm: ResourceMetrics): number {
  let n = 0;
  for (const sm of rm.scopeMetrics) {
    for (const m of sm.metrics) {
      if (m.dataPointType === DataPointType.HISTOGRAM) {
        for (const p of m.dataPoints) n += p.value.buckets.counts.length;
      } else if (m.dataPointType === DataPointType.EXPONENTIAL_HISTOGRAM) {
        for (const p of m.dataPoints)
          n += p.value.positive.bucketCounts.length + p.value.negative.bucketCounts.length;
      }
    }
  }
  return n;
}
