import { dataPointRows } from '../../signals/metrics/rows.js';
import { POINT_FORMATS, type PointFormat } from '../choices.js';
import { type CommandContext, escapedNote, finalNote, rangeSuffix } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { CsvFields, formatInteger, TableWriter } from '../format.js';
import { CSV_COLUMNS, csvRow, TABLE_HEADER, tableCells } from '../point-record.js';
import { readObjects } from '../read-objects.js';
import { wildcardFilter } from '../row-filters.js';
import { jsonLine, printable } from '../terminal-text.js';

export { POINT_FORMATS, type PointFormat };

export interface PointsOptions {
  /** Default: table when stdout is a terminal, else jsonl. */
  format?: PointFormat;
  /** Metric names to keep; `*` matches anything. Empty: every metric. */
  metric: string[];
  /** With csv: every field as stored, none with a leading `'`. */
  csvVerbatim?: boolean;
}

/** How many names of the metrics that are there a "no metric matched" note lists. */
const METRICS_NAMED = 10;

/** `otel-s3 points`: one row per data point, as a table, CSV or JSON lines. */
export async function points(ctx: CommandContext, options: PointsOptions): Promise<number> {
  const format = options.format ?? (ctx.stdoutIsTTY ? 'table' : 'jsonl');
  const keep = wildcardFilter(options.metric);
  const table = format === 'table' ? new TableWriter(ctx.out, TABLE_HEADER, new Set()) : undefined;
  if (format === 'csv') await ctx.out.line(CSV_COLUMNS.join(','));
  // CSV is kept verbatim for files and pipes; a terminal shows its fields, never obeys them.
  const csv = (line: string) => (ctx.stdoutIsTTY ? printable(line) : line);
  const csvFields = new CsvFields(options.csvVerbatim === true);
  let rows = 0;
  let filteredOut = 0;
  /** Names of metrics the filter left out, for the note when it matched none (a few suffice). */
  const others = new Set<string>();
  const { code } = await readObjects(ctx, false, async (object) => {
    for (const row of dataPointRows(object.request)) {
      if (!keep(row.metric)) {
        filteredOut++;
        if (others.size <= METRICS_NAMED) others.add(row.metric);
        continue;
      }
      rows++;
      if (table !== undefined) await table.row(tableCells(row));
      else await ctx.out.line(format === 'csv' ? csv(csvRow(row, csvFields)) : jsonLine(row));
    }
    if (table === undefined) await ctx.out.flush();
  });
  await table?.end();
  await escapedNote(ctx, csvFields);
  // Nothing to read at all has been said already (exit code 5).
  if (rows > 0 || code === EXIT.nothingReadable) return code;
  if (filteredOut === 0) {
    await finalNote(ctx, `no data points in ${ctx.settings.where}${rangeSuffix(ctx.settings)}`);
  } else {
    await finalNote(ctx, noMatchNote(options.metric, filteredOut, others));
  }
  return code;
}

/** `no metric matched --metric "nosuch"; the 36 data points in this range are of a, b, c` */
function noMatchNote(patterns: string[], points: number, metrics: Set<string>): string {
  const filter = patterns.map((p) => `--metric ${JSON.stringify(p)}`).join(' ');
  const names = [...metrics].sort().slice(0, METRICS_NAMED);
  const more = metrics.size > METRICS_NAMED ? ', ...' : '';
  const what =
    points === 1
      ? 'the 1 data point in this range is'
      : `the ${formatInteger(points)} data points in this range are`;
  return `no metric matched ${filter}; ${what} of ${names.join(', ')}${more}`;
}
