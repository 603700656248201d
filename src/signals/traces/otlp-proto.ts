import { protoAttributes } from '../../encoding/any-value-proto.js';
import { hrTimeToNanosParts } from '../../encoding/hrtime.js';
import { FIELD } from '../../encoding/otlp-schema.js';
import { ProtoWriter } from '../../encoding/proto-writer.js';
import type { ExportTally } from '../../encoding/records.js';
import { type ProtoGroupFields, writeProtoGroups } from '../grouped-proto.js';
import {
  countSpan,
  type EventLike,
  type HrTimeLike,
  type LinkLike,
  otlpSpanKind,
  type SpanLike,
  spanFlags,
} from './span.js';

/**
 * Protobuf of one export of spans: its ResourceSpans, each in field 1 of an
 * ExportTraceServiceRequest, so records concatenate into one valid request. The same message as
 * the official ProtobufTraceSerializer's (ids as bytes, flags with HAS_IS_REMOTE and IS_REMOTE,
 * status always present), written in one pass without a sizing pass. An empty export writes
 * nothing.
 */
export function spansToProto(spans: readonly SpanLike[], counted?: ExportTally): Buffer {
  const w = writer;
  w.reset(); // what an export that threw half-way left behind
  tally = counted;
  writeProtoGroups(w, spans, FIELDS, span);
  tally = undefined;
  return w.finish();
}

/** The tally of the export being written, if the caller wants one. */
let tally: ExportTally | undefined;

const F = FIELD;
const S = F.Span;
const E = F['Span.Event'];
const L = F['Span.Link'];
const writer = new ProtoWriter();
const FIELDS: ProtoGroupFields = {
  request: F.ExportTraceServiceRequest.resourceSpans,
  resource: F.ResourceSpans.resource,
  scopes: F.ResourceSpans.scopeSpans,
  resourceSchemaUrl: F.ResourceSpans.schemaUrl,
  scope: F.ScopeSpans.scope,
  items: F.ScopeSpans.spans,
  scopeSchemaUrl: F.ScopeSpans.schemaUrl,
};

function time(w: ProtoWriter, field: number, t: HrTimeLike): void {
  const { lo, hi } = hrTimeToNanosParts(t);
  w.fixed64Parts(field, lo, hi);
}

function span(w: ProtoWriter, s: SpanLike): void {
  countSpan(tally, s);
  const context = s.spanContext();
  const parent = s.parentSpanContext;
  w.hexBytes(S.traceId, context.traceId, true);
  w.hexBytes(S.spanId, context.spanId, true);
  const state = context.traceState?.serialize();
  if (state) w.string(S.traceState, state);
  if (parent?.spanId) w.hexBytes(S.parentSpanId, parent.spanId, true);
  w.string(S.name, s.name, true);
  w.uint(S.kind, otlpSpanKind(s.kind));
  time(w, S.startTimeUnixNano, s.startTime);
  time(w, S.endTimeUnixNano, s.endTime);
  protoAttributes(w, S.attributes, s.attributes);
  count(w, S.droppedAttributesCount, s.droppedAttributesCount);
  for (const e of s.events) event(w, e);
  count(w, S.droppedEventsCount, s.droppedEventsCount);
  for (const l of s.links) link(w, l);
  count(w, S.droppedLinksCount, s.droppedLinksCount);
  const status = s.status;
  w.fork(S.status);
  if (status.message) w.string(F.Status.message, status.message);
  w.int64(F.Status.code, status.code, true);
  w.join();
  w.fixed32(S.flags, spanFlags(context.traceFlags, parent?.isRemote));
}

function event(w: ProtoWriter, e: EventLike): void {
  w.fork(S.events);
  time(w, E.timeUnixNano, e.time);
  w.string(E.name, e.name, true);
  protoAttributes(w, E.attributes, e.attributes);
  count(w, E.droppedAttributesCount, e.droppedAttributesCount);
  w.join();
}

function link(w: ProtoWriter, l: LinkLike): void {
  const context = l.context;
  w.fork(S.links);
  w.hexBytes(L.traceId, context.traceId, true);
  w.hexBytes(L.spanId, context.spanId, true);
  const state = context.traceState?.serialize();
  if (state) w.string(L.traceState, state);
  protoAttributes(w, L.attributes, l.attributes);
  count(w, L.droppedAttributesCount, l.droppedAttributesCount);
  w.fixed32(L.flags, spanFlags(context.traceFlags, context.isRemote));
  w.join();
}

function count(w: ProtoWriter, field: number, value: number | undefined): void {
  if (value) w.uint(field, value);
}
