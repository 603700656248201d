import { type SpanRow, type SpanStatusName, spanRows } from '../../signals/traces/rows.js';
import type { CommandContext } from '../context.js';
import {
  commonRowFilter,
  durationText,
  isoNanos,
  keyValues,
  tableTime,
  wildcardFilter,
} from '../row-filters.js';
import { printRows, type RowCommand, type RowFormat } from './row-command.js';

export interface SpansOptions {
  /** Default: table when stdout is a terminal, else jsonl. */
  format?: RowFormat;
  /** With csv: every field as stored, none with a leading `'`. */
  csvVerbatim?: boolean;
  /** service.name patterns (`*` a wildcard); any service when empty. */
  service: string[];
  /** Span name patterns. */
  name: string[];
  status?: SpanStatusName;
  /** `key=value` or `key`, all of which must match (span attributes, then resource). */
  attribute: string[];
  /** 32 hex digits, lower case. */
  traceId?: string;
  /** Only spans at least this long, in nanoseconds. */
  minDuration?: bigint;
}

/** Every field of a SpanRow, in order: the CSV columns. */
export const SPAN_COLUMNS = [
  'time',
  'end',
  'duration',
  'traceId',
  'spanId',
  'parentSpanId',
  'name',
  'kind',
  'status',
  'statusMessage',
  'service',
  'resource',
  'scope',
  'attributes',
  'events',
  'links',
  'traceState',
] as const satisfies readonly (keyof SpanRow)[];

/** `otel-s3 spans`: one row per span, as a table, CSV or JSON lines. */
export function spans(ctx: CommandContext, options: SpansOptions): Promise<number> {
  const common = commonRowFilter(options);
  const name = wildcardFilter(options.name);
  const command: RowCommand<SpanRow> = {
    signal: 'traces',
    noun: 'span',
    rows: spanRows,
    keep: (row) =>
      (options.status === undefined || row.status === options.status) &&
      (options.minDuration === undefined || spanNanos(row) >= options.minDuration) &&
      name(row.name) &&
      common(row),
    csvColumns: SPAN_COLUMNS,
    tableHeader: [
      'time (UTC)',
      'duration',
      'service',
      'name',
      'kind',
      'status',
      'trace id',
      'attributes',
    ],
    tableCells: (row) => [
      tableTime(row.time),
      durationText(row.duration),
      row.service,
      row.name,
      row.kind,
      row.status,
      row.traceId,
      keyValues(row.attributes),
    ],
    rightAligned: new Set([1]),
    traceId: options.traceId,
  };
  return printRows(ctx, command, options.format, options.csvVerbatim === true);
}

/** The span's duration in nanoseconds, exactly (its row's `duration` is rounded); 0 as there. */
const spanNanos = (row: SpanRow): bigint =>
  row.time === '' || row.end === '' ? 0n : isoNanos(row.end) - isoNanos(row.time);
