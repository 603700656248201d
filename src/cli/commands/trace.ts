import { type LogRecordRow, logRecordRows } from '../../signals/logs/rows.js';
import { valueText } from '../../signals/plain-values.js';
import { type SpanRow, spanRows } from '../../signals/traces/rows.js';
import { TRACE_FORMATS, type TraceFormat } from '../choices.js';
import { type CommandContext, finalNote, rangeSuffix } from '../context.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { alignRow, columnWidths, plural } from '../format.js';
import { readObjects } from '../read-objects.js';
import { durationText, isoNanos, parentOf, tableTime } from '../row-filters.js';
import { cutToCells, jsonLine, printable, textCells } from '../terminal-text.js';

export { TRACE_FORMATS, type TraceFormat };

export interface TraceOptions {
  /** 32 hex digits, lower case. */
  traceId: string;
  /** Default waterfall. */
  format?: TraceFormat;
  /** Put the trace's log records under their spans (waterfall only). */
  logs: boolean;
  /**
   * Cells of the bar, 10-200. Default 40, and on a terminal that reports its width, what fits
   * it (the name column cut too).
   */
  width?: number;
}

/** Longest name column, prefix included: longer names are cut with `…`. */
const NAME_WIDTH = 60;
/** The bar's cells by default. */
const WIDTH = 40;
/**
 * Fitting a terminal, the name column and the bar are narrowed to these first, then the bar to
 * its least (10, or the trace's duration text), then the names to what is left.
 */
const FIT_NAME = 20;
const FIT_BAR = 20;
/**
 * Deeper than this, the tree's prefix is its depth and last levels (`…[27] │  └─ `): at most 40
 * of the name column's characters, the rest the name's.
 */
const DEEP = 10;

/** A line of the waterfall: a span, or a log record under its span. */
type Item = { span: SpanRow } | { log: LogRecordRow };

/** A span with its place in the tree. */
interface Placed {
  item: Item;
  /** `│  ├─ `: the tree's lines before it. */
  prefix: string;
}

/**
 * `otel-s3 trace <id>`: the spans of one trace as a waterfall (each under its parent, a bar for
 * its start and duration, its status and service), with `--logs` its log records under their
 * spans; `--format jsonl` prints the spans as rows (SpanRow), in the waterfall's order.
 */
export async function traceCommand(ctx: CommandContext, options: TraceOptions): Promise<number> {
  const format = options.format ?? 'waterfall';
  if (options.logs && format === 'jsonl') {
    throw new UsageError(
      `--logs goes with the waterfall; for the trace's log records as rows: otel-s3 logs --trace-id ${options.traceId} --format jsonl`,
    );
  }
  if (options.width !== undefined && format === 'jsonl') {
    throw new UsageError(
      `--width ${options.width} goes with the waterfall, not --format jsonl (it sets the cells of its bar)`,
    );
  }
  const spans = new Map<string, SpanRow>();
  const logs: LogRecordRow[] = [];
  let duplicates = 0;
  const differing = new Set<string>();
  const logTexts = new Set<string>();
  let logDuplicates = 0;
  const { code } = await readObjects(
    ctx,
    true,
    async (object) => {
      if (object.signal === 'logs') {
        for (const row of logRecordRows(object.request)) {
          if (row.traceId.toLowerCase() !== options.traceId) continue;
          // A record has no id: the same contents twice (an object copied, as spans are) is
          // the same record, shown once.
          const text = contents(row);
          if (logTexts.has(text)) logDuplicates++;
          else {
            logTexts.add(text);
            logs.push(row);
          }
        }
        return;
      }
      for (const row of spanRows(object.request)) {
        if (row.traceId.toLowerCase() !== options.traceId) continue;
        // The same span twice (an object copied under the prefix): shown once. A span id again
        // with other contents is not the same span: said, the first read kept.
        const id = row.spanId.toLowerCase();
        const first = spans.get(id);
        if (first === undefined) spans.set(id, row);
        else if (contents(first) === contents(row)) duplicates++;
        else differing.add(id);
      }
    },
    options.logs ? ['traces', 'logs'] : ['traces'],
    // The reader decodes only the Parquet row groups that may hold the trace.
    options.traceId,
  );
  if (spans.size === 0) {
    if (code !== EXIT.nothingReadable) {
      await finalNote(
        ctx,
        `no span of trace ${options.traceId} in ${ctx.settings.where}${rangeSuffix(ctx.settings)}${
          // --logs read its records: a waterfall without spans has no place for them, but they
          // are there, and not to be passed over in silence.
          logs.length === 0
            ? ''
            : `; ${plural(logs.length, 'log record')} of it: otel-s3 logs --trace-id ${options.traceId}`
        }`,
      );
    }
    // Not found is said in the exit code too, as `kubectl get` does: a script tells it from a
    // trace printed. An unreadable object may hold the trace: its code (1) is kept.
    return code === EXIT.ok ? EXIT.notFound : code;
  }
  const { placed, orphans, ownParents, cycles } = tree([...spans.values()], logs);
  if (format === 'jsonl') {
    for (const { item } of placed) if ('span' in item) await ctx.out.line(jsonLine(item.span));
  } else {
    const layout =
      options.width !== undefined
        ? { width: options.width }
        : {
            width: WIDTH,
            ...(ctx.stdoutColumns === undefined ? {} : { columns: ctx.stdoutColumns }),
          };
    for (const line of waterfall(options.traceId, placed, layout)) await ctx.out.line(line);
  }
  if (ownParents > 0) {
    await finalNote(
      ctx,
      `${plural(ownParents, 'span')} of this trace ${ownParents === 1 ? 'names itself as its parent' : 'name themselves as their parents'}: shown at the top level`,
    );
  }
  if (cycles > 0) {
    await finalNote(
      ctx,
      `${plural(cycles, 'cycle')} of parents in this trace: each shown from its earliest span, at the top level`,
    );
  }
  if (orphans > 0) {
    await finalNote(
      ctx,
      `${plural(orphans, 'span')} of this trace ${orphans === 1 ? 'has a parent' : 'have parents'} not found${ctx.settings.from === undefined && ctx.settings.to === undefined ? '' : ' in this range'}: shown at the top level`,
    );
  }
  if (duplicates > 0) {
    await finalNote(ctx, `${plural(duplicates, 'span')} stored twice, shown once`);
  }
  if (logDuplicates > 0) {
    await finalNote(ctx, `${plural(logDuplicates, 'log record')} stored twice, shown once`);
  }
  if (differing.size > 0) {
    const ids = [...differing];
    await finalNote(
      ctx,
      `${plural(ids.length, 'span id')} stored with other contents too (the first read shown): ${printable(ids.slice(0, 3).join(', '))}${ids.length > 3 ? ', …' : ''}`,
    );
  }
  return code;
}

/** A row as text to compare, its ids in lower case: hex ids in either case are the same. */
const contents = (row: SpanRow | LogRecordRow): string =>
  JSON.stringify({
    ...row,
    traceId: row.traceId.toLowerCase(),
    spanId: row.spanId.toLowerCase(),
    ...('parentSpanId' in row ? { parentSpanId: row.parentSpanId.toLowerCase() } : {}),
  });

/** What the waterfall's order compares: an item's time, then its name (spans first). */
interface SortKey {
  item: Item;
  time: bigint;
  name: string;
}

/**
 * `items` by time; spans before log records of the same time, then by name: one order for the
 * same trace. Each key is made once, not at each comparison (a trace of 200,000 spans is
 * millions of them). The sort is stable: items equal in all are kept in the order given.
 */
function sortByTime(items: Item[]): Item[] {
  const keys = items.map(
    (item): SortKey =>
      'span' in item
        ? { item, time: isoNanos(item.span.time), name: `0${item.span.name}${item.span.spanId}` }
        : { item, time: isoNanos(item.log.time), name: `1${item.log.spanId}` },
  );
  keys.sort((a, b) => {
    if (a.time !== b.time) return a.time < b.time ? -1 : 1;
    if (a.name !== b.name) return a.name < b.name ? -1 : 1;
    // Records of one span at one time by their contents, not in the order they were read
    // (which is where they were stored).
    if ('log' in a.item && 'log' in b.item) {
      const [x, y] = [contents(a.item.log), contents(b.item.log)];
      return x < y ? -1 : x > y ? 1 : 0;
    }
    return 0;
  });
  return keys.map((k) => k.item);
}

/**
 * The spans in the waterfall's order: each root (a span without a parent, or whose parent is not
 * among them) by start time, each span's children and log records by time under it. A log
 * record of a span not among them goes under the trace's top level. Cycles (a hostile file)
 * cannot loop: every span is placed once.
 */
export function tree(
  spans: SpanRow[],
  logs: LogRecordRow[],
): { placed: Placed[]; orphans: number; ownParents: number; cycles: number } {
  // Hex ids in either case (as other writers store them) are the same id.
  const id = (hex: string) => hex.toLowerCase();
  const ids = new Set(spans.map((s) => id(s.spanId)));
  const children = new Map<string, Item[]>();
  const top: Item[] = [];
  let orphans = 0;
  let ownParents = 0;
  let cycles = 0;
  for (const span of spans) {
    const parent = parentOf(span);
    if (parent !== '' && ids.has(parent) && parent !== id(span.spanId)) {
      push(children, parent, { span });
    } else {
      top.push({ span });
    }
  }
  for (const log of logs) {
    if (ids.has(id(log.spanId))) push(children, id(log.spanId), { log });
    else top.push({ log });
  }
  const placed: Placed[] = [];
  const seen = new Set<string>();
  // Depth first without recursion: a chain of any depth cannot overflow the stack.
  const place = (roots: Item[], inCycle = false) => {
    const stack: { item: Item; lines: string; last: boolean; depth: number }[] = sortByTime(roots)
      .map((item) => ({ item, lines: '', last: true, depth: 0 }))
      .reverse();
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      const { item, lines, last, depth } = next;
      if ('span' in item) {
        if (seen.has(id(item.span.spanId))) continue;
        seen.add(id(item.span.spanId));
      }
      // Said of the spans at the top that have a parent: not found, the span itself, or the
      // span a cycle is shown from.
      if (depth === 0 && 'span' in item) {
        const parent = parentOf(item.span);
        if (inCycle) cycles++;
        else if (parent === id(item.span.spanId)) ownParents++;
        else if (parent !== '') orphans++;
      }
      const branch = depth === 0 ? '' : last ? '└─ ' : '├─ ';
      placed.push({ item, prefix: cut(lines + branch, depth) });
      if (!('span' in item)) continue;
      // Not a span placed already (the head of a cycle under its last span): the last line
      // under a span is drawn as its last.
      const under = sortByTime(
        (children.get(id(item.span.spanId)) ?? []).filter(
          (i) => !('span' in i && seen.has(id(i.span.spanId))),
        ),
      );
      // Only the last levels are ever shown (cut): longer prefixes are not built.
      const inner = depth === 0 ? '' : (lines + (last ? '   ' : '│  ')).slice(-DEEP * 3);
      for (let i = under.length - 1; i >= 0; i--) {
        stack.push({
          item: under[i] as Item,
          lines: inner,
          last: i === under.length - 1,
          depth: depth + 1,
        });
      }
    }
  };
  place(top);
  // Spans in a cycle of parents reach no root: each cycle is shown from its earliest span, and
  // the spans under a cycle under it (not from one of them that started before the cycle). The
  // parent of a span not placed is not placed either: going up from one always meets a cycle.
  const left = new Map<string, SpanRow>();
  for (const span of spans) if (!seen.has(id(span.spanId))) left.set(id(span.spanId), span);
  const inCycles: Item[] = [];
  const walked = new Set<string>();
  for (const from of left.keys()) {
    const path = new Set<string>();
    let at = from;
    while (!walked.has(at) && !path.has(at)) {
      path.add(at);
      at = parentOf(left.get(at) as SpanRow);
    }
    // A cycle not met before: each of its spans.
    if (path.has(at)) {
      let c = at;
      do {
        const span = left.get(c) as SpanRow;
        inCycles.push({ span });
        c = parentOf(span);
      } while (c !== at);
    }
    for (const p of path) walked.add(p);
  }
  if (inCycles.length > 0) place(inCycles, true);
  return { placed, orphans, ownParents, cycles };
}

function push(map: Map<string, Item[]>, key: string, item: Item): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [item]);
  else list.push(item);
}

/** Only the last levels of a deep prefix, after `…` and the depth. */
function cut(prefix: string, depth: number): string {
  if (depth <= DEEP) return prefix;
  return `…[${depth}] ${prefix.slice(-DEEP * 3)}`;
}

/** The waterfall's lines: a heading, the column header, a line per span (and log record). */
export function waterfall(
  traceId: string,
  placed: Placed[],
  layout: { width: number; columns?: number },
): string[] {
  const spans = placed.flatMap(({ item }) => ('span' in item ? [item.span] : []));
  // Each line's times in nanoseconds, parsed once: a span's start and end, a record's time.
  const times = placed.map(({ item }): [bigint, bigint] =>
    'span' in item
      ? [isoNanos(item.span.time), isoNanos(item.span.end)]
      : [isoNanos(item.log.time), 0n],
  );
  let start: bigint | undefined;
  let end: bigint | undefined;
  for (const [i, { item }] of placed.entries()) {
    if (!('span' in item)) continue;
    const [s, e] = times[i] as [bigint, bigint];
    if (s > 0n && (start === undefined || s < start)) start = s;
    if (e > 0n && (end === undefined || e > end)) end = e;
  }
  const t0 = start ?? 0n;
  // Without a start there is nothing to measure from: an end alone is not a duration since 1970.
  const total = start !== undefined && end !== undefined && end > t0 ? end - t0 : 0n;
  // The bar's scale: a trace of zero-length spans (total 0) still divides by something.
  const scale = total > 0n ? total : 1n;
  const services = new Set(spans.map((s) => s.service));
  const errors = spans.filter((s) => s.status === 'error').length;
  const totalText = durationText(Number(total) / 1e6);
  const heading = [
    `trace ${traceId}: ${plural(spans.length, 'span')}`,
    plural(services.size, 'service'),
    start === undefined
      ? 'no start times'
      : `${totalText} from ${tableTime(spans.find((s) => isoNanos(s.time) === t0)?.time ?? '')} UTC`,
    ...(errors > 0 ? [plural(errors, 'error')] : []),
  ].map(printable);

  // Each line's columns but the bar: the name (tree prefix and name, or the record's severity
  // and body) not cut yet, the service, status, and duration (a record's offset from the start).
  const columns = placed.map(({ item, prefix }, i): [string, string, string, string] => {
    if ('span' in item) {
      const s = item.span;
      return [
        prefix + printable(s.name),
        printable(s.service),
        printable(s.status),
        durationText(s.duration),
      ];
    }
    const l = item.log;
    const [at] = times[i] as [bigint, bigint];
    // A record with no time at all has no place on the bar, nor any in a trace without a start.
    const offset =
      l.time === '' || start === undefined
        ? ''
        : `${at < t0 ? '' : '+'}${durationText(Number(at - t0) / 1e6)}`;
    return [
      prefix + printable(`${l.severity || 'LOG'} ${valueText(l.body)}`),
      printable(l.service),
      '',
      offset,
    ];
  });
  const header = ['span', 'service', 'status', 'duration'];
  const { width, nameWidth } =
    layout.columns === undefined
      ? { width: layout.width, nameWidth: NAME_WIDTH }
      : fitTerminal(layout.columns, [header, ...columns], totalText);

  const cell = (at: bigint) => Number(((at - t0) * BigInt(width)) / scale);
  const bar = (from: bigint, to: bigint): string => {
    const a = Math.min(Math.max(cell(from), 0), width - 1);
    const b = Math.min(Math.max(cell(to), a + 1), width);
    return `${' '.repeat(a)}${'█'.repeat(b - a)}${' '.repeat(width - b)}`;
  };
  const mark = (at: bigint): string => {
    const a = Math.min(Math.max(cell(at), 0), width - 1);
    return `${' '.repeat(a)}◆${' '.repeat(width - a - 1)}`;
  };
  const rows: string[][] = [
    [...header, `0${' '.repeat(Math.max(width + 2 - 1 - totalText.length, 1))}${totalText}`],
  ];
  for (const [i, { item }] of placed.entries()) {
    const [name, service, status, duration] = columns[i] as [string, string, string, string];
    // A span without a start (or a record without a time) has no place on the bar: its end
    // alone says nothing of where it was.
    const time = 'span' in item ? item.span.time : item.log.time;
    const [from, to] = times[i] as [bigint, bigint];
    const line =
      time === '' || start === undefined
        ? ' '.repeat(width)
        : 'span' in item
          ? bar(from, to)
          : mark(from);
    // In terminal cells, not characters: a CJK name of 60 characters takes 120 cells.
    rows.push([cutToCells(name, nameWidth), service, status, duration, `|${line}|`]);
  }
  const widths = columnWidths(rows);
  return [
    ...(layout.columns === undefined ? [heading.join(', ')] : wrap(heading, layout.columns)),
    ...rows.map((row) => alignRow(row, widths, new Set([3]))),
  ];
}

/**
 * The bar's cells and the name column's that fit a terminal of `columns`: the default (40 and
 * 60) when it is wide enough, else both narrowed (FIT_NAME, FIT_BAR), then the bar to its least,
 * then the names to what is left. The service, status and duration columns are kept whole.
 */
function fitTerminal(
  columns: number,
  rows: string[][],
  totalText: string,
): { width: number; nameWidth: number } {
  // A loop, not Math.max(...): a trace of many spans is more arguments than a call takes.
  const cells = (i: number) =>
    rows.reduce((most, row) => Math.max(most, textCells(row[i] ?? '')), 0);
  const [service, status, duration] = [cells(1), cells(2), cells(3)];
  // Four gaps of three, and the bar's two `|`.
  const left = columns - service - status - duration - 4 * 3 - 2;
  const natural = Math.min(cells(0), NAME_WIDTH);
  const least = Math.max(10, totalText.length);
  let width = Math.min(Math.max(left - natural, FIT_BAR), WIDTH);
  let nameWidth = Math.min(natural, left - width);
  if (nameWidth < FIT_NAME) {
    nameWidth = Math.min(natural, FIT_NAME);
    width = Math.min(Math.max(left - nameWidth, least), WIDTH);
    // A terminal too narrow for even that: the names get what is left (a few cells at least).
    nameWidth = Math.min(nameWidth, Math.max(left - width, 4));
  }
  return { width, nameWidth };
}

/** `parts` joined by `, `, a new line (indented) each time the next would not fit in `columns`. */
function wrap(parts: string[], columns: number): string[] {
  const lines: string[] = [];
  for (const part of parts) {
    const last = lines.at(-1);
    if (last === undefined) lines.push(part);
    else if (textCells(`${last}, ${part}`) <= columns) lines[lines.length - 1] = `${last}, ${part}`;
    else lines.push(`  ${part}`);
  }
  return lines;
}
