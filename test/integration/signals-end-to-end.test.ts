import type { S3Client } from '@aws-sdk/client-s3';
import { type Attributes, context, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { expect, test } from 'vitest';
import {
  S3LogRecordExporter,
  type S3MetricExporterOptions,
  S3SpanExporter,
} from '../../src/index.js';
import { sameMessageAs } from '../support/message-check.js';
import { oneBatchLoggers, oneBatchTracerProvider } from '../support/one-batch-providers.js';
import {
  type Canonical,
  logsReference,
  type ReferenceDecoders,
  traceReference,
} from '../support/otlp-reference.js';
import { COMPRESSIONS, EXTENSION, FORMATS } from '../support/reader-fixtures.js';
import {
  connection,
  decompressed,
  describeS3,
  listAndFetch,
  type StoredObject,
  withS3,
} from '../support/s3.js';
import { inSpanContext, remoteParentContext, SPAN_KINDS } from '../support/trace-context.js';

/**
 * Spans and log records made by the SDK (a TracerProvider with a BatchSpanProcessor, a
 * LoggerProvider with a BatchLogRecordProcessor) go through the exporter into the real S3 server
 * in every format and compression; each stored object, decompressed by standard decoders and
 * decoded by Google's protobuf runtime against the official .proto files (otlp-reference), is
 * exactly the message the official serializer makes of what the SDK handed over.
 */

const RESOURCE = resourceFromAttributes({
  'service.name': 'checkout',
  'service.version': '4.2.0',
  'host.name': 'node-1',
  'process.pid': 4242,
});

/** Of one signal: its exporter, the SDK that feeds it, the official serializer and decoders. */
interface SignalCase<Item> {
  word: 'traces' | 'logs';
  exporter(options: S3MetricExporterOptions): S3SpanExporter | S3LogRecordExporter;
  /** Runs the SDK around `exporter` (which records what it is handed), emits, flushes, shuts down. */
  produce(exporter: RecordingExporter<Item>): Promise<number>;
  official(items: Item[]): Uint8Array | undefined;
  reference: ReferenceDecoders;
  /** The request's list field. */
  list: 'resourceSpans' | 'resourceLogs';
}

/**
 * Between the SDK's processor and the S3 exporter: hands every export on, and keeps the official
 * serializer's message of it, made at once (the SDK may reuse what it handed over afterwards).
 */
class RecordingExporter<Item> {
  readonly expected: Canonical[] = [];
  items = 0;
  constructor(
    private readonly inner: S3SpanExporter | S3LogRecordExporter,
    private readonly signal: SignalCase<Item>,
  ) {}
  export(items: Item[], resultCallback: (result: ExportResult) => void): void {
    const bytes = this.signal.official(items);
    if (bytes === undefined) throw new Error('the official serializer wrote nothing');
    this.expected.push(this.signal.reference.decodeProtobuf(bytes));
    this.items += items.length;
    this.inner.export(items as never, resultCallback);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

const attributes = (i: number) =>
  ({
    'http.request.method': 'GET',
    'http.response.status_code': 200 + i,
    'url.full': 'https://example.com/a?b="c"&d=é',
    ratio: 0.25,
    big: 2 ** 60,
    negative: -7,
    flag: i % 2 === 0,
    list: ['a', 'b'],
    numbers: [1, 2.5],
  }) as Attributes;

/** A batch processor's settings that hand everything over in one batch, at forceFlush(). */
const SPANS: SignalCase<ReadableSpan> = {
  word: 'traces',
  exporter: (options) => new S3SpanExporter(options),
  async produce(exporter) {
    const provider = oneBatchTracerProvider(RESOURCE, exporter);
    const tracers = [
      provider.getTracer('http', '1.2.3', { schemaUrl: 'https://opentelemetry.io/schemas/1.28.0' }),
      provider.getTracer('db'),
    ];
    const remoteParent = remoteParentContext();
    const kinds = SPAN_KINDS;
    for (let i = 0; i < 40; i++) {
      const tracer = tracers[i % 2] as (typeof tracers)[number];
      const span = tracer.startSpan(
        `op ${i}`,
        {
          kind: kinds[i % kinds.length],
          attributes: attributes(i),
          links:
            i % 3 === 0
              ? [
                  {
                    context: {
                      traceId: 'ffffffffffffffffffffffffffffff00',
                      spanId: '00000000000000ff',
                      traceFlags: TraceFlags.NONE,
                    },
                    attributes: { 'link.reason': 'retry', attempt: i },
                  },
                ]
              : [],
        },
        i % 2 === 0 ? remoteParent : undefined,
      );
      span.addEvent('exception', { 'exception.message': 'boom\n"quoted" 💥', count: i });
      span.setStatus(
        [
          { code: SpanStatusCode.ERROR, message: 'failed: 💥' },
          { code: SpanStatusCode.OK },
          { code: SpanStatusCode.UNSET },
        ][i % 3] as { code: SpanStatusCode },
      );
      tracer.startSpan('child', {}, trace.setSpan(context.active(), span)).end();
      span.end();
    }
    // The processor hands the spans over; only the exporter's forceFlush() stores them.
    await provider.forceFlush();
    await exporter.forceFlush();
    await provider.shutdown();
    return 80;
  },
  official: (spans) => ProtobufTraceSerializer.serializeRequest(spans),
  reference: traceReference,
  list: 'resourceSpans',
};

const LOG_RECORDS: SignalCase<ReadableLogRecord> = {
  word: 'logs',
  exporter: (options) => new S3LogRecordExporter(options),
  async produce(exporter) {
    const { provider, loggers } = oneBatchLoggers(RESOURCE, exporter);
    const inSpan = inSpanContext();
    const bodies: unknown[] = [
      'a plain message',
      'quotes " and \\ and \n and 😀',
      42,
      2 ** 60,
      -1.5,
      true,
      new Uint8Array([0, 1, 2, 255]),
      ['a', 1, { b: null }],
      { message: 'structured', code: 7, tags: ['x'], raw: new Uint8Array([9]) },
      undefined,
    ];
    const severities = [9, 17, undefined]; // INFO, ERROR, none
    for (let i = 0; i < 40; i++) {
      const logger = loggers[i % 2] as (typeof loggers)[number];
      const body = bodies[i % bodies.length];
      logger.emit({
        ...(body === undefined ? {} : { body: body as string }),
        severityNumber: severities[i % 3],
        ...(i % 2 === 0 ? { severityText: i % 4 === 0 ? 'INFO' : 'ERROR' } : {}),
        ...(i % 3 === 0 ? { eventName: `event.${i}` } : {}),
        attributes: attributes(i),
        ...(i % 2 === 0 ? { context: inSpan } : {}),
        ...(i % 4 === 1
          ? { timestamp: 1_700_000_000_123, observedTimestamp: [1_700_000_001, 5] }
          : {}),
      });
    }
    // The logs processor's forceFlush() calls the exporter's.
    await provider.forceFlush();
    await provider.shutdown();
    return 40;
  },
  official: (records) => ProtobufLogsSerializer.serializeRequest(records),
  reference: logsReference,
  list: 'resourceLogs',
};

/** A stored object's message, read by the reference decoders after standard decompression. */
function decodeReference(object: StoredObject, reference: ReferenceDecoders): Canonical {
  const raw = decompressed(object);
  if (/\.binpb(\.|$)/.test(object.key)) return reference.decodeProtobuf(raw);
  const text = raw.toString('utf8');
  expect(text.indexOf('\n'), `${object.key}: one JSON line ending in a newline`).toBe(
    text.length - 1,
  );
  return reference.decodeJsonExact(text);
}

/** The resources of a list of messages, in order: what one request of all of them would hold. */
const resourcesOf = (messages: Canonical[], list: string) =>
  messages.flatMap((m) => ((m as Record<string, Canonical[]>)[list] ?? []) as Canonical[]);

describeS3('spans and log records through the SDK processors into a real S3 server', () => {
  let client: S3Client;
  let bucket: string;
  withS3('signals-e2e', (s) => ({ client, bucket } = s));

  for (const signal of [SPANS, LOG_RECORDS] as SignalCase<unknown>[]) {
    for (const format of FORMATS) {
      for (const compression of COMPRESSIONS) {
        test(`${signal.word}, ${format} + ${compression}: each object is the official serializer's message of what the SDK exported`, async () => {
          const prefix = `signals-e2e/${signal.word}-${format}-${compression}`;
          const s3Exporter = signal.exporter({
            bucket,
            prefix,
            ...connection(),
            format,
            compression,
            maxBatchAgeMillis: 60_000,
          });
          const recording = new RecordingExporter(s3Exporter, signal);
          const emitted = await signal.produce(recording);
          expect(recording.items).toBe(emitted);
          const stats = s3Exporter.stats();
          expect(stats.pointsUploaded).toBe(emitted);
          expect(stats.pointsDropped).toBe(0);

          const objects = await listAndFetch(client, bucket, `${prefix}/`);
          expect(objects.length).toBeGreaterThan(0);
          expect(objects.length).toBe(stats.batchesUploaded);
          for (const object of objects) {
            const extension = (EXTENSION[format] + EXTENSION[compression]).replaceAll('.', '\\.');
            expect(object.key).toMatch(
              new RegExp(
                `^${prefix}/year=\\d{4}/month=\\d\\d/day=\\d\\d/hour=\\d\\d/minute=\\d\\d/${signal.word}_[0-9a-f-]{36}${extension}$`,
              ),
            );
          }
          // Objects in key order are in export order (uuidv7 keys); one request each, and
          // together exactly the official messages of every export, in order.
          const stored = objects.map((o) => decodeReference(o, signal.reference));
          for (const message of stored)
            expect(Object.keys(message as object)).toEqual([signal.list]);
          sameMessageAs(resourcesOf(recording.expected, signal.list))(
            `what the ${signal.word} objects hold`,
            resourcesOf(stored, signal.list),
          );
        });
      }
    }
  }
});
