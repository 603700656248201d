import {
  type Context,
  context,
  createTraceState,
  SpanKind,
  TraceFlags,
  trace,
} from '@opentelemetry/api';

/** The trace the signal tests' spans and log records belong to. */
export const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
/** The span they are children of, or were emitted in. */
export const PARENT_ID = 'b7ad6b7169203331';

/** Every span kind, in the API's order. */
export const SPAN_KINDS = [
  SpanKind.INTERNAL,
  SpanKind.SERVER,
  SpanKind.CLIENT,
  SpanKind.PRODUCER,
  SpanKind.CONSUMER,
];

/** The active context with a remote, sampled parent PARENT_ID of TRACE_ID, with a trace state. */
export function remoteParentContext(): Context {
  return trace.setSpanContext(context.active(), {
    traceId: TRACE_ID,
    spanId: PARENT_ID,
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: createTraceState('vendor=abc,other=1'),
  });
}

/** The active context inside the local, sampled span PARENT_ID of TRACE_ID (for log records). */
export function inSpanContext(): Context {
  return trace.setSpanContext(context.active(), {
    traceId: TRACE_ID,
    spanId: PARENT_ID,
    traceFlags: TraceFlags.SAMPLED,
  });
}
