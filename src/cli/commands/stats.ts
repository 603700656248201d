import { formatBytes } from '../../base/byte-size.js';
import type { MetricObject } from '../../reader/metric-types.js';
import { parquetCodecs } from '../../reader/parquet-footer.js';
import { dataPointRows, type InstrumentKind } from '../../signals/metrics/rows.js';
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
  /** The OTLP objects' bytes after decompression (a Parquet file compresses inside: not here). */
  rawBytes: number;
  /** rawBytes / the OTLP objects' stored bytes; null when no OTLP object was read. */
  compressionRatio: number | null;
  /**
   * The Parquet files read: their stored bytes, their points as OTLP/JSON (one request per file,
   * newline-terminated, uncompressed), and how many times smaller the files are than that;
   * null when none was read.
   */
  parquet: { objects: number; bytes: number; otlpJsonBytes: number; ratio: number } | null;
  /**
   * Objects per encoding, e.g. {"otlp-json+zstd": 4, "parquet+zstd": 8}. For Parquet the codec
   * of its column chunks, read from the file's footer.
   */
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
  const otlp = { bytes: 0, rawBytes: 0 };
  const parquet = { objects: 0, bytes: 0, otlpJsonBytes: 0 };
  let first: Date | undefined;
  let last: Date | undefined;
  const { code, stats: read } = await readObjects(ctx, true, async (object) => {
    // An object read in parts (a large Parquet file) counts once, with its first part, whose
    // bytes are the file's footer.
    const whole = object.part === undefined || object.part.index === 0;
    let encoding = `${object.encoding.format}+${object.encoding.compression}`;
    if (object.encoding.format === 'parquet') {
      if (whole) {
        encoding = `parquet+${parquetCodecs(object.bytes).join('/')}`;
        parquet.objects++;
        parquet.bytes += object.size;
      }
      parquet.otlpJsonBytes += otlpJsonSize(object);
    } else {
      otlp.bytes += object.size;
      otlp.rawBytes += object.rawBytes;
    }
    if (whole) encodings[encoding] = (encodings[encoding] ?? 0) + 1;
    if (first === undefined || object.time < first) first = object.time;
    if (last === undefined || object.time > last) last = object.time;
    for (const row of dataPointRows(object.request)) {
      let tally = metrics.get(row.metric);
      if (tally === undefined) {
        tally = { type: row.type, points: 0, series: new Set() };
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
    bytes: otlp.bytes + parquet.bytes,
    rawBytes: otlp.rawBytes,
    compressionRatio: otlp.bytes > 0 ? ratio(otlp.rawBytes, otlp.bytes) : null,
    parquet:
      parquet.objects > 0
        ? { ...parquet, ratio: ratio(parquet.otlpJsonBytes, parquet.bytes) }
        : null,
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

/** A ratio of sizes, rounded for people. */
const ratio = (of: number, to: number) => Number((of / to).toFixed(2));

/** The size of the object's points as one OTLP/JSON request line, as otlp-json stores them. */
function otlpJsonSize(object: MetricObject): number {
  return Buffer.byteLength(JSON.stringify(object.request)) + 1;
}

const sized = (bytes: number) => `${formatBytes(bytes)} (${formatInteger(bytes)} bytes)`;
/** `3.1x smaller`, or `2.0x larger` for a ratio under 1 (a tiny Parquet file and its footer). */
const compared = (ratio: number) =>
  ratio >= 1 ? `${ratio.toFixed(1)}x smaller` : `${(1 / ratio).toFixed(1)}x larger`;

function statsText(r: StatsReport, range: string): string[] {
  const encodings = Object.entries(r.encodings)
    .map(([encoding, n]) => `${encoding}: ${formatInteger(n)}`)
    .join(', ');
  const lines = [
    `source        ${printable(r.where)}${range === '' ? '' : ` (${range})`}`,
    `objects       ${formatInteger(r.objects)}${encodings === '' ? '' : ` (${encodings})`}`,
    `stored        ${sized(r.bytes)}`,
  ];
  // OTLP objects: the bytes the compression wrapped. Parquet files compress inside, per column
  // chunk: their points as OTLP/JSON are what they compare with.
  if (r.compressionRatio !== null || r.parquet === null) {
    const ratio = r.compressionRatio === null ? '' : `, ${compared(r.compressionRatio)}`;
    const which = r.parquet === null ? '' : ' in the OTLP objects';
    lines.push(`uncompressed  ${sized(r.rawBytes)}${which}${ratio}`);
  }
  if (r.parquet !== null) {
    const files = formatInteger(r.parquet.objects);
    lines.push(
      `as OTLP/JSON  ${sized(r.parquet.otlpJsonBytes)}: the Parquet files (${files}) are ${compared(r.parquet.ratio)}`,
    );
  }
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
