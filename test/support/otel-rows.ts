import { type Attributes, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { S3LogRecordExporter, S3SpanExporter } from '../../src/index.js';

/**
 * Spans and log records as the SDK hands them over, spelled here as rows of the ClickHouse
 * exporter's otel_traces and otel_logs tables: hex ids, kinds and status codes as words, attribute
 * values as text, times in nanoseconds. The expected rows of the tests that read the stored
 * Parquet files back, spelled from what the test made, never from the code under test.
 */

/** Nanoseconds of an HrTime, exactly. */
export const nanos = ([s, n]: readonly [number, number]) => BigInt(s) * 1_000_000_000n + BigInt(n);
/** The words of an enum value: SpanKind.SERVER → 'Server'. */
export const word = (name: string) => name.charAt(0) + name.slice(1).toLowerCase();

/**
 * An attribute value as text, for the values the tests record: strings as they are, numbers in
 * decimal, booleans as words, arrays as JSON, null as null.
 */
export const valueText = (v: unknown): string | null =>
  v === null
    ? null
    : Array.isArray(v)
      ? JSON.stringify(v)
      : typeof v === 'number' && Number.isInteger(v)
        ? BigInt(v).toString() // an int64 in decimal, every digit (String(2 ** 60) rounds)
        : String(v);

/** A map column's entries as [key, value] pairs. */
export type Texts = [string, string | null][];
export const texts = (attrs: Attributes | undefined): Texts =>
  Object.entries(attrs ?? {}).map(([k, v]) => [k, valueText(v)]);

/** A row of otel_traces; its maps as `M` ([key, value] pairs unless told). */
export interface SpanRow<M = Texts> {
  Timestamp: bigint;
  TraceId: string;
  SpanId: string;
  ParentSpanId: string;
  TraceState: string;
  SpanName: string;
  SpanKind: string;
  ServiceName: string;
  ResourceAttributes: M;
  ScopeName: string;
  ScopeVersion: string;
  SpanAttributes: M;
  Duration: bigint;
  StatusCode: string;
  StatusMessage: string;
  'Events.Timestamp': bigint[];
  'Events.Name': string[];
  'Events.Attributes': M[];
  'Links.TraceId': string[];
  'Links.SpanId': string[];
  'Links.TraceState': string[];
  'Links.Attributes': M[];
}

/** The otel_traces row of `s`, its maps spelled by `map` ([key, value] pairs unless told). */
export function spanRow(s: ReadableSpan): SpanRow;
export function spanRow<M>(s: ReadableSpan, map: (attrs: Attributes | undefined) => M): SpanRow<M>;
export function spanRow(
  s: ReadableSpan,
  map: (attrs: Attributes | undefined) => unknown = texts,
): SpanRow<unknown> {
  const c = s.spanContext();
  return {
    Timestamp: nanos(s.startTime),
    TraceId: c.traceId,
    SpanId: c.spanId,
    ParentSpanId: s.parentSpanContext?.spanId ?? '',
    TraceState: c.traceState?.serialize() ?? '',
    SpanName: s.name,
    SpanKind: word(SpanKind[s.kind]),
    ServiceName: String(s.resource.attributes['service.name']),
    ResourceAttributes: map(s.resource.attributes as Attributes),
    ScopeName: s.instrumentationScope.name,
    ScopeVersion: s.instrumentationScope.version ?? '',
    SpanAttributes: map(s.attributes),
    Duration: nanos(s.endTime) - nanos(s.startTime),
    StatusCode: word(SpanStatusCode[s.status.code]),
    StatusMessage: s.status.message ?? '',
    'Events.Timestamp': s.events.map((e) => nanos(e.time)),
    'Events.Name': s.events.map((e) => e.name),
    'Events.Attributes': s.events.map((e) => map(e.attributes)),
    'Links.TraceId': s.links.map((l) => l.context.traceId),
    'Links.SpanId': s.links.map((l) => l.context.spanId),
    'Links.TraceState': s.links.map((l) => l.context.traceState?.serialize() ?? ''),
    'Links.Attributes': s.links.map((l) => map(l.attributes)),
  };
}

/** A row of otel_logs. */
export interface LogRow {
  Timestamp: bigint;
  TraceId: string;
  SpanId: string;
  TraceFlags: number;
  SeverityText: string;
  SeverityNumber: number;
  ServiceName: string;
  Body: string;
  ResourceSchemaUrl: string;
  ResourceAttributes: Texts;
  ScopeSchemaUrl: string;
  ScopeName: string;
  ScopeVersion: string;
  ScopeAttributes: Texts;
  LogAttributes: Texts;
  EventName: string;
}

/** The otel_logs row of `r`. */
export function logRow(r: ReadableLogRecord): LogRow {
  const scope = r.instrumentationScope as typeof r.instrumentationScope & {
    attributes?: Attributes;
  };
  return {
    Timestamp: nanos(r.hrTime),
    TraceId: r.spanContext?.traceId ?? '',
    SpanId: r.spanContext?.spanId ?? '',
    TraceFlags: r.spanContext?.traceFlags ?? 0,
    SeverityText: r.severityText ?? '',
    SeverityNumber: r.severityNumber ?? 0,
    ServiceName: String(r.resource.attributes['service.name']),
    Body: r.body === undefined ? '' : String(valueText(r.body)),
    ResourceSchemaUrl: r.resource.schemaUrl ?? '',
    ResourceAttributes: texts(r.resource.attributes as Attributes),
    ScopeSchemaUrl: scope.schemaUrl ?? '',
    ScopeName: scope.name,
    ScopeVersion: scope.version ?? '',
    ScopeAttributes: texts(scope.attributes),
    LogAttributes: texts(r.attributes as Attributes),
    EventName: r.eventName ?? '',
  };
}

/**
 * Between a processor and the S3 exporter: keeps what it was handed, spelled at once (the
 * expected rows). Its shutdown shuts the S3 exporter down too, unless `keepInner` (a test whose
 * providers come and go over one exporter).
 */
export class Recording<Item, Row> {
  readonly rows: Row[] = [];
  constructor(
    private readonly inner: S3SpanExporter | S3LogRecordExporter,
    private readonly spell: (item: Item) => Row,
    private readonly keepInner = false,
  ) {}
  export(items: Item[], done: (result: ExportResult) => void): void {
    this.rows.push(...items.map((item) => this.spell(item)));
    this.inner.export(items as never, done);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  async shutdown(): Promise<void> {
    if (!this.keepInner) await this.inner.shutdown();
  }
}
