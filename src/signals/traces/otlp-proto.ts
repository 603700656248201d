import { attributeFields, protoAttributesOf } from '../../encoding/any-value-proto.js';
import { checkDropped, FIELD } from '../../encoding/otlp-schema.js';
import type { ProtoWriter } from '../../encoding/proto-writer.js';
import { groupedProto } from '../grouped-proto.js';
import type { EventLike, LinkLike, SpanContextLike, SpanLike } from './span.js';
import { countSpan, otlpSpanKind, spanFlags, statusCode } from './span.js';

/**
 * Protobuf of one export of spans (see groupedProto()): its ResourceSpans, each in field 1 of an
 * ExportTraceServiceRequest. The same message as the official ProtobufTraceSerializer's (ids as
 * bytes, flags with HAS_IS_REMOTE and IS_REMOTE, status always present).
 */
export const spansToProto = groupedProto<SpanLike>({ count: countSpan, write: span });

const F = FIELD;
const S = F.Span;
const E = F['Span.Event'];
const L = F['Span.Link'];
const SPAN_ATTRIBUTES = attributeFields(S);
const EVENT_ATTRIBUTES = attributeFields(E);
const LINK_ATTRIBUTES = attributeFields(L);

function span(w: ProtoWriter, s: SpanLike): void {
  const context = s.spanContext();
  const parent = s.parentSpanContext;
  ids(w, S, context);
  if (parent?.spanId) w.hexBytes(S.parentSpanId, parent.spanId, true);
  w.string(S.name, s.name, true);
  w.uint(S.kind, otlpSpanKind(s.kind));
  w.nanos(S.startTimeUnixNano, s.startTime);
  w.nanos(S.endTimeUnixNano, s.endTime);
  protoAttributesOf(w, SPAN_ATTRIBUTES, s.attributes, s.droppedAttributesCount);
  for (const e of s.events) event(w, e);
  checkDropped('a dropped events count', s.droppedEventsCount);
  count(w, S.droppedEventsCount, s.droppedEventsCount);
  for (const l of s.links) link(w, l);
  checkDropped('a dropped links count', s.droppedLinksCount);
  count(w, S.droppedLinksCount, s.droppedLinksCount);
  const status = s.status;
  w.fork(S.status);
  if (status.message) w.string(F.Status.message, status.message);
  w.int64(F.Status.code, statusCode(status.code), true);
  w.join();
  w.fixed32(S.flags, spanFlags(context.traceFlags, parent?.isRemote));
}

/** A span's or link's trace id, span id and trace state (fields 1, 2 and 3 of both). */
function ids(w: ProtoWriter, M: typeof S | typeof L, context: SpanContextLike): void {
  w.hexBytes(M.traceId, context.traceId, true);
  w.hexBytes(M.spanId, context.spanId, true);
  const state = context.traceState?.serialize();
  if (state) w.string(M.traceState, state);
}

function event(w: ProtoWriter, e: EventLike): void {
  w.fork(S.events);
  w.nanos(E.timeUnixNano, e.time);
  w.string(E.name, e.name, true);
  protoAttributesOf(w, EVENT_ATTRIBUTES, e.attributes, e.droppedAttributesCount);
  w.join();
}

function link(w: ProtoWriter, l: LinkLike): void {
  const context = l.context;
  w.fork(S.links);
  ids(w, L, context);
  protoAttributesOf(w, LINK_ATTRIBUTES, l.attributes, l.droppedAttributesCount);
  w.fixed32(L.flags, spanFlags(context.traceFlags, context.isRemote));
  w.join();
}

function count(w: ProtoWriter, field: number, value: number | undefined): void {
  if (value) w.uint(field, value);
}
