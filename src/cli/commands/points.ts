import { dataPointRows } from '../../reader/points.js';
import { type CommandContext, finalNote } from '../context.js';
import { TableWriter } from '../format.js';
import { CSV_COLUMNS, csvRow, pointRecord, TABLE_HEADER, tableCells } from '../point-record.js';
import { readObjects } from '../read-objects.js';
import { jsonLine } from '../terminal-text.js';

export const POINT_FORMATS = ['table', 'csv', 'jsonl'] as const;
export type PointFormat = (typeof POINT_FORMATS)[number];

export interface PointsOptions {
  /** Default: table when stdout is a terminal, else jsonl. */
  format?: PointFormat;
  /** Metric names to keep; `*` matches anything. Empty: every metric. */
  metric: string[];
}

/** `otel-s3 points`: one row per data point, as a table, CSV or JSON lines. */
export async function points(ctx: CommandContext, options: PointsOptions): Promise<number> {
  const format = options.format ?? (ctx.stdoutIsTTY ? 'table' : 'jsonl');
  const keep = metricFilter(options.metric);
  const table = format === 'table' ? new TableWriter(ctx.out, TABLE_HEADER, new Set()) : undefined;
  if (format === 'csv') await ctx.out.line(CSV_COLUMNS.join(','));
  let rows = 0;
  const { code } = await readObjects(ctx, false, async (object) => {
    for (const row of dataPointRows(object.request)) {
      if (!keep(row.metric)) continue;
      const record = pointRecord(row);
      rows++;
      if (table !== undefined) await table.row(tableCells(record));
      else await ctx.out.line(format === 'csv' ? csvRow(record) : jsonLine(record));
    }
    if (table === undefined) await ctx.out.flush();
  });
  await table?.end();
  if (rows === 0) await finalNote(ctx, `no data points in ${ctx.settings.where} for this range`);
  return code;
}

/** Exact names, or patterns with `*`. */
function metricFilter(patterns: string[]): (metric: string) => boolean {
  if (patterns.length === 0) return () => true;
  const regexes = patterns.map((p) => new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`));
  return (metric) => regexes.some((r) => r.test(metric));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
