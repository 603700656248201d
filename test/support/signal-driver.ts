import { join } from 'node:path';
import type { HrTime } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { SignalExporter } from '../../src/exporter/signal-exporter.js';
import {
  S3LogRecordExporter,
  S3MetricExporter,
  type S3MetricExporterOptions,
  S3SpanExporter,
} from '../../src/index.js';
import type { SignalName } from '../../src/layout/formats.js';
import { handBuiltSpan } from './readable-span.js';
import { syntheticMetrics } from './service.js';

/**
 * One signal as a guarantee test needs it: an exporter of that signal, and exports of N items
 * (data points, spans or log records) that each carry the attribute `tag` = a number, so that
 * the tags read back from stored bodies (tagsIn, ScriptedS3.storedTags) say which exports were
 * stored, and how often. A test written against a driver runs for every signal (SIGNALS).
 */
export interface SignalDriver<E extends AnyExporter = AnyExporter> {
  readonly signal: SignalName;
  /** An exporter of this signal with `options`. */
  exporter(options: S3MetricExporterOptions): E;
  /** One export of `count` items, each tagged `tag` (one resource, one scope). */
  items(count: number, tag: number): unknown;
}

/** An exporter of any signal: S3MetricExporter, S3SpanExporter or S3LogRecordExporter. */
export type AnyExporter = SignalExporter<never>;

const RESOURCE = resourceFromAttributes({ 'service.name': 'synthetic' });
const SCOPE = { name: 'synthetic' };
const TIME: HrTime = [1_796_000_000, 123_456_789];
const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');

/** `count` spans tagged `tag`, as the SDK hands them over (built by hand: no provider). */
export function syntheticSpans(count: number, tag: number): ReadableSpan[] {
  return Array.from({ length: count }, (_, i) => {
    const context = {
      traceId: hex(tag, 16) + hex(i + 1, 16),
      spanId: hex(i + 1, 16),
      traceFlags: 1,
    };
    return handBuiltSpan({
      name: 'synthetic',
      spanContext: () => context,
      startTime: TIME,
      endTime: TIME,
      attributes: { tag, series: i },
      resource: RESOURCE,
      instrumentationScope: SCOPE,
    });
  });
}

/** `count` log records tagged `tag`, as the SDK hands them over (built by hand: no provider). */
export function syntheticLogRecords(count: number, tag: number): ReadableLogRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const record = {
      hrTime: TIME,
      hrTimeObserved: TIME,
      severityNumber: 9,
      severityText: 'INFO',
      body: 'synthetic',
      attributes: { tag, series: i },
      droppedAttributesCount: 0,
      resource: RESOURCE,
      instrumentationScope: SCOPE,
    };
    return record as unknown as ReadableLogRecord;
  });
}

export const METRICS: SignalDriver<S3MetricExporter> = {
  signal: 'metrics',
  exporter: (options) => new S3MetricExporter(options),
  items: syntheticMetrics,
};

export const TRACES: SignalDriver<S3SpanExporter> = {
  signal: 'traces',
  exporter: (options) => new S3SpanExporter(options),
  items: syntheticSpans,
};

export const LOGS: SignalDriver<S3LogRecordExporter> = {
  signal: 'logs',
  exporter: (options) => new S3LogRecordExporter(options),
  items: syntheticLogRecords,
};

/** Every signal, for `describe.each(SIGNALS)('$signal: ...', (driver) => ...)`. */
export const SIGNALS: readonly SignalDriver[] = [METRICS, TRACES, LOGS];

/** The driver of `name` (e.g. a child process's SIGNAL variable; metrics when unset). */
export function driverOf(name: string | undefined): SignalDriver {
  const driver = SIGNALS.find((d) => d.signal === (name ?? 'metrics'));
  if (driver === undefined) throw new Error(`no signal ${JSON.stringify(name)}`);
  return driver;
}

/** Exports driver.items(count, tag) through `exporter` and resolves with the export's result. */
export function exportTagged(
  driver: SignalDriver,
  exporter: AnyExporter,
  count: number,
  tag: number,
): Promise<ExportResult> {
  const item = driver.items(count, tag) as never;
  return new Promise((resolve) => exporter.export(item, resolve));
}

/**
 * Where `driver`'s exporter keeps its spool when given `spoolDir`: the directory itself for
 * metrics, a directory named after the signal in it for the others (docs/durability.md).
 */
export function signalSpoolDir(spoolDir: string, driver: SignalDriver): string {
  return driver.signal === 'metrics' ? spoolDir : join(spoolDir, driver.signal);
}

/**
 * Every item (data point, span, log record) of a decoded request (OTLP/JSON shape) that carries
 * the attributes of driver.items(), as `tag/series`, in the order they are stored.
 */
export function taggedItems(request: unknown): string[] {
  const found: string[] = [];
  const intOf = (attribute: { value?: { intValue?: unknown } } | undefined) =>
    Number(attribute?.value?.intValue);
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const v of value) walk(v);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const attributes = (value as { attributes?: unknown }).attributes;
    if (Array.isArray(attributes)) {
      const byKey = new Map(
        attributes.map((a: { key: string; value?: { intValue?: unknown } }) => [a.key, a]),
      );
      if (byKey.has('tag')) {
        found.push(`${intOf(byKey.get('tag'))}/${intOf(byKey.get('series'))}`);
      }
    }
    for (const v of Object.values(value)) walk(v);
  };
  walk(request);
  return found;
}

/** The `tag/series` of every item driver.items(count, tag) makes, for each tag of `tags`. */
export function expectedItems(tags: Iterable<number>, count: number): string[] {
  return [...tags].flatMap((tag) => Array.from({ length: count }, (_, i) => `${tag}/${i}`));
}
