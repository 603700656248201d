import { type ExportTally, noteTime } from '../../encoding/records.js';
import type { AttributeMap, Scoped } from '../otlp-groups.js';

/**
 * A span as the OTLP encoders read it: the fields of the SDK's ReadableSpan, typed structurally so
 * that both SDK lines' spans fit (sdk-trace 3.x on API 1.10, whose attribute values may be maps,
 * bytes or nested arrays; sdk-trace(-base) 2.x on API 1.9). Enums are numbers (the API's
 * SpanKind and SpanStatusCode).
 */
export interface SpanLike extends Scoped {
  readonly name: string;
  /** The API's SpanKind (INTERNAL 0 … CONSUMER 4); OTLP's is one more. */
  readonly kind: number;
  /** A method in the SDK (and its records' public fields are getters): read, never spread. */
  spanContext(): SpanContextLike;
  readonly parentSpanContext?: SpanContextLike | undefined;
  readonly startTime: HrTimeLike;
  readonly endTime: HrTimeLike;
  readonly status: { readonly code: number; readonly message?: string | undefined };
  readonly attributes: AttributeMap;
  readonly links: readonly LinkLike[];
  readonly events: readonly EventLike[];
  readonly droppedAttributesCount: number;
  readonly droppedEventsCount: number;
  readonly droppedLinksCount: number;
}

/** The API's HrTime: [seconds, nanoseconds]. */
export type HrTimeLike = readonly [number, number];

export interface SpanContextLike {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly isRemote?: boolean | undefined;
  readonly traceState?: { serialize(): string } | undefined;
}

export interface LinkLike {
  readonly context: SpanContextLike;
  readonly attributes?: AttributeMap | undefined;
  readonly droppedAttributesCount?: number | undefined;
}

export interface EventLike {
  readonly time: HrTimeLike;
  readonly name: string;
  readonly attributes?: AttributeMap | undefined;
  readonly droppedAttributesCount?: number | undefined;
}

/** OTLP's SpanFlags: HAS_IS_REMOTE, set by the official serializers on every span and link. */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/**
 * A span's or link's `flags`: the W3C trace flags (low 8 bits), HAS_IS_REMOTE, and IS_REMOTE if
 * the parent (a link: its target) is remote, as the official serializers set them.
 */
export function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

/** OTLP's SpanKind: the API's plus one (0, unspecified, for none). */
export function otlpSpanKind(kind: number | undefined | null): number {
  if (kind == null) return 0;
  // Another number is no kind: OTLP has none for it, and no format may write one of its own.
  if (!(Number.isInteger(kind) && kind >= 0 && kind <= 4)) {
    throw new RangeError(
      `a span kind ${kind} is not one of the API's SpanKind values: a whole number from 0 (INTERNAL) to 4 (CONSUMER)`,
    );
  }
  return kind + 1;
}

/** A span's status code (the API's SpanStatusCode, OTLP's alike); throws for another number. */
export function statusCode(code: number): number {
  if (!(code === 0 || code === 1 || code === 2)) {
    throw new RangeError(
      `a status code ${code} is not one of the API's SpanStatusCode values: 0 (UNSET), 1 (OK) or 2 (ERROR)`,
    );
  }
  return code;
}

/** Counts a span into the export's tally: one item, at its end time (a span is exported when it ends). */
export function countSpan(tally: ExportTally, span: SpanLike): void {
  tally.items++;
  if (tally.times) noteTime(tally, span.endTime);
}
