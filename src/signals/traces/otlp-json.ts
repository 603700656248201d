import { jsonAttributesOf } from '../../encoding/any-value-json.js';
import {
  IntField,
  type JsonWriter,
  type Spelling,
  spelling,
  TimeField,
} from '../../encoding/json-writer.js';
import { checkDropped } from '../../encoding/otlp-schema.js';
import { groupedJson } from '../grouped-json.js';
import type { EventLike, LinkLike, SpanContextLike, SpanLike } from './span.js';
import { countSpan, otlpSpanKind, spanFlags, statusCode } from './span.js';

const EVENTS = spelling(',"events":[');
const LINKS = spelling(',"links":[');
const PARENT_SPAN_ID = spelling(',"parentSpanId":');
const FLAGS = new IntField(',"flags":');
const FLAGS_THEN_NAME = new IntField(',"flags":', ',"name":');
const NAME = spelling(',"name":');
const KIND = new IntField(',"kind":');
const START_TIME_UNIX_NANO = new TimeField(',"startTimeUnixNano":');
const END_TIME_UNIX_NANO = new TimeField(',"endTimeUnixNano":');
const DROPPED_EVENTS_COUNT = spelling(',"droppedEventsCount":');
const DROPPED_LINKS_COUNT = spelling(',"droppedLinksCount":');
const STATUS_CODE = new IntField(',"status":{"code":');
const MESSAGE = spelling(',"message":');
const CLOSE_STATUS = spelling('}}');
const OPEN_TRACE_ID = spelling('{"traceId":');
const SPAN_ID = spelling(',"spanId":');
const TRACE_STATE = spelling(',"traceState":');
const OPEN_TIME_UNIX_NANO = new TimeField('{"timeUnixNano":');

/**
 * OTLP/JSON of one export of spans (see groupedJson()): its ResourceSpans objects, as elements of
 * an ExportTraceServiceRequest's `resourceSpans` (jsonRecords() frames them). It decodes to the
 * same message as our protobuf (otlp-proto.ts) and the official ProtobufTraceSerializer's.
 */
export const spansToJsonBytes = groupedJson<SpanLike>('traces', { count: countSpan, write: span });

/** The same JSON as a string (for tests and tools). */
export function spansToJson(spans: readonly SpanLike[]): string {
  return spansToJsonBytes(spans).toString('utf8');
}

function span(w: JsonWriter, s: SpanLike): void {
  const context = s.spanContext();
  const parent = s.parentSpanContext;
  ids(w, context);
  if (parent?.spanId) {
    w.spell(PARENT_SPAN_ID);
    w.hexId(parent.spanId);
  }
  w.intField(FLAGS_THEN_NAME, spanFlags(context.traceFlags, parent?.isRemote));
  w.string(s.name);
  const kind = otlpSpanKind(s.kind);
  if (kind) w.intField(KIND, kind);
  w.nanos(START_TIME_UNIX_NANO, s.startTime);
  w.nanos(END_TIME_UNIX_NANO, s.endTime);
  jsonAttributesOf(w, s.attributes, s.droppedAttributesCount);
  list(w, EVENTS, s.events, event);
  checkDropped('a dropped events count', s.droppedEventsCount);
  w.intUnlessZero(DROPPED_EVENTS_COUNT, s.droppedEventsCount);
  list(w, LINKS, s.links, link);
  checkDropped('a dropped links count', s.droppedLinksCount);
  w.intUnlessZero(DROPPED_LINKS_COUNT, s.droppedLinksCount);
  // Status is always there, its code too (0, unset, included), as the official serializers write it.
  const status = s.status;
  w.intField(STATUS_CODE, statusCode(status.code));
  w.stringUnlessEmpty(MESSAGE, status.message);
  w.spell(CLOSE_STATUS);
}

/** The opening of a span or link: its trace id, span id and trace state. */
function ids(w: JsonWriter, context: SpanContextLike): void {
  w.spell(OPEN_TRACE_ID);
  w.hexId(context.traceId);
  w.spell(SPAN_ID);
  w.hexId(context.spanId);
  w.stringUnlessEmpty(TRACE_STATE, context.traceState?.serialize());
}

/** `field` (`,"events":[`), the items, comma-separated, and `]`; nothing for none (as protobuf). */
function list<T>(
  w: JsonWriter,
  field: Spelling,
  items: readonly T[],
  write: (w: JsonWriter, item: T) => void,
): void {
  if (items.length === 0) return;
  w.spell(field);
  for (let i = 0; i < items.length; i++) {
    if (i > 0) w.char(0x2c);
    write(w, items[i] as T);
  }
  w.char(0x5d);
}

function event(w: JsonWriter, e: EventLike): void {
  w.nanos(OPEN_TIME_UNIX_NANO, e.time);
  w.spell(NAME);
  w.string(e.name);
  jsonAttributesOf(w, e.attributes, e.droppedAttributesCount);
  w.char(0x7d);
}

function link(w: JsonWriter, l: LinkLike): void {
  const context = l.context;
  ids(w, context);
  jsonAttributesOf(w, l.attributes, l.droppedAttributesCount);
  w.intField(FLAGS, spanFlags(context.traceFlags, context.isRemote));
  w.char(0x7d);
}
