import { jsonAttributesField } from '../../encoding/any-value-json.js';
import { JsonWriter } from '../../encoding/json-writer.js';
import type { ExportTally } from '../../encoding/records.js';
import { type JsonGroupFields, writeJsonGroups } from '../grouped-json.js';
import {
  countSpan,
  type EventLike,
  type LinkLike,
  otlpSpanKind,
  type SpanLike,
  spanFlags,
} from './span.js';

/**
 * OTLP/JSON of one export of spans, written straight as UTF-8 bytes (no object tree, no
 * JSON.stringify): its ResourceSpans objects, comma-separated, one per resource, as elements of
 * an ExportTraceServiceRequest's `resourceSpans` (jsonRecords() frames them). The spellings of
 * the OTLP/JSON rules: ids in lower-case hex, times as decimal strings, enums as integers, values
 * as in any-value-json.ts. It decodes to the same message as our protobuf (otlp-proto.ts) and the
 * official ProtobufTraceSerializer's; fields at their default (0, empty lists) are left out where
 * protobuf leaves them out. An empty export writes nothing (no record can be made of it).
 */
export function spansToJsonBytes(spans: readonly SpanLike[], counted?: ExportTally): Buffer {
  const w = writer;
  w.reset(); // what an export that threw half-way left behind
  tally = counted;
  writeJsonGroups(w, spans, FIELDS, span);
  tally = undefined;
  return w.finish();
}

/** The same JSON as a string (for tests and tools). */
export function spansToJson(spans: readonly SpanLike[]): string {
  return spansToJsonBytes(spans).toString('utf8');
}

const writer = new JsonWriter();
/** The tally of the export being written, if the caller wants one. */
let tally: ExportTally | undefined;
const FIELDS: JsonGroupFields = { scopes: ',"scopeSpans":[', items: ',"spans":[' };
const COMMA = 0x2c;

function span(w: JsonWriter, s: SpanLike): void {
  countSpan(tally, s);
  const context = s.spanContext();
  const parent = s.parentSpanContext;
  w.raw('{"traceId":');
  w.hexId(context.traceId);
  w.raw(',"spanId":');
  w.hexId(context.spanId);
  traceState(w, context.traceState);
  if (parent?.spanId) {
    w.raw(',"parentSpanId":');
    w.hexId(parent.spanId);
  }
  w.raw(',"flags":');
  w.uint(spanFlags(context.traceFlags, parent?.isRemote));
  w.raw(',"name":');
  w.string(s.name);
  const kind = otlpSpanKind(s.kind);
  if (kind !== 0) {
    w.raw(',"kind":');
    w.int(kind);
  }
  w.raw(',"startTimeUnixNano":');
  w.nanos(s.startTime);
  w.raw(',"endTimeUnixNano":');
  w.nanos(s.endTime);
  jsonAttributesField(w, ',"attributes":', s.attributes);
  count(w, ',"droppedAttributesCount":', s.droppedAttributesCount);
  const events = s.events;
  if (events.length > 0) {
    w.raw(',"events":[');
    for (let i = 0; i < events.length; i++) {
      if (i > 0) w.char(COMMA);
      event(w, events[i] as EventLike);
    }
    w.char(0x5d);
  }
  count(w, ',"droppedEventsCount":', s.droppedEventsCount);
  const links = s.links;
  if (links.length > 0) {
    w.raw(',"links":[');
    for (let i = 0; i < links.length; i++) {
      if (i > 0) w.char(COMMA);
      link(w, links[i] as LinkLike);
    }
    w.char(0x5d);
  }
  count(w, ',"droppedLinksCount":', s.droppedLinksCount);
  // Status is always there, its code too (0, unset, included), as the official serializers write it.
  const status = s.status;
  w.raw(',"status":{"code":');
  w.int(status.code);
  if (status.message) {
    w.raw(',"message":');
    w.string(status.message);
  }
  w.raw('}}');
}

function event(w: JsonWriter, e: EventLike): void {
  w.raw('{"timeUnixNano":');
  w.nanos(e.time);
  w.raw(',"name":');
  w.string(e.name);
  jsonAttributesField(w, ',"attributes":', e.attributes);
  count(w, ',"droppedAttributesCount":', e.droppedAttributesCount);
  w.char(0x7d);
}

function link(w: JsonWriter, l: LinkLike): void {
  const context = l.context;
  w.raw('{"traceId":');
  w.hexId(context.traceId);
  w.raw(',"spanId":');
  w.hexId(context.spanId);
  traceState(w, context.traceState);
  jsonAttributesField(w, ',"attributes":', l.attributes);
  count(w, ',"droppedAttributesCount":', l.droppedAttributesCount);
  w.raw(',"flags":');
  w.uint(spanFlags(context.traceFlags, context.isRemote));
  w.char(0x7d);
}

function traceState(w: JsonWriter, state: { serialize(): string } | undefined): void {
  const text = state?.serialize();
  if (!text) return;
  w.raw(',"traceState":');
  w.string(text);
}

/** A count, left out at 0 (as protobuf leaves it out). */
function count(w: JsonWriter, field: string, value: number | undefined): void {
  if (!value) return;
  w.raw(field);
  w.int(value);
}
