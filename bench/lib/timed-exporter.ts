/**
 * Wraps a PushMetricExporter and prints a JSON line when each forceFlush() / shutdown() starts
 * and settles, so a parent sees how far a child got even when it has to kill it at the cap.
 */
import type { ExportResult } from '@opentelemetry/core';
import type {
  AggregationTemporality,
  InstrumentType,
  PushMetricExporter,
  ResourceMetrics,
} from '@opentelemetry/sdk-metrics';

export interface StepLine {
  step: 'forceFlush' | 'shutdown';
  event: 'start' | 'end';
  /** performance.now() of the child. */
  t: number;
}

export class TimedExporter implements PushMetricExporter {
  readonly #inner: PushMetricExporter;
  exports = 0;

  constructor(inner: PushMetricExporter) {
    this.#inner = inner;
    if (inner.selectAggregationTemporality !== undefined) {
      const select = inner.selectAggregationTemporality.bind(inner);
      this.selectAggregationTemporality = (type: InstrumentType): AggregationTemporality =>
        select(type);
    }
  }

  selectAggregationTemporality?: (type: InstrumentType) => AggregationTemporality;

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.exports++;
    this.#inner.export(metrics, resultCallback);
  }

  forceFlush(): Promise<void> {
    return this.#timed('forceFlush', () => this.#inner.forceFlush());
  }

  shutdown(): Promise<void> {
    return this.#timed('shutdown', () => this.#inner.shutdown());
  }

  async #timed(step: StepLine['step'], run: () => Promise<void>): Promise<void> {
    print({ step, event: 'start', t: performance.now() });
    try {
      await run();
    } finally {
      print({ step, event: 'end', t: performance.now() });
    }
  }
}

function print(line: StepLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
