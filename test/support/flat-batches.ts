import {
  type Attributes,
  context,
  type HrTime,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchLogRecordProcessor,
  LoggerProvider,
  type ReadableLogRecord,
} from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { S3LogRecordExporter, S3SpanExporter } from '../../src/index.js';
import type { Format } from '../../src/layout/formats.js';
import { duckdbRows } from './duckdb.js';
import { ONE_BATCH, oneBatchTracerProvider } from './one-batch-providers.js';
import { logRow, Recording, spanRow } from './otel-rows.js';
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

/** Two small objects of two services, at minutes 10 and 20: 6 spans or log records each. */
export const TWO_SMALL_BATCHES: readonly FlatBatch[] = [
  { service: 'api', minute: 10, items: 6, seed: 1 },
  { service: 'web', minute: 20, items: 6, seed: 2 },
];

/** Microseconds (as DuckDB reads a timestamp) of nanoseconds, in decimal. */
const micros = (ns: bigint) => String(ns / 1000n);

/** A span as one text: the columns of its otel_traces row that duckdbSpanRows reads. */
function spellSpan(s: ReadableSpan): string {
  const r = spanRow(s);
  return JSON.stringify([
    r.ServiceName,
    r.TraceId,
    r.SpanId,
    r.ParentSpanId,
    micros(r.Timestamp),
    String(r.Duration),
    r.SpanName,
    r.SpanKind,
    r.StatusCode,
    r.StatusMessage,
    r.ResourceAttributes,
    r.ScopeName,
    r.ScopeVersion,
    r.SpanAttributes,
    r['Events.Timestamp'].map((t, i) => [
      micros(t),
      r['Events.Name'][i],
      r['Events.Attributes'][i],
    ]),
    r['Links.TraceId'].map((id, i) => [id, r['Links.SpanId'][i], r['Links.Attributes'][i]]),
  ]);
}

/** A log record as one text: the columns of its otel_logs row that duckdbLogRows reads. */
function spellLog(record: ReadableLogRecord): string {
  const r = logRow(record);
  return JSON.stringify([
    r.ServiceName,
    r.TraceId,
    r.SpanId,
    micros(r.Timestamp),
    r.SeverityText,
    r.SeverityNumber,
    r.Body,
    r.ResourceAttributes,
    r.ScopeName,
    r.LogAttributes,
    r.EventName,
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
type Where = { bucket: string; prefix: string; format?: Format };
/** A provider of one batch: flushed, then shut down (the S3 exporter lives on). */
type BatchProvider = { forceFlush(): Promise<void>; shutdown(): Promise<void> };

/**
 * The exporters' options here: Parquet (or the OTLP format given), one hour by the data's time,
 * objects cut at the flush.
 */
const exporterOptions = (options: Where, connection: Connection) => ({
  ...connection,
  bucket: options.bucket,
  prefix: options.prefix,
  format: options.format ?? ('parquet' as const),
  partitionTime: 'data' as const,
  maxBatchAgeMillis: 3_600_000,
});

/**
 * Exports each of `batches` as one object through `s3`: `produce` makes the batch's items in a
 * provider of its own whose processor hands them to the recording; returns them spelled.
 */
async function exportEach<Item>(
  s3: S3SpanExporter | S3LogRecordExporter,
  spell: (item: Item) => string,
  batches: readonly FlatBatch[],
  produce: (batch: FlatBatch, exporter: Recording<Item, string>) => BatchProvider,
): Promise<string[]> {
  const recording = new Recording<Item, string>(s3, spell, true);
  for (const batch of batches) {
    const provider = produce(batch, recording);
    await provider.forceFlush();
    await s3.forceFlush();
    await provider.shutdown();
  }
  await s3.shutdown();
  const stats = s3.stats();
  const rows = recording.rows;
  if (stats.batchesUploaded !== batches.length || stats.pointsUploaded !== rows.length) {
    throw new Error(`expected ${batches.length} objects uploaded, got ${JSON.stringify(stats)}`);
  }
  return rows;
}

/**
 * Exports spans of `batches` (traces of a SERVER root and two children, events, links, an error
 * status), one object per batch, through the SDK; returns them spelled (spellSpan).
 */
export function exportSpanBatches(
  options: Where,
  connection: Connection,
  hour: number,
  batches: readonly FlatBatch[],
): Promise<string[]> {
  const s3 = new S3SpanExporter(exporterOptions(options, connection));
  return exportEach<ReadableSpan>(s3, spellSpan, batches, (batch, recording) => {
    const random = prng(batch.seed);
    const provider = oneBatchTracerProvider(resourceOf(batch.service, batch.seed), recording);
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
                // A second link, of no attributes.
                {
                  context: {
                    traceId: 'ffffffffffffffffffffffffffffff01',
                    spanId: '00000000000000fe',
                    traceFlags: TraceFlags.SAMPLED,
                  },
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
          // Three events: attributes of two keys, none, one.
          child.addEvent(
            'retry',
            { count: c, reason: 'timeout' },
            at(hour, batch.minute, start + c * 1_000_200),
          );
          child.addEvent('gave up', at(hour, batch.minute, start + c * 1_000_300));
          child.addEvent(
            'fallback',
            { to: 'cache' },
            at(hour, batch.minute, start + c * 1_000_400),
          );
        }
        if (c === 2) child.setStatus({ code: SpanStatusCode.ERROR, message: 'failed: 💥' });
        child.end(at(hour, batch.minute, start + c * 2_000_321));
      }
      root.end(at(hour, batch.minute, start + 9_000_777));
    }
    return provider;
  });
}

/**
 * Exports log records of `batches` (bodies of several types, severities, half of them in a span
 * of a trace of their own), one object per batch, through the SDK; returns them spelled.
 */
export function exportLogBatches(
  options: Where,
  connection: Connection,
  hour: number,
  batches: readonly FlatBatch[],
): Promise<string[]> {
  const s3 = new S3LogRecordExporter(exporterOptions(options, connection));
  const bodies: unknown[] = ['a plain message', 'quotes " and \n 😀', 42, true, ['a', 'b']];
  return exportEach<ReadableLogRecord>(s3, spellLog, batches, (batch, recording) => {
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
    return provider;
  });
}
