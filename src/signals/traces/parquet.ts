import { lowerHexText } from '../../encoding/hex-id.js';
import { checkDropped } from '../../encoding/otlp-schema.js';
import type { ExportTally } from '../../encoding/records.js';
import { appendScopedRows } from '../flat-append.js';
import { FlatColumnBuilders, type FlatStore } from '../flat-parquet/store.js';
import { EVENTS, LINKS, SPAN, SPAN_KIND_TEXT, SPANS, STATUS_CODE_TEXT } from './parquet-schema.js';
import { countSpan, otlpSpanKind, type SpanLike, statusCode } from './span.js';

/**
 * Spans into the columns of the `otel_traces` table (parquet-schema.js), with the values the
 * Collector's ClickHouse exporter writes: ids in lower-case hex (lowerHexText: an id the SDK
 * holds in upper case is stored as the OTLP formats carry it), the kind and status code as its
 * words, the duration in nanoseconds, attribute values as text (jsValueText).
 */
export function appendSpans(
  store: FlatStore,
  spans: readonly SpanLike[],
  tally: ExportTally,
): void {
  appendScopedRows(
    store,
    spans,
    tally,
    countSpan,
    ({ scope, resourceSet, service }) =>
      (span, r) => {
        const context = span.spanContext();
        checkSpanDropped(span);
        store.nanos(SPAN.TIMESTAMP, r, span.startTime);
        store.text(SPAN.TRACE_ID, r, lowerHexText(context.traceId));
        store.text(SPAN.SPAN_ID, r, lowerHexText(context.spanId));
        store.text(SPAN.PARENT_SPAN_ID, r, lowerHexText(span.parentSpanContext?.spanId ?? ''));
        store.string(SPAN.TRACE_STATE, r, context.traceState?.serialize() ?? '');
        store.string(SPAN.SPAN_NAME, r, span.name);
        store.string(SPAN.SPAN_KIND, r, SPAN_KIND_TEXT[otlpSpanKind(span.kind)] as string);
        store.string(SPAN.SERVICE_NAME, r, service);
        store.set(SPAN.RESOURCE_ATTRIBUTES, r, resourceSet);
        store.string(SPAN.SCOPE_NAME, r, scope.name);
        store.string(SPAN.SCOPE_VERSION, r, scope.version ?? '');
        store.attributes(SPAN.SPAN_ATTRIBUTES, r, span.attributes);
        // Each part cut to an integer, as the Timestamp (and the official serializers) read it.
        const s0 = Math.trunc(span.startTime[0]);
        const n0 = Math.trunc(span.startTime[1]);
        const s1 = Math.trunc(span.endTime[0]);
        const n1 = Math.trunc(span.endTime[1]);
        // Signed, as recorded: the reader's end is start + Duration, so a span without an end
        // (or one that ended before it started) reads back as it was, not as ending at its start.
        // An end past INT64 makes the batch late (no file) as a start does: a reader's end would
        // overflow. A Duration past INT64 (an end or a start past it) is kept as its 64 bits: the
        // fallback's end, Timestamp + Duration modulo 2^64, is exact all the same.
        store.checkNanos('the end (Timestamp + Duration)', span.endTime);
        const duration = (s1 - s0) * 1e9 + (n1 - n0); // exact below 2^53 ns (104 days)
        if (Number.isSafeInteger(duration)) store.int64(SPAN.DURATION, r, duration);
        else store.int64Big(SPAN.DURATION, r, exactNanos(s1 - s0, n1 - n0));
        store.string(SPAN.STATUS_CODE, r, STATUS_CODE_TEXT[statusCode(span.status.code)] as string);
        store.string(SPAN.STATUS_MESSAGE, r, span.status.message ?? '');
        for (const event of span.events) {
          const i = store.addItem(EVENTS, r);
          store.nanos(SPAN.EVENT_TIMESTAMP, i, event.time);
          store.string(SPAN.EVENT_NAME, i, event.name);
          store.attributes(SPAN.EVENT_ATTRIBUTES, i, event.attributes);
        }
        for (const link of span.links) {
          const i = store.addItem(LINKS, r);
          store.text(SPAN.LINK_TRACE_ID, i, lowerHexText(link.context.traceId));
          store.text(SPAN.LINK_SPAN_ID, i, lowerHexText(link.context.spanId));
          store.string(SPAN.LINK_TRACE_STATE, i, link.context.traceState?.serialize() ?? '');
          store.attributes(SPAN.LINK_ATTRIBUTES, i, link.attributes);
        }
      },
  );
}

/**
 * The dropped counts of a span, its events and links: no column keeps them, but one the OTLP
 * formats refuse (checkDropped) is refused here too.
 */
function checkSpanDropped(span: SpanLike): void {
  checkDropped('a dropped attributes count', span.droppedAttributesCount);
  checkDropped('a dropped events count', span.droppedEventsCount);
  checkDropped('a dropped links count', span.droppedLinksCount);
  for (const e of span.events) checkDropped('a dropped attributes count', e.droppedAttributesCount);
  for (const l of span.links) checkDropped('a dropped attributes count', l.droppedAttributesCount);
}

/**
 * Seconds and nanoseconds as nanoseconds, exactly: past 2^53 (a span of months, or one from a
 * zero start) a double would lose the last digits, and the end read back (start + duration) with
 * them.
 */
const exactNanos = (seconds: number, nanos: number): bigint =>
  BigInt(seconds) * 1_000_000_000n + BigInt(nanos);

/** The Parquet column builders of spans. */
export const spanColumnBuilders = (): FlatColumnBuilders<readonly SpanLike[]> =>
  new FlatColumnBuilders(SPANS, appendSpans);
