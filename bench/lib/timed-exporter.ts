/**
 * Wraps a PushMetricExporter (or a span / log record exporter: TimedSignalExporter) and prints a
 * JSON line when each forceFlush() / shutdown() starts and settles, so a parent sees how far a
 * child got even when it has to kill it at the cap.
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
  /** Whose step, in a child with more than one exporter (metrics, spans, logs). */
  signal?: string;
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

  #timed(step: StepLine['step'], run: () => Promise<void>): Promise<void> {
    return timed(step, undefined, run);
  }
}

/** What a SpanExporter and a LogRecordExporter have in common. */
interface ItemExporter<T> {
  export(items: T[], resultCallback: (result: ExportResult) => void): void;
  forceFlush?(): Promise<void>;
  shutdown(): Promise<void>;
}

/** TimedExporter for a span or log record exporter: its lines name `signal`. */
export class TimedSignalExporter<T> implements ItemExporter<T> {
  readonly #inner: ItemExporter<T>;
  readonly #signal: string;
  exports = 0;

  constructor(signal: string, inner: ItemExporter<T>) {
    this.#signal = signal;
    this.#inner = inner;
  }

  export(items: T[], resultCallback: (result: ExportResult) => void): void {
    this.exports++;
    this.#inner.export(items, resultCallback);
  }

  forceFlush(): Promise<void> {
    return timed('forceFlush', this.#signal, async () => this.#inner.forceFlush?.());
  }

  shutdown(): Promise<void> {
    return timed('shutdown', this.#signal, () => this.#inner.shutdown());
  }
}

async function timed(
  step: StepLine['step'],
  signal: string | undefined,
  run: () => Promise<void>,
): Promise<void> {
  const who = signal === undefined ? {} : { signal };
  print({ step, event: 'start', t: performance.now(), ...who });
  try {
    await run();
  } finally {
    print({ step, event: 'end', t: performance.now(), ...who });
  }
}

function print(line: StepLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
