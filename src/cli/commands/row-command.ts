import type { OtlpObject } from '../../encoding/otlp-proto-decode.js';
import type { SignalName } from '../../layout/formats.js';
import { ROW_FORMATS, type RowFormat } from '../choices.js';
import { type CommandContext, escapedNote, finalNote, rangeSuffix } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { CsvFields, plural, TableWriter } from '../format.js';
import { readObjects } from '../read-objects.js';
import { csvLine } from '../row-filters.js';
import { jsonLine, printable } from '../terminal-text.js';

export { ROW_FORMATS, type RowFormat };

/** What one command that prints a signal's rows (`spans`, `logs`) is made of. */
export interface RowCommand<Row extends { service: string }> {
  signal: SignalName;
  /** `span`, `log record`: for the notes. */
  noun: string;
  rows(request: OtlpObject): Row[];
  keep(row: Row): boolean;
  /** Every field of the row, in order: the CSV header (and what jsonl prints, as an object). */
  csvColumns: readonly (keyof Row & string)[];
  /** The row as CSV prints it, when some field is printed otherwise than as the row holds it. */
  csvRow?(row: Row): Row;
  tableHeader: string[];
  /** Table cells; escaped for the terminal here. */
  tableCells(row: Row): string[];
  /** Columns of the table aligned right. */
  rightAligned: ReadonlySet<number>;
  /**
   * `--trace-id`: the reader keeps that trace's items only (and decodes only the Parquet row
   * groups that may hold it), so the notes count that trace's rows, not the range's.
   */
  traceId?: string | undefined;
}

/**
 * Reads the signal's objects in the range and prints the rows `keep` takes, as a table (the
 * default on a terminal), CSV or JSON lines (each line one row, field for field).
 */
export async function printRows<Row extends { service: string }>(
  ctx: CommandContext,
  command: RowCommand<Row>,
  format: RowFormat | undefined,
  csvVerbatim = false,
): Promise<number> {
  const as = format ?? (ctx.stdoutIsTTY ? 'table' : 'jsonl');
  const table =
    as === 'table'
      ? new TableWriter(ctx.out, command.tableHeader, command.rightAligned)
      : undefined;
  if (as === 'csv') await ctx.out.line(command.csvColumns.join(','));
  // CSV is kept verbatim for files and pipes; a terminal shows its fields, never obeys them.
  const csv = (line: string) => (ctx.stdoutIsTTY ? printable(line) : line);
  const csvFields = new CsvFields(csvVerbatim);
  let printed = 0;
  let filteredOut = 0;
  /** The services of the rows left out, for the note when none was kept (a few suffice). */
  const services = new Set<string>();
  const { code } = await readObjects(
    ctx,
    false,
    async (object) => {
      for (const row of command.rows(object.request)) {
        if (!command.keep(row)) {
          filteredOut++;
          if (services.size <= SERVICES_NAMED) services.add(row.service);
          continue;
        }
        printed++;
        if (table !== undefined) await table.row(command.tableCells(row).map(printable));
        else if (as === 'csv') {
          const fields = command.csvRow?.(row) ?? row;
          await ctx.out.line(csv(csvLine(fields, command.csvColumns, csvFields)));
        } else await ctx.out.line(jsonLine(row));
      }
      if (table === undefined) await ctx.out.flush();
    },
    [command.signal],
    command.traceId,
  );
  await table?.end();
  await escapedNote(ctx, csvFields);
  if (printed > 0 || code === EXIT.nothingReadable) return code;
  const ofTrace = command.traceId === undefined ? '' : ` of trace ${command.traceId}`;
  if (filteredOut === 0) {
    await finalNote(
      ctx,
      `no ${command.noun}s${ofTrace} in ${ctx.settings.where}${rangeSuffix(ctx.settings)}`,
    );
  } else {
    await finalNote(
      ctx,
      `no ${command.noun} matched the filters, of ${plural(filteredOut, command.noun)}${ofTrace} in this range, ${servicesText(services)}`,
    );
  }
  return code;
}

const SERVICES_NAMED = 10;

/** `of the services cart, checkout`: what a misspelled `--service` would have found. */
function servicesText(services: Set<string>): string {
  const names = [...services]
    .sort()
    .slice(0, SERVICES_NAMED)
    .map((name) => (name === '' ? '(no service.name)' : name));
  const more = services.size > SERVICES_NAMED ? ', ...' : '';
  return `of the service${services.size === 1 ? '' : 's'} ${names.join(', ')}${more}`;
}
