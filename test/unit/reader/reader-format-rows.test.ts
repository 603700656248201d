import { join } from 'node:path';
import {
  createTraceState,
  type HrTime,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
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
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { objectName } from '../../../src/layout/formats.js';
import {
  type LogRecordRow,
  logRecordRows,
  readLogRecords,
  readSpans,
  type SpanRow,
  spanRows,
  type UnreadableObject,
} from '../../../src/reader.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { type PlainValue, valueText } from '../../../src/signals/plain-values.js';
import { spanColumnBuilders } from '../../../src/signals/traces/parquet.js';
import { SPANS } from '../../../src/signals/traces/parquet-schema.js';
import { collect, writeAtKey } from '../../support/reader-fixtures.js';
import { encodeLogRecords, encodeSpans, signalKeyAt } from '../../support/signal-fixtures.js';
import { asText, attributeText, EVERY_ATTRIBUTE_VALUE } from '../../support/stored-text.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';

/**
 * A differential test: the same awkward spans and log records, recorded through the SDK, stored
 * once as the default format (OTLP/JSON + zstd) and once as Parquet, read back with the reader
 * and made rows. The rows must be equal but for what docs/parquet.md says the Parquet tables
 * cannot keep, which `asParquetKeepsIt` normalises (and only that).
 */

const T = Date.UTC(2026, 10, 30, 4, 0, 0);
const at = (ms: number, nanos = 0): HrTime => [
  Math.floor((T + ms) / 1000),
  ((T + ms) % 1000) * 1e6 + nanos,
];

/** Values the SDK's span API refuses but its log API (AnyValue) takes. */
const ANY_VALUES = {
  bytes: new Uint8Array([0, 1, 2, 250, 255]),
  map: { zeta: 1, alpha: 'a', mid: [true, { nested: 'deep', a: 2 }] },
  emptyMap: {},
};

interface Recorded {
  spans: ReadableSpan[];
  logs: ReadableLogRecord[];
}

async function record(): Promise<Recorded> {
  const spanExporter = new InMemorySpanExporter();
  const logExporter = new InMemoryLogRecordExporter();
  const resource = resourceFromAttributes({ 'service.name': 'svc-𝄞', 'host.name': 'node-1' });
  const tracer = new TracerProvider({
    resource,
    spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })],
    spanLimits: { attributeCountLimit: 40, eventCountLimit: 2, linkCountLimit: 2 },
  });
  const logger = new LoggerProvider({
    resource,
    processors: [new SimpleLogRecordProcessor({ exporter: logExporter })],
    logRecordLimits: { attributeCountLimit: 40 },
  });
  const t = tracer.getTracer('tracer-𝄞', '1.2.3');
  const log = logger.getLogger('logger', '4.5.6');

  const linked = {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    traceState: createTraceState('a=1,b=2'),
  };
  const parentCtx = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: createTraceState('vendor=x,other=y'),
  });

  const kinds = [
    SpanKind.INTERNAL,
    SpanKind.SERVER,
    SpanKind.CLIENT,
    SpanKind.PRODUCER,
    SpanKind.CONSUMER,
  ];
  kinds.forEach((kind, i) => {
    const span = t.startSpan(
      i === 0 ? '' : `span-${i}-😀`,
      {
        kind,
        startTime: at(i * 10, 123),
        attributes: i === 0 ? EVERY_ATTRIBUTE_VALUE : { n: i },
        links:
          i === 1
            ? [
                { context: linked },
                { context: { ...linked, traceState: undefined }, attributes: { w: 1.25 } },
                { context: linked, attributes: { dropped: 'third link' } },
              ]
            : [],
      },
      i < 3 ? parentCtx : undefined,
    );
    if (i === 1) {
      span.addEvent('no-attributes', at(i * 10 + 1));
      span.addEvent('with-attributes', { a: 'x', n: 2 ** 60, d: Number.NaN }, at(i * 10 + 2, 7));
      span.addEvent('dropped', at(i * 10 + 3));
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'went wrong ✗' });
    }
    if (i === 2) span.setStatus({ code: SpanStatusCode.ERROR });
    if (i === 3) span.setStatus({ code: SpanStatusCode.OK });
    span.end(at(i * 10 + 5, 456));
  });
  // Over the attribute count limit: some dropped.
  const many = t.startSpan('many-attributes', { startTime: at(100) });
  for (let n = 0; n < 45; n++) many.setAttribute(`k${String(n).padStart(2, '0')}`, n);
  many.end(at(101));

  const spanCtx = trace.setSpan(
    parentCtx,
    trace.wrapSpanContext({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '1111111111111111',
      traceFlags: TraceFlags.SAMPLED,
    }),
  );
  const bodies: unknown[] = [
    'text body',
    '',
    '𝄞 non-BMP',
    42,
    2 ** 60,
    -3,
    1.5,
    Number.NaN,
    Number.NEGATIVE_INFINITY,
    -0,
    true,
    false,
    new Uint8Array([1, 2, 3]),
    ['a', 1, 2.5, false, null, ['inner']],
    { zeta: 'z', alpha: 1, mid: { b: [1, 2], a: null }, '': 'empty key' },
    undefined,
  ];
  bodies.forEach((body, i) => {
    log.emit({
      // biome-ignore lint/suspicious/noExplicitAny: every AnyValue
      body: body as any,
      timestamp: at(200 + i, i),
      observedTimestamp: at(300 + i, i),
      severityNumber: 9,
      severityText: 'INFO',
      attributes: { i, ...(i === 0 ? { ...EVERY_ATTRIBUTE_VALUE, ...ANY_VALUES } : {}) },
      context: i % 2 === 0 ? spanCtx : undefined,
    });
  });
  // Severity number without text, text without number, neither.
  log.emit({ body: 'number only', severityNumber: 14, timestamp: at(400) });
  log.emit({ body: 'text only', severityText: 'warning', timestamp: at(401) });
  log.emit({ body: 'neither', timestamp: at(402) });
  // An event name; a record with an observed time but no time.
  log.emit({ eventName: 'app.started', body: 'event', timestamp: at(403) });
  log.emit({ body: 'observed only', observedTimestamp: at(404, 9) });
  // Over the attribute count limit.
  const manyAttrs: Record<string, number> = {};
  for (let n = 0; n < 45; n++) manyAttrs[`k${String(n).padStart(2, '0')}`] = n;
  log.emit({ body: 'many attributes', timestamp: at(405), attributes: manyAttrs });
  // Values inside lists and maps: empty values, bytes, big integers, non-finite doubles.
  log.emit({
    body: {
      bytes: new Uint8Array([255, 0]),
      big: 2 ** 60,
      list: ['x', null, Number.POSITIVE_INFINITY, { b: 1, a: [] }],
      nothing: null,
      '': '',
    },
    timestamp: at(406),
    attributes: {
      withNull: ['a', null, 'b'],
      nested: { b: { d: 1, c: new Uint8Array([1]) }, a: null },
      nothing: null,
      '': 'empty key',
    },
  });
  // What the CLI's text of a value (valueText) spells: integers past 2^53, -0, 1e21 and NaN
  // inside lists and maps, maps with keys out of order (nested, and keys JavaScript orders
  // itself: "10" before "9"), bytes, and a line separator (U+2028) in nested text.
  const spelled = {
    ints: [2 ** 60, -(2 ** 60), 2 ** 53 + 2, 1],
    doubles: [1e21, -0, Number.NaN, 0.5, 9e-9],
    map: {
      z: 2 ** 60,
      b: { y: 1e21, x: [-(2 ** 60), new Uint8Array([255])], '10': 1, '9': -0 },
      a: 'line\u2028separator',
      é: Number.NaN,
      Z: null,
    },
    bytes: new Uint8Array([0, 254, 255]),
  };
  log.emit({ body: spelled.map, timestamp: at(409), attributes: spelled });
  log.emit({ body: spelled.ints, timestamp: at(410), attributes: { list: spelled.doubles } });
  log.emit({ body: spelled.bytes, timestamp: at(411), attributes: { huge: 1e21 } });
  // A number out of range, typed as the logger's own (its module differs by OTel JS line).
  log.emit({
    body: null,
    timestamp: at(407),
    severityNumber: 30 as NonNullable<Parameters<typeof log.emit>[0]['severityNumber']>,
  });
  // Text that is not valid Unicode (a lone surrogate), in a name, a body, attributes.
  log.emit({
    body: 'lone \ud800 surrogate',
    severityText: 'warn\udc00',
    timestamp: at(408),
    attributes: { 'key\ud800': 'value\udfff', list: ['\ud800'] },
  });
  const lists = t.startSpan('lists', {
    startTime: at(603),
    attributes: { ints: [2 ** 60, -(2 ** 60), 2 ** 53 + 2], doubles: [1e21, -0, Number.NaN, 0.5] },
  });
  lists.addEvent('lists', { big: [2 ** 60], huge: [1e21] }, at(604));
  lists.end(at(605));
  const lone = t.startSpan('name \ud800', { startTime: at(600), attributes: { s: '\udc00' } });
  lone.addEvent('event \ud800', { e: '\ud800' }, at(601));
  lone.end(at(602));
  // A second resource without service.name, whose attributes have every type, and unnamed scopes.
  const other = resourceFromAttributes({
    ...EVERY_ATTRIBUTE_VALUE,
    'host.name': 'node-2',
    'service.name': 2 ** 60,
  });
  const otherTracer = new TracerProvider({
    resource: other,
    spanProcessors: [new SimpleSpanProcessor({ exporter: spanExporter })],
  });
  const otherLogger = new LoggerProvider({
    resource: other,
    processors: [new SimpleLogRecordProcessor({ exporter: logExporter })],
  });
  const bare = otherTracer.getTracer('').startSpan('bare', {
    startTime: at(500),
    attributes: { withNull: ['a', null], kinds: [1.5, 2] },
  });
  bare.addEvent('', {}, at(501));
  bare.addLink({ context: { ...linked, traceState: createTraceState('') } });
  bare.end(at(502));
  otherLogger.getLogger('').emit({ body: 'bare', timestamp: at(503) });
  await Promise.all([otherTracer.forceFlush(), otherLogger.forceFlush()]);

  const spans = spanExporter.getFinishedSpans();
  const logs = logExporter.getFinishedLogRecords();
  await Promise.all([tracer.shutdown(), logger.shutdown()]);
  // Zero timestamps, which the SDK never makes but a hand-made ReadableSpan or record may hold.
  const [first, second] = spans as [ReadableSpan, ReadableSpan];
  const [firstLog, secondLog] = logs as [ReadableLogRecord, ReadableLogRecord];
  return {
    spans: [
      ...spans,
      withFields(first, {
        startTime: [0, 0],
        spanContext: () => ({ ...first.spanContext(), spanId: 'a000000000000001' }),
      }),
      // No end (unset), and an end before the start (the SDK makes neither; other sources can).
      withFields(second, {
        endTime: [0, 0],
        spanContext: () => ({ ...second.spanContext(), spanId: 'a000000000000002' }),
      }),
      // The last kind and status code, an event at time 0, an all-zero parent span id. (A kind
      // or code outside the API's enums is refused by every format: span-enums.test.ts.)
      withFields(second, {
        kind: 4,
        status: { code: 2, message: 'odd' },
        events: [{ name: 'at zero', time: [0, 0], attributes: { z: 0 } }],
        parentSpanContext: { ...second.spanContext(), spanId: '0000000000000000' },
        spanContext: () => ({ ...second.spanContext(), spanId: 'a000000000000004' }),
      }),
      withFields(second, {
        endTime: at(0, 5),
        spanContext: () => ({ ...second.spanContext(), spanId: 'a000000000000003' }),
      }),
    ],
    logs: [
      ...logs,
      withFields(firstLog, { hrTime: [0, 0] }),
      withFields(secondLog, { hrTime: [0, 0], hrTimeObserved: [0, 0] }),
      withFields(secondLog, {
        spanContext: { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 },
        hrTime: at(700),
      }),
    ],
  };
}

/** `item` with some fields replaced, the rest (getters included) read from it. */
function withFields<T extends object>(item: T, fields: Record<string, unknown>): T {
  const copy = Object.create(item) as T;
  for (const [k, value] of Object.entries(fields)) {
    Object.defineProperty(copy, k, { value, enumerable: true });
  }
  return copy;
}

let recorded: Recorded;
let dir: string;
beforeAll(async () => {
  recorded = await record();
  dir = await makeTempDir('otel-s3-format-rows-');
});
afterAll(() => removeDir(dir));

async function parquetSpans(spans: ReadableSpan[]): Promise<Uint8Array> {
  const builders = spanColumnBuilders();
  builders.append(spans, newTally(false));
  return new Uint8Array(await flatEncoder(SPANS)(builders.seal(), { compression: 'none' }));
}

async function parquetLogs(logs: ReadableLogRecord[]): Promise<Uint8Array> {
  const builders = logColumnBuilders();
  builders.append(logs, newTally(false));
  return new Uint8Array(await flatEncoder(LOG_RECORDS)(builders.seal(), { compression: 'none' }));
}

/** The rows of the one object under `name` in `signal`'s default layout, read by the reader. */
async function readBack<R>(
  name: string,
  signal: 'traces' | 'logs',
  format: 'otlp-json' | 'parquet',
  bytes: Uint8Array,
): Promise<R[]> {
  const root = join(dir, name);
  const extension = format === 'parquet' ? '.parquet' : objectName('otlp-json', 'zstd').extension;
  await writeAtKey(root, signalKeyAt(signal, format, 'p', new Date(READER_T0), extension), bytes);
  const problems: UnreadableObject[] = [];
  const read = signal === 'traces' ? readSpans : readLogRecords;
  const objects = await collect(read({ dir: root, prefix: 'p', onError: (p) => problems.push(p) }));
  expect(problems).toEqual([]);
  expect(objects).toHaveLength(1);
  const [object] = objects;
  if (object === undefined) throw new Error('no object read');
  return (signal === 'traces' ? spanRows(object.request) : logRecordRows(object.request)) as R[];
}

/**
 * Rows in one order whatever the format's (Parquet sorts by service, a span's status, trace id
 * and time, documented): by their JSON, which for rows equal after normalisation is equal.
 */
const inOrder = <R>(rows: R[]): R[] =>
  rows
    .map((row) => ({ row, key: JSON.stringify(row) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ row }) => row);

describe('the same spans and log records read back as the same rows from either format', () => {
  test('spans', async () => {
    const json = await readBack<SpanRow>(
      'spans-json',
      'traces',
      'otlp-json',
      encodeSpans(recorded.spans, 'otlp-json', 'zstd'),
    );
    const parquet = await readBack<SpanRow>(
      'spans-parquet',
      'traces',
      'parquet',
      await parquetSpans(recorded.spans),
    );
    expect(json).toHaveLength(recorded.spans.length);
    // Documented: attribute values as text (span, resource, event and link attributes).
    const normalised = json.map(
      (row): SpanRow => ({
        ...row,
        resource: asText(row.resource) as SpanRow['resource'],
        attributes: asText(row.attributes) as SpanRow['attributes'],
        events: row.events.map((e) => ({
          ...e,
          attributes: asText(e.attributes) as SpanRow['attributes'],
        })),
        links: row.links.map((l) => ({
          ...l,
          attributes: asText(l.attributes) as SpanRow['attributes'],
        })),
      }),
    );
    expect(inOrder(parquet)).toEqual(inOrder(normalised));
  });

  test('log records', async () => {
    const json = await readBack<LogRecordRow>(
      'logs-json',
      'logs',
      'otlp-json',
      encodeLogRecords(recorded.logs, 'otlp-json', 'zstd'),
    );
    const parquet = await readBack<LogRecordRow>(
      'logs-parquet',
      'logs',
      'parquet',
      await parquetLogs(recorded.logs),
    );
    expect(json).toHaveLength(recorded.logs.length);
    const normalised = json.map(
      (row): LogRecordRow => ({
        ...row,
        resource: asText(row.resource) as LogRecordRow['resource'],
        attributes: asText(row.attributes) as LogRecordRow['attributes'],
        // Documented: the body is text, as attribute values are, and `''` is no body: an empty
        // text body reads back as none (null).
        body: row.body === null || row.body === '' ? null : attributeText(row.body),
        // Documented: the observed time is not kept when the record has a time of its own.
        observedTime: '',
      }),
    );
    expect(inOrder(parquet)).toEqual(inOrder(normalised));
  });
});

/** Every value of a row as the CLI's text of it (valueText): what it filters on and prints. */
const texts = (values: Record<string, PlainValue>): Record<string, string> =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, valueText(v)]));

/**
 * The differential test for the CLI: `--attribute`, `--body`, the tables and CSV read values
 * through valueText, which must spell a value the same whichever format its object was stored
 * in. The Parquet rows hold the text the file format fixes (docs/parquet.md); the OTLP rows'
 * values must read as that same text, with nothing normalised but what the rows' test above
 * does for fields that are not values.
 */
describe('the text of every value is the same from either format', () => {
  test('spans', async () => {
    const view = (row: SpanRow) => ({
      ...row,
      resource: texts(row.resource),
      attributes: texts(row.attributes),
      events: row.events.map((e) => ({ ...e, attributes: texts(e.attributes) })),
      links: row.links.map((l) => ({ ...l, attributes: texts(l.attributes) })),
    });
    const json = await readBack<SpanRow>(
      'span-texts-json',
      'traces',
      'otlp-json',
      encodeSpans(recorded.spans, 'otlp-json', 'zstd'),
    );
    const parquet = await readBack<SpanRow>(
      'span-texts-parquet',
      'traces',
      'parquet',
      await parquetSpans(recorded.spans),
    );
    expect(inOrder(json.map(view))).toEqual(inOrder(parquet.map(view)));
  });

  test('log records', async () => {
    const view = (row: LogRecordRow) => ({
      ...row,
      body: valueText(row.body),
      resource: texts(row.resource),
      attributes: texts(row.attributes),
    });
    const json = await readBack<LogRecordRow>(
      'log-texts-json',
      'logs',
      'otlp-json',
      encodeLogRecords(recorded.logs, 'otlp-json', 'zstd'),
    );
    const parquet = await readBack<LogRecordRow>(
      'log-texts-parquet',
      'logs',
      'parquet',
      await parquetLogs(recorded.logs),
    );
    // Documented: the observed time is not kept when the record has a time of its own.
    const jsonViews = json.map((row) => ({ ...view(row), observedTime: '' }));
    const parquetViews = parquet.map((row) => ({ ...view(row), observedTime: '' }));
    expect(inOrder(jsonViews)).toEqual(inOrder(parquetViews));
  });
});
