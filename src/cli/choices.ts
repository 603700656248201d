/**
 * The choices of the commands' flags, apart from the commands themselves: main.ts declares every
 * flag but loads a command's code only when it runs.
 */
/** The severity classes of the logs data model; each spans four numbers (TRACE 1-4 ... FATAL 21-24). */
export const SEVERITIES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const SPAN_STATUSES = ['unset', 'ok', 'error'] as const;
export type SpanStatus = (typeof SPAN_STATUSES)[number];

export const POINT_FORMATS = ['table', 'csv', 'jsonl'] as const;
export type PointFormat = (typeof POINT_FORMATS)[number];

export const ROW_FORMATS = ['table', 'csv', 'jsonl'] as const;
export type RowFormat = (typeof ROW_FORMATS)[number];

export const TRACE_FORMATS = ['waterfall', 'jsonl'] as const;
export type TraceFormat = (typeof TRACE_FORMATS)[number];
