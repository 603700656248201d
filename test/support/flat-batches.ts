import {
  type Attributes,
  context,
  type HrTime,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchLogRecordProcessor,
  LoggerProvider,
  type ReadableLogRecord,
} from '@opentelemetry/sdk-logs';
import { BatchSpanProcessor, type ReadableSpan, TracerProvider } from '@opentelemetry/sdk-trace';
import { S3LogRecordExporter, S3SpanExporter } from '../../src/index.js';
import { duckdbRows } from './duckdb.js';
import { prng } from './prng.js';

/**
 * Spans and log records for the compaction tests of those signals, made by the SDK (a
 * TracerProvider's BatchSpanProcessor, a LoggerProvider's BatchLogRecordProcessor) and exported
 * by the real exporters as Parquet with partitionTime 'data', one object a batch, all in one
 * hour. What the processors hand over is spelled at once (the ClickHouse exporter's spelling:
 * hex ids, kinds and status codes as words, attribute values as text, times in microseconds as
 * DuckDB reads them) into one text a row: the expected rows, never read from the files.
 */

/** One object's worth: `items` spans (in traces of 3) or log records of `service`, at `minute`. */
export interface FlatBatch {
  service: string;
  minute: number;
  items: number;
  seed: number;
}

/** Holds the batch in the processor until the test's flush: one export a batch. */
const ONE_BATCH = { scheduledDelayMillis: 60_000, maxExportBatchSize: 1_000, maxQueueSize: 2_000 };

/** Between a processor and the S3 exporter: keeps what it was handed, spelled. */
class Recording<Item> {
  constructor(
    private readonly inner: S3SpanExporter | S3LogRecordExporter,
    private readonly spell: (item: Item) => string,
    readonly rows: string[],
  ) {}
  export(items: Item[], done: (result: ExportResult) => void): void {
    this.rows.push(...items.map(this.spell));
    this.inner.export(items as never, done);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  /** The providers of each batch shut down; the S3 exporter lives on. */
  async shutdown(): Promise<void> {}
}

const nanos = ([s, n]: readonly [number, number]) => BigInt(s) * 1_000_000_000n + BigInt(n);
const micros = (t: readonly [number, number]) => String(nanos(t) / 1000n);
const word = (name: string) => name.charAt(0) + name.slice(1).toLowerCase();
/** Attribute values as text, for the values these tests record. */
const valueText = (v: unknown): string =>
  Array.isArray(v)
    ? JSON.stringify(v)
    : typeof v === 'number' && Number.isInteger(v)
      ? BigInt(v).toString()
      : String(v);
const pairs = (attrs: Attributes | undefined): [string, string][] =>
  Object.entries(attrs ?? {}).map(([k, v]) => [k, valueText(v)]);

function spellSpan(s: ReadableSpan): string {
  const c = s.spanContext();
  return JSON.stringify([
    String(s.resource.attributes['service.name']),
    c.traceId,
    c.spanId,
    s.parentSpanContext?.spanId ?? '',
    micros(s.startTime),
    String(nanos(s.endTime) - nanos(s.startTime)),
    s.name,
    word(SpanKind[s.kind]),
    word(SpanStatusCode[s.status.code]),
    s.status.message ?? '',
    pairs(s.resource.attributes as Attributes),
    s.instrumentationScope.name,
    s.instrumentationScope.version ?? '',
    pairs(s.attributes),
    s.events.map((e) => [micros(e.time), e.name, pairs(e.attributes)]),
    s.links.map((l) => [l.context.traceId, l.context.spanId, pairs(l.attributes)]),
  ]);
}

function spellLog(r: ReadableLogRecord): string {
  return JSON.stringify([
    String(r.resource.attributes['service.name']),
    r.spanContext?.traceId ?? '',
    r.spanContext?.spanId ?? '',
    micros(r.hrTime),
    r.severityText ?? '',
    r.severityNumber ?? 0,
    r.body === undefined ? '' : valueText(r.body),
    pairs(r.resource.attributes as Attributes),
    r.instrumentationScope.name,
    pairs(r.attributes as Attributes),
    r.eventName ?? '',
  ]);
}

/** DuckDB's rows of `glob`, spelled as spellSpan spells what the SDK handed over, in file order. */
export async function duckdbSpanRows(glob: string): Promise<string[]> {
  const rows = await duckdbRows(
    `SELECT ServiceName, TraceId, SpanId, ParentSpanId, epoch_us("Timestamp")::VARCHAR AS t,
       Duration::VARCHAR AS d, SpanName, SpanKind, StatusCode, StatusMessage,
       list_transform(map_entries(ResourceAttributes), e -> [e.key, e.value]) AS ra,
       ScopeName, ScopeVersion,
       list_transform(map_entries(SpanAttributes), e -> [e.key, e.value]) AS sa,
       list_transform(range(1, len("Events.Name") + 1), i -> json_array(epoch_us("Events.Timestamp"[i])::VARCHAR,
         "Events.Name"[i],
         list_transform(map_entries("Events.Attributes"[i]), e -> [e.key, e.value]))) AS ev,
       list_transform(range(1, len("Links.TraceId") + 1), i -> json_array("Links.TraceId"[i], "Links.SpanId"[i],
         list_transform(map_entries("Links.Attributes"[i]), e -> [e.key, e.value]))) AS li
     FROM read_parquet('${glob}', hive_partitioning = false)`,
  );
  // Events and links come as a JSON text each (their parts are of several types).
  const parsed = (list: unknown) => (list as string[]).map((e) => JSON.parse(e) as unknown);
  return rows.map(({ ev, li, ...rest }) =>
    JSON.stringify([...Object.values(rest), parsed(ev), parsed(li)]),
  );
}

/** DuckDB's rows of `glob`, spelled as spellLog spells what the SDK handed over, in file order. */
export async function duckdbLogRows(glob: string): Promise<string[]> {
  const rows = await duckdbRows(
    `SELECT ServiceName, TraceId, SpanId, epoch_us("Timestamp")::VARCHAR AS t, SeverityText,
       SeverityNumber, Body,
       list_transform(map_entries(ResourceAttributes), e -> [e.key, e.value]) AS ra, ScopeName,
       list_transform(map_entries(LogAttributes), e -> [e.key, e.value]) AS la, EventName
     FROM read_parquet('${glob}', hive_partitioning = false)`,
  );
  return rows.map((r) => JSON.stringify(Object.values(r)));
}

/** An HrTime `offsetNanos` into minute `minute` of the hour starting at `hour` (ms). */
function at(hour: number, minute: number, offsetNanos: number): HrTime {
  const ns = BigInt(hour + minute * 60_000) * 1_000_000n + BigInt(offsetNanos);
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

const resourceOf = (service: string, seed: number) =>
  resourceFromAttributes({ 'service.name': service, 'host.name': `node-${seed}` });

const attributesOf = (random: () => number, i: number): Attributes => ({
  'http.route': `/item/${Math.floor(random() * 1000)}`,
  'http.response.status_code': 200 + (i % 5),
  ratio: 0.25,
  flag: i % 2 === 0,
  list: ['a', 'b'],
  text: 'é 💥 "quoted"',
});

type Connection = Record<string, unknown>;

/**
 * Exports spans of `batches` (traces of a SERVER root and two children, events, links, an error
 * status), one object per batch, through the SDK; returns them spelled (spellSpan).
 */
export async function exportSpanBatches(
  options: { bucket: string; prefix: string },
  connection: Connection,
  hour: number,
  batches: readonly FlatBatch[],
): Promise<string[]> {
  const s3 = new S3SpanExporter({
    ...connection,
    bucket: options.bucket,
    prefix: options.prefix,
    format: 'parquet',
    partitionTime: 'data',
    maxBatchAgeMillis: 3_600_000,
  });
  const rows: string[] = [];
  const recording = new Recording<ReadableSpan>(s3, spellSpan, rows);
  for (const batch of batches) {
    const random = prng(batch.seed);
    const provider = new TracerProvider({
      resource: resourceOf(batch.service, batch.seed),
      spanProcessors: [new BatchSpanProcessor({ exporter: recording, ...ONE_BATCH })],
    });
    const tracer = provider.getTracer('shop', '1.0.0');
    for (let i = 0; i < batch.items; i += 3) {
      const start = Math.floor(random() * 50_000_000_000);
      const root = tracer.startSpan(`GET /item/${i}`, {
        kind: SpanKind.SERVER,
        startTime: at(hour, batch.minute, start),
        attributes: attributesOf(random, i),
        links:
          i % 2 === 0
            ? [
                {
                  context: {
                    traceId: 'ffffffffffffffffffffffffffffff00',
                    spanId: '00000000000000ff',
                    traceFlags: TraceFlags.NONE,
                  },
                  attributes: { attempt: i },
                },
              ]
            : [],
      });
      const inRoot = trace.setSpan(context.active(), root);
      for (let c = 1; c < 3 && i + c < batch.items; c++) {
        const child = tracer.startSpan(
          `step ${c}`,
          {
            kind: SpanKind.CLIENT,
            startTime: at(hour, batch.minute, start + c * 1_000_123),
            attributes: { step: c },
          },
          inRoot,
        );
        if (c === 1) {
          child.addEvent('retry', { count: c }, at(hour, batch.minute, start + c * 1_000_200));
        }
        if (c === 2) child.setStatus({ code: SpanStatusCode.ERROR, message: 'failed: 💥' });
        child.end(at(hour, batch.minute, start + c * 2_000_321));
      }
      root.end(at(hour, batch.minute, start + 9_000_777));
    }
    await provider.forceFlush();
    await s3.forceFlush();
    await provider.shutdown();
  }
  await s3.shutdown();
  const stats = s3.stats();
  if (stats.batchesUploaded !== batches.length || stats.pointsUploaded !== rows.length) {
    throw new Error(`expected ${batches.length} objects uploaded, got ${JSON.stringify(stats)}`);
  }
  return rows;
}

/**
 * Exports log records of `batches` (bodies of several types, severities, half of them in a span
 * of a trace of their own), one object per batch, through the SDK; returns them spelled.
 */
export async function exportLogBatches(
  options: { bucket: string; prefix: string },
  connection: Connection,
  hour: number,
  batches: readonly FlatBatch[],
): Promise<string[]> {
  const s3 = new S3LogRecordExporter({
    ...connection,
    bucket: options.bucket,
    prefix: options.prefix,
    format: 'parquet',
    partitionTime: 'data',
    maxBatchAgeMillis: 3_600_000,
  });
  const rows: string[] = [];
  const recording = new Recording<ReadableLogRecord>(s3, spellLog, rows);
  const bodies: unknown[] = ['a plain message', 'quotes " and \n 😀', 42, true, ['a', 'b']];
  for (const batch of batches) {
    const random = prng(batch.seed);
    const hex = (n: number) =>
      Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
    const provider = new LoggerProvider({
      resource: resourceOf(batch.service, batch.seed),
      processors: [new BatchLogRecordProcessor({ exporter: recording, ...ONE_BATCH })],
    });
    const logger = provider.getLogger('app', '1.0.0');
    for (let i = 0; i < batch.items; i++) {
      const inSpan =
        i % 2 === 0
          ? trace.setSpanContext(context.active(), {
              traceId: hex(32),
              spanId: hex(16),
              traceFlags: TraceFlags.SAMPLED,
            })
          : undefined;
      logger.emit({
        timestamp: at(hour, batch.minute, Math.floor(random() * 50_000_000_000)),
        body: bodies[i % bodies.length] as string,
        severityNumber: [9, 17, 5][i % 3],
        severityText: ['INFO', 'ERROR', 'DEBUG'][i % 3],
        ...(i % 4 === 0 ? { eventName: `event.${i}` } : {}),
        attributes: attributesOf(random, i),
        ...(inSpan === undefined ? {} : { context: inSpan }),
      });
    }
    await provider.forceFlush();
    await s3.forceFlush();
    await provider.shutdown();
  }
  await s3.shutdown();
  const stats = s3.stats();
  if (stats.batchesUploaded !== batches.length || stats.pointsUploaded !== rows.length) {
    throw new Error(`expected ${batches.length} objects uploaded, got ${JSON.stringify(stats)}`);
  }
  return rows;
}
