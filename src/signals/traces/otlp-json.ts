import { jsonAttributesOf } from '../../encoding/any-value-json.js';
import type { JsonWriter } from '../../encoding/json-writer.js';
import { groupedJson } from '../grouped-json.js';
import type { EventLike, LinkLike, SpanContextLike, SpanLike } from './span.js';
import { countSpan, otlpSpanKind, spanFlags } from './span.js';

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
    w.raw(',"parentSpanId":');
    w.hexId(parent.spanId);
  }
  w.raw(',"flags":');
  w.uint(spanFlags(context.traceFlags, parent?.isRemote));
  w.raw(',"name":');
  w.string(s.name);
  w.intUnlessZero(',"kind":', otlpSpanKind(s.kind));
  w.raw(',"startTimeUnixNano":');
  w.nanos(s.startTime);
  w.raw(',"endTimeUnixNano":');
  w.nanos(s.endTime);
  jsonAttributesOf(w, s.attributes, s.droppedAttributesCount);
  list(w, ',"events":[', s.events, event);
  w.intUnlessZero(',"droppedEventsCount":', s.droppedEventsCount);
  list(w, ',"links":[', s.links, link);
  w.intUnlessZero(',"droppedLinksCount":', s.droppedLinksCount);
  // Status is always there, its code too (0, unset, included), as the official serializers write it.
  const status = s.status;
  w.raw(',"status":{"code":');
  w.int(status.code);
  w.stringUnlessEmpty(',"message":', status.message);
  w.raw('}}');
}

/** The opening of a span or link: its trace id, span id and trace state. */
function ids(w: JsonWriter, context: SpanContextLike): void {
  w.raw('{"traceId":');
  w.hexId(context.traceId);
  w.raw(',"spanId":');
  w.hexId(context.spanId);
  w.stringUnlessEmpty(',"traceState":', context.traceState?.serialize());
}

/** `field` (`,"events":[`), the items, comma-separated, and `]`; nothing for none (as protobuf). */
function list<T>(
  w: JsonWriter,
  field: string,
  items: readonly T[],
  write: (w: JsonWriter, item: T) => void,
): void {
  if (items.length === 0) return;
  w.raw(field);
  for (let i = 0; i < items.length; i++) {
    if (i > 0) w.char(0x2c);
    write(w, items[i] as T);
  }
  w.char(0x5d);
}

function event(w: JsonWriter, e: EventLike): void {
  w.raw('{"timeUnixNano":');
  w.nanos(e.time);
  w.raw(',"name":');
  w.string(e.name);
  jsonAttributesOf(w, e.attributes, e.droppedAttributesCount);
  w.char(0x7d);
}

function link(w: JsonWriter, l: LinkLike): void {
  const context = l.context;
  ids(w, context);
  jsonAttributesOf(w, l.attributes, l.droppedAttributesCount);
  w.raw(',"flags":');
  w.uint(spanFlags(context.traceFlags, context.isRemote));
  w.char(0x7d);
}
