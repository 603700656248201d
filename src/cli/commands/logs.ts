import { type LogRecordRow, logRecordRows, severityNumberOf } from '../../signals/logs/rows.js';
import { valueText } from '../../signals/plain-values.js';
import { SEVERITIES, type Severity } from '../choices.js';
import type { CommandContext } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { commonRowFilter, keyValues, tableTime, wildcardFilter } from '../row-filters.js';
import { printRows, type RowCommand, type RowFormat } from './row-command.js';

export { SEVERITIES, type Severity };

export interface LogsOptions {
  /** Default: table when stdout is a terminal, else jsonl. */
  format?: RowFormat;
  /** With csv: every field as stored, none with a leading `'`. */
  csvVerbatim?: boolean;
  service: string[];
  /** This class and above. */
  severity?: Severity;
  attribute: string[];
  /** 32 hex digits, lower case. */
  traceId?: string;
  /** 16 hex digits, lower case. */
  spanId?: string;
  /** Event name patterns. */
  eventName: string[];
  /** Text the body (as text: JSON for a map or list) holds. */
  body?: string;
}

/** Every field of a LogRecordRow, in order: the CSV columns. */
export const LOG_RECORD_COLUMNS = [
  'time',
  'observedTime',
  'severity',
  'severityNumber',
  'body',
  'traceId',
  'spanId',
  'eventName',
  'service',
  'resource',
  'scope',
  'attributes',
] as const satisfies readonly (keyof LogRecordRow)[];

/** `otel-s3 logs`: one row per log record, as a table, CSV or JSON lines. */
export function logs(ctx: CommandContext, options: LogsOptions): Promise<number> {
  if (options.body === '') throw new UsageError('--body "": give the text the body must hold');
  const common = commonRowFilter(options);
  const eventName = wildcardFilter(options.eventName);
  const least = options.severity === undefined ? 0 : SEVERITIES.indexOf(options.severity) * 4 + 1;
  const body = options.body;
  const command: RowCommand<LogRecordRow> = {
    signal: 'logs',
    noun: 'log record',
    rows: logRecordRows,
    keep: (row) =>
      (options.spanId === undefined || row.spanId.toLowerCase() === options.spanId) &&
      (least === 0 || severityNumberOf(row) >= least) &&
      eventName(row.eventName) &&
      (body === undefined || valueText(row.body).includes(body)) &&
      common(row),
    csvColumns: LOG_RECORD_COLUMNS,
    // The body as the table and --body have it: the same text whatever the object's format.
    csvRow: (row) => ({ ...row, body: valueText(row.body) }),
    tableHeader: ['time (UTC)', 'severity', 'service', 'trace id', 'body', 'attributes'],
    tableCells: (row) => [
      tableTime(row.time),
      row.severity,
      row.service,
      row.traceId,
      valueText(row.body),
      keyValues(row.attributes),
    ],
    rightAligned: new Set(),
    traceId: options.traceId,
  };
  return printRows(ctx, command, options.format, options.csvVerbatim === true);
}
