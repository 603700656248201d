import { type Attributes, createTraceState, type HrTime } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import fc from 'fast-check';
import { attributes, hrTime, text } from './metrics-arbitraries.js';

/**
 * fast-check arbitraries for the spans and log records an SDK hands to an exporter, built
 * directly (not through a provider) to reach what a provider reaches rarely: every attribute
 * value type (maps, bytes, nested arrays and null, which only API 1.10 keeps), every span kind
 * and status, dropped counts up to uint32, remote parents and links, trace states, every log body
 * type, severities, event names, records with and without trace context. An export mixes up to
 * three resources and scopes, as objects shared between its items, as the SDK shares them.
 */

const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** `bytes` random bytes in lower-case hex (the SDK's spelling of ids); all zero now and then. */
const hexId = (bytes: number) =>
  fc
    .oneof(
      { weight: 9, arbitrary: fc.uint8Array({ minLength: bytes, maxLength: bytes }) },
      { weight: 1, arbitrary: fc.constant(new Uint8Array(bytes)) },
    )
    .map((b) => Buffer.from(b).toString('hex'));

/** A dropped count: mostly 0 or small, now and then up to uint32's end. */
const count = fc.oneof(
  { weight: 6, arbitrary: fc.constant(0) },
  { weight: 3, arbitrary: fc.nat(300) },
  { weight: 1, arbitrary: fc.constantFrom(127, 128, 16384, 2 ** 31, 2 ** 32 - 1) },
);

/** W3C trace state: the API's, or any object with serialize() (its text as it comes). */
const traceState = fc.oneof(
  fc
    .array(fc.tuple(fc.constantFrom('vendor', 'k1', 'a@b'), fc.stringMatching(/^[a-z0-9]{0,6}$/)), {
      maxLength: 3,
    })
    .map((entries) => createTraceState(entries.map(([k, v]) => `${k}=${v}`).join(','))),
  text.map((t) => ({ serialize: () => t })),
);

const traceFlags = fc.oneof(fc.constantFrom(0, 1), fc.nat(255));

const spanContext = fc.record(
  {
    traceId: hexId(16),
    spanId: hexId(8),
    traceFlags,
    isRemote: fc.boolean(),
    traceState,
  },
  { requiredKeys: ['traceId', 'spanId', 'traceFlags'] },
);

const event = fc.record(
  { time: hrTime, name: text, attributes, droppedAttributesCount: count },
  { requiredKeys: ['time', 'name'] },
);

const link = fc.record(
  { context: spanContext, attributes, droppedAttributesCount: count },
  { requiredKeys: ['context'] },
);

const resource = fc
  .record({ attributes, schemaUrl: text }, { requiredKeys: ['attributes'] })
  .map((r) => r as unknown as Resource);

/** Core's InstrumentationScope; a log record's may carry attributes and a dropped count. */
const scope = fc.record(
  { name: text, version: text, schemaUrl: text, attributes, droppedAttributesCount: count },
  { requiredKeys: ['name'] },
);

/** Up to three resources and scopes; each item takes one of each. */
const shared = fc.record({
  resources: fc.array(resource, { minLength: 1, maxLength: 3 }),
  scopes: fc.array(scope, { minLength: 1, maxLength: 3 }),
});

const spanParts = fc.record({
  name: text,
  kind: fc.constantFrom(0, 1, 2, 3, 4),
  context: spanContext,
  parent: optional(
    fc.oneof(
      { weight: 4, arbitrary: spanContext },
      // No parent id: the serializers write no parentSpanId.
      { weight: 1, arbitrary: spanContext.map((c) => ({ ...c, spanId: '' })) },
    ),
  ),
  startTime: hrTime,
  endTime: hrTime,
  status: fc.record({ code: fc.constantFrom(0, 1, 2), message: text }, { requiredKeys: ['code'] }),
  attributes,
  links: fc.array(link, { maxLength: 3 }),
  events: fc.array(event, { maxLength: 3 }),
  droppedAttributesCount: count,
  droppedEventsCount: count,
  droppedLinksCount: count,
  resource: fc.nat(2),
  scope: fc.nat(2),
});

/** One export of spans (possibly empty). */
export const spans: fc.Arbitrary<ReadableSpan[]> = fc
  .tuple(shared, fc.array(spanParts, { maxLength: 6 }))
  .map(([{ resources, scopes }, parts]) =>
    parts.map((p) => {
      const span = {
        name: p.name,
        kind: p.kind,
        spanContext: () => p.context,
        parentSpanContext: p.parent,
        startTime: p.startTime,
        endTime: p.endTime,
        duration: [0, 0] as HrTime,
        ended: true,
        status: p.status,
        attributes: p.attributes,
        links: p.links,
        events: p.events,
        resource: resources[p.resource % resources.length],
        instrumentationScope: scopes[p.scope % scopes.length],
        droppedAttributesCount: p.droppedAttributesCount,
        droppedEventsCount: p.droppedEventsCount,
        droppedLinksCount: p.droppedLinksCount,
      };
      return span as unknown as ReadableSpan;
    }),
  );

/** A log body: any value (map, array, bytes, …), null, or none. */
const body: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: text },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null) },
  {
    weight: 3,
    arbitrary: attributes.chain((map) =>
      fc.constantFrom<unknown>(map, Object.values(map), Object.values(map)[0]),
    ),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean()) },
);

const logParts = fc.record({
  hrTime: fc.oneof(
    { weight: 5, arbitrary: hrTime },
    { weight: 1, arbitrary: fc.constant<HrTime>([0, 0]) },
  ),
  hrTimeObserved: hrTime,
  spanContext: optional(
    fc.oneof(
      { weight: 4, arbitrary: spanContext },
      // Empty ids are left out by the serializers.
      { weight: 1, arbitrary: spanContext.map((c) => ({ ...c, traceId: '', spanId: '' })) },
    ),
  ),
  severityText: optional(text),
  severityNumber: optional(fc.integer({ min: 0, max: 24 })),
  body,
  eventName: optional(text),
  attributes: attributes as fc.Arbitrary<Attributes>,
  droppedAttributesCount: count,
  resource: fc.nat(2),
  scope: fc.nat(2),
});

/** One export of log records (possibly empty). */
export const logRecords: fc.Arbitrary<ReadableLogRecord[]> = fc
  .tuple(shared, fc.array(logParts, { maxLength: 6 }))
  .map(([{ resources, scopes }, parts]) =>
    parts.map(({ resource: r, scope: s, ...p }) => {
      const record = {
        ...p,
        resource: resources[r % resources.length],
        instrumentationScope: scopes[s % scopes.length],
      };
      return record as unknown as ReadableLogRecord;
    }),
  );
