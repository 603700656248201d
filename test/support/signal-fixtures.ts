import { gzipSync } from 'node:zlib';
import {
  type Context,
  context,
  type HrTime,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  type ReadableLogRecord,
  SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { UUID } from 'uuidv7';
import type { Compression, Format } from '../../src/layout/formats.js';
import { defaultKeyTemplate } from '../../src/layout/formats.js';
import { KeyTemplate } from '../../src/layout/key-template.js';
import { logsExport } from '../../src/signals/logs/export.js';
import { tracesExport } from '../../src/signals/traces/export.js';
import type { FramedFormat } from './reader-fixtures.js';
import { zstdCompress } from './zstd.js';

/** What the test recorded through the SDK: spans of one trace (two services) and log records. */
export interface RecordedTrace {
  traceId: string;
  /** The spans as the SDK finished them (children end first). */
  spans: ReadableSpan[];
  /** The log records as the SDK emitted them, three in spans and one outside any. */
  logs: ReadableLogRecord[];
}

/** 2026-11-30T04:00:00Z in ms, the trace's start. */
const T = Date.UTC(2026, 10, 30, 4, 0, 0);
/** ms after T as an SDK time, with a nanosecond part so durations are not whole milliseconds. */
const at = (ms: number, nanos = 0): HrTime => [
  Math.floor((T + ms) / 1000),
  ((T + ms) % 1000) * 1e6 + nanos,
];

/**
 * Records, through the official SDKs, one trace of two services with explicit times:
 *
 *   GET /checkout (checkout, server, 0-120 ms)
 *     SELECT orders (checkout, client, 5-25.5 ms)
 *     POST /cart (checkout, client, 30-100 ms)
 *       add item (cart, server, 35-95 ms, error)
 *         validate (cart, internal, 40-41.000123 ms)
 *     render (checkout, internal, 101-119 ms)
 *
 * and log records of two services: in `SELECT orders`, `add item` (an error) and the root, and
 * one outside the trace.
 */
export async function recordTrace(): Promise<RecordedTrace> {
  const spanExporter = new InMemorySpanExporter();
  const logExporter = new InMemoryLogRecordExporter();
  const tracers = (service: string) => {
    const resource = resourceFromAttributes({ 'service.name': service, 'host.name': 'node-1' });
    return {
      tracer: new TracerProvider({
        resource,
        spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })],
      }),
      logger: new LoggerProvider({
        resource,
        processors: [new SimpleLogRecordProcessor({ exporter: logExporter })],
      }),
    };
  };
  const checkout = tracers('checkout');
  const cart = tracers('cart');
  const http = checkout.tracer.getTracer('http');
  const cartHttp = cart.tracer.getTracer('http');
  const appLog = checkout.logger.getLogger('app');
  const cartLog = cart.logger.getLogger('app');

  const inSpan = (parent: Context, span: ReturnType<typeof http.startSpan>) =>
    trace.setSpan(parent, span);
  const root = http.startSpan('GET /checkout', {
    kind: SpanKind.SERVER,
    startTime: at(0),
    attributes: { 'http.route': '/checkout', 'http.response.status_code': 200 },
  });
  const rootCtx = inSpan(context.active(), root);
  const query = http.startSpan(
    'SELECT orders',
    { kind: SpanKind.CLIENT, startTime: at(5), attributes: { 'db.system': 'postgresql' } },
    rootCtx,
  );
  appLog.emit({
    body: 'querying orders',
    severityNumber: 9,
    severityText: 'INFO',
    timestamp: at(6),
    context: inSpan(rootCtx, query),
  });
  query.end(at(25, 500_000));
  const post = http.startSpan('POST /cart', { kind: SpanKind.CLIENT, startTime: at(30) }, rootCtx);
  const postCtx = inSpan(rootCtx, post);
  const add = cartHttp.startSpan(
    'add item',
    { kind: SpanKind.SERVER, startTime: at(35), attributes: { 'cart.items': 3 } },
    postCtx,
  );
  const addCtx = inSpan(postCtx, add);
  const validate = cartHttp.startSpan('validate', { startTime: at(40) }, addCtx);
  validate.end(at(41, 123));
  add.addEvent('exception', { 'exception.message': 'out of stock' }, at(90));
  add.setStatus({ code: SpanStatusCode.ERROR, message: 'out of stock' });
  cartLog.emit({
    body: { message: 'item out of stock', sku: 'A-42' },
    severityNumber: 17,
    timestamp: at(91),
    attributes: { sku: 'A-42' },
    context: addCtx,
  });
  add.end(at(95));
  post.end(at(100));
  const render = http.startSpan('render', { startTime: at(101) }, rootCtx);
  render.end(at(119));
  appLog.emit({
    body: 'checkout done',
    severityNumber: 9,
    severityText: 'INFO',
    timestamp: at(119, 1),
    context: rootCtx,
  });
  root.setStatus({ code: SpanStatusCode.OK });
  root.end(at(120));
  appLog.emit({ body: 'cache warmed', severityNumber: 5, timestamp: at(200) });

  const spans = spanExporter.getFinishedSpans();
  const logs = logExporter.getFinishedLogRecords();
  await Promise.all([checkout, cart].flatMap((p) => [p.tracer.shutdown(), p.logger.shutdown()]));
  return { traceId: root.spanContext().traceId, spans, logs };
}

/** The bytes of one stored object of spans, encoded as the exporter does. */
export function encodeSpans(
  spans: ReadableSpan[],
  format: FramedFormat,
  compression: Compression,
): Buffer {
  return compressed(assembled(tracesExport.records[format], spans), compression);
}

/** The bytes of one stored object of log records, encoded as the exporter does. */
export function encodeLogRecords(
  records: ReadableLogRecord[],
  format: FramedFormat,
  compression: Compression,
): Buffer {
  return compressed(assembled(logsExport.records[format], records), compression);
}

function assembled<Item>(
  f: { encode(item: Item): Buffer; assemble(records: readonly Buffer[], bytes: number): Buffer },
  item: Item,
): Buffer {
  const record = f.encode(item);
  return f.assemble([record], record.length);
}

function compressed(raw: Buffer, compression: Compression): Buffer {
  if (compression === 'zstd') return zstdCompress(raw);
  if (compression === 'gzip') return gzipSync(raw);
  return raw;
}

let sequence = 0;
/** A key of the signal's default layout for `format`, with a UUIDv7 made at `time`. */
export function signalKeyAt(
  signal: 'traces' | 'logs',
  format: Format,
  prefix: string,
  time: Date,
  extension: string,
): string {
  const id = UUID.fromFieldsV7(time.getTime(), ++sequence & 0xfff, 0, sequence).toString();
  return new KeyTemplate(defaultKeyTemplate(format, signal), {
    prefix,
    filePrefix: '',
    timeZone: 'UTC',
  }).render({ time, attributes: {}, extension, id });
}
