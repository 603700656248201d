import { formatBytes } from '../../reader/byte-size.js';
import { dataPointRows, type InstrumentKind, instrumentKind } from '../../reader/points.js';
import { type CommandContext, describeRange } from '../context.js';
import { alignRow, columnWidths, formatInteger } from '../format.js';
import { readObjects } from '../read-objects.js';
import { jsonLine, printable } from '../terminal-text.js';

/**
 * A resource's identity for series counting: rows of one resourceMetrics share one resource
 * object, so it is spelled once, not once per data point. (JSON never holds a raw U+0000, so the
 * separator keeps resource and attributes apart.)
 */
const resourceKeys = new WeakMap<object, string>();
function resourceKey(resource: object): string {
  let key = resourceKeys.get(resource);
  if (key === undefined) {
    key = JSON.stringify(resource);
    resourceKeys.set(resource, key);
  }
  return key;
}

export interface StatsOptions {
  format: 'text' | 'json';
}

interface MetricTally {
  type: InstrumentKind;
  points: number;
  /** Distinct resource + attribute sets. */
  series: Set<string>;
}

/** What `otel-s3 stats --format json` prints. */
export interface StatsReport {
  where: string;
  from: string | null;
  to: string | null;
  objects: number;
  objectsUnreadable: number;
  keysSkipped: number;
  /** Stored bytes of the objects read. */
  bytes: number;
  /** Their bytes after decompression. */
  rawBytes: number;
  /** rawBytes / bytes; null when nothing was read. */
  compressionRatio: number | null;
  /** Objects per encoding, e.g. {"otlp-json+zstd": 4}. */
  encodings: Record<string, number>;
  firstObject: string | null;
  lastObject: string | null;
  dataPoints: number;
  metrics: { metric: string; type: InstrumentKind; series: number; dataPoints: number }[];
}

/** `otel-s3 stats`: objects, bytes, compression ratio and data points per metric. */
export async function stats(ctx: CommandContext, options: StatsOptions): Promise<number> {
  const metrics = new Map<string, MetricTally>();
  const encodings: Record<string, number> = {};
  let bytes = 0;
  let first: Date | undefined;
  let last: Date | undefined;
  const { code, stats: read } = await readObjects(ctx, true, async (object) => {
    bytes += object.size;
    const encoding = `${object.encoding.format}+${object.encoding.compression}`;
    encodings[encoding] = (encodings[encoding] ?? 0) + 1;
    if (first === undefined || object.time < first) first = object.time;
    if (last === undefined || object.time > last) last = object.time;
    for (const row of dataPointRows(object.request)) {
      let tally = metrics.get(row.metric);
      if (tally === undefined) {
        tally = { type: instrumentKind(row), points: 0, series: new Set() };
        metrics.set(row.metric, tally);
      }
      tally.points++;
      tally.series.add(`${resourceKey(row.resource)}\u0000${JSON.stringify(row.attributes)}`);
    }
  });
  const sorted = [...metrics].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const report: StatsReport = {
    where: ctx.settings.where,
    from: ctx.settings.from?.toISOString() ?? null,
    to: ctx.settings.to?.toISOString() ?? null,
    objects: read.objectsRead,
    objectsUnreadable: read.objectsUnreadable,
    keysSkipped: read.keysSkipped,
    bytes,
    rawBytes: read.rawBytesRead,
    compressionRatio: bytes > 0 ? Number((read.rawBytesRead / bytes).toFixed(2)) : null,
    encodings,
    firstObject: first?.toISOString() ?? null,
    lastObject: last?.toISOString() ?? null,
    dataPoints: sorted.reduce((sum, [, m]) => sum + m.points, 0),
    metrics: sorted.map(([metric, m]) => ({
      metric,
      type: m.type,
      series: m.series.size,
      dataPoints: m.points,
    })),
  };
  if (options.format === 'json') await ctx.out.line(jsonLine(report));
  else for (const line of statsText(report, describeRange(ctx.settings))) await ctx.out.line(line);
  return code;
}

function statsText(r: StatsReport, range: string): string[] {
  const encodings = Object.entries(r.encodings)
    .map(([encoding, n]) => `${encoding}: ${formatInteger(n)}`)
    .join(', ');
  const ratio = r.compressionRatio === null ? '' : `, ${r.compressionRatio.toFixed(1)}x smaller`;
  const lines = [
    `source        ${printable(r.where)}${range === '' ? '' : ` (${range})`}`,
    `objects       ${formatInteger(r.objects)}${encodings === '' ? '' : ` (${encodings})`}`,
    `stored        ${formatBytes(r.bytes)} (${formatInteger(r.bytes)} bytes)`,
    `uncompressed  ${formatBytes(r.rawBytes)} (${formatInteger(r.rawBytes)} bytes)${ratio}`,
  ];
  if (r.firstObject !== null) lines.push(`time          ${r.firstObject} .. ${r.lastObject}`);
  if (r.objectsUnreadable > 0) lines.push(`unreadable    ${formatInteger(r.objectsUnreadable)}`);
  if (r.keysSkipped > 0) lines.push(`other keys    ${formatInteger(r.keysSkipped)} (ignored)`);
  lines.push('');
  const rows = [
    ['metric', 'type', 'series', 'data points'],
    // Escaped before the widths are taken, so the columns line up.
    ...r.metrics.map((m) => [
      printable(m.metric),
      m.type,
      formatInteger(m.series),
      formatInteger(m.dataPoints),
    ]),
    ['total', '', '', formatInteger(r.dataPoints)],
  ];
  const widths = columnWidths(rows);
  for (const row of rows) lines.push(alignRow(row, widths, new Set([2, 3])));
  return lines;
}
