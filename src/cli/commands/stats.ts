import { formatBytes } from '../../base/byte-size.js';
import type { SignalName } from '../../layout/formats.js';
import { parquetCodecs } from '../../reader/parquet-footer.js';
import type { StoredObject } from '../../reader/read-metrics.js';
import { logRecordRows, severityName, severityNumberOf } from '../../signals/logs/rows.js';
import { dataPointRows, type InstrumentKind } from '../../signals/metrics/rows.js';
import { spanRows } from '../../signals/traces/rows.js';
import { type CommandContext, describeRange } from '../context.js';
import { alignRow, columnWidths, formatInteger } from '../format.js';
import { readObjects } from '../read-objects.js';
import { parentOf } from '../row-filters.js';
import { jsonLine, printable } from '../terminal-text.js';

/**
 * A resource's identity for series counting: rows of one resourceMetrics share one resource
 * object, so it is spelled once, not once per data point. (JSON never holds a raw U+0000, so the
 * separators keep resource, scope and attributes apart.)
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
  /** Whose objects to read. */
  signals: readonly SignalName[];
}

/** The severity classes of the logs data model, in order (numbers 1-4, 5-8, ... 21-24). */
export const SEVERITY_CLASSES = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;
/** A log record's class: its number's (or its text's), `UNSET` for neither or one out of range. */
export type SeverityClass = (typeof SEVERITY_CLASSES)[number] | 'UNSET';

const severityClass = (n: number): SeverityClass =>
  (severityName(n).replace(/\d$/, '') || 'UNSET') as SeverityClass;

interface MetricTally {
  metric: string;
  type: InstrumentKind;
  points: number;
  /** Distinct resource + scope + attribute sets. */
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
  /**
   * Objects in the range not read because a compaction output holds their points (the OTLP
   * objects compaction keeps beside it): not in `objects` nor in `bytes`.
   */
  objectsReplaced: number;
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
  /** Objects read per signal (`metrics`, `traces`, `logs`). */
  signals: Partial<Record<SignalName, number>>;
  spans: number;
  /**
   * Spans per service (its resource's service.name): all of them, the root spans (no parent:
   * about one per trace that started there) and those with status error.
   */
  spanServices: { service: string; spans: number; rootSpans: number; errorSpans: number }[];
  logRecords: number;
  /** Log records per service, and per severity class of their numbers. */
  logServices: {
    service: string;
    logRecords: number;
    severities: Partial<Record<SeverityClass, number>>;
  }[];
}

interface SpanTally {
  spans: number;
  rootSpans: number;
  errorSpans: number;
}

/** `otel-s3 stats`: objects, bytes, compression ratio and data points per metric. */
export async function stats(ctx: CommandContext, options: StatsOptions): Promise<number> {
  const metrics = new Map<string, MetricTally>();
  const encodings: Record<string, number> = {};
  const otlp = { bytes: 0, rawBytes: 0 };
  const parquet = { objects: 0, bytes: 0, otlpJsonBytes: 0 };
  const spanTallies = new Map<string, SpanTally>();
  const logTallies = new Map<string, Partial<Record<SeverityClass, number>>>();
  const signals: Partial<Record<SignalName, number>> = {};
  let first: Date | undefined;
  let last: Date | undefined;
  const { code, stats: read } = await readObjects(
    ctx,
    true,
    async (object) => {
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
      if (whole) {
        encodings[encoding] = (encodings[encoding] ?? 0) + 1;
        signals[object.signal] = (signals[object.signal] ?? 0) + 1;
      }
      if (first === undefined || object.time < first) first = object.time;
      if (last === undefined || object.time > last) last = object.time;
      if (object.signal === 'traces') {
        for (const row of spanRows(object.request)) {
          let tally = spanTallies.get(row.service);
          if (tally === undefined) {
            tally = { spans: 0, rootSpans: 0, errorSpans: 0 };
            spanTallies.set(row.service, tally);
          }
          tally.spans++;
          // A parent id of all zeros (as some writers store a root) is no parent.
          if (parentOf(row) === '') tally.rootSpans++;
          if (row.status === 'error') tally.errorSpans++;
        }
        return;
      }
      if (object.signal === 'logs') {
        for (const row of logRecordRows(object.request)) {
          let tally = logTallies.get(row.service);
          if (tally === undefined) {
            tally = {};
            logTallies.set(row.service, tally);
          }
          const severity = severityClass(severityNumberOf(row));
          tally[severity] = (tally[severity] ?? 0) + 1;
        }
        return;
      }
      for (const row of dataPointRows(object.request)) {
        // A name of two instrument types (two scopes may define it so): a tally each, not the
        // other's points counted under the first one's type.
        const key = `${row.metric}\u0000${row.type}`;
        let tally = metrics.get(key);
        if (tally === undefined) {
          tally = { metric: row.metric, type: row.type, points: 0, series: new Set() };
          metrics.set(key, tally);
        }
        tally.points++;
        // A series is one resource, scope and attribute set (docs/reading.md): one name in two
        // scopes is two series, even with the same attributes.
        tally.series.add(
          `${resourceKey(row.resource)}\u0000${JSON.stringify(row.scope)}\u0000${JSON.stringify(row.attributes)}`,
        );
      }
    },
    options.signals,
  );
  const sorted = [...metrics].sort(byName);
  const spanServices = [...spanTallies].sort(byName).map(([service, t]) => ({ service, ...t }));
  const logServices = [...logTallies].sort(byName).map(([service, severities]) => ({
    service,
    logRecords: Object.values(severities).reduce((sum, n) => sum + n, 0),
    severities,
  }));
  const report: StatsReport = {
    where: ctx.settings.where,
    from: ctx.settings.from?.toISOString() ?? null,
    to: ctx.settings.to?.toISOString() ?? null,
    objects: read.objectsRead,
    objectsUnreadable: read.objectsUnreadable,
    keysSkipped: read.keysSkipped,
    objectsReplaced: read.objectsReplaced,
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
    metrics: sorted.map(([, m]) => ({
      metric: m.metric,
      type: m.type,
      series: m.series.size,
      dataPoints: m.points,
    })),
    signals,
    spans: spanServices.reduce((sum, s) => sum + s.spans, 0),
    spanServices,
    logRecords: logServices.reduce((sum, s) => sum + s.logRecords, 0),
    logServices,
  };
  if (options.format === 'json') await ctx.out.line(jsonLine(report));
  else
    for (const line of statsText(report, describeRange(ctx.settings), options.signals))
      await ctx.out.line(line);
  return code;
}

const byName = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/** A ratio of sizes, rounded for people. */
const ratio = (of: number, to: number) => Number((of / to).toFixed(2));

/**
 * The size of the object's points as one uncompressed OTLP/JSON request line, about what
 * `format: 'otlp-json', compression: 'none'` stores; not the default, which adds zstd.
 */
function otlpJsonSize(object: StoredObject): number {
  return Buffer.byteLength(JSON.stringify(object.request)) + 1;
}

const sized = (bytes: number) => `${formatBytes(bytes)} (${formatInteger(bytes)} bytes)`;
/**
 * `3.1x smaller`, or `2.0x larger` for a ratio under 1 (a tiny Parquet file and its footer);
 * `the same size` (objects stored without compression), `about the same size` when it shows as
 * 1.0x either way.
 */
function compared(ratio: number): string {
  if (ratio === 1) return 'the same size';
  const shown = (ratio >= 1 ? ratio : 1 / ratio).toFixed(1);
  if (shown === '1.0') return 'about the same size';
  return ratio >= 1 ? `${shown}x smaller` : `${shown}x larger`;
}

/** A service's cell: `(no service.name)` for none, as the row commands' notes say it. */
const serviceCell = (service: string) =>
  service === '' ? '(no service.name)' : printable(service);

function statsText(r: StatsReport, range: string, asked: readonly SignalName[]): string[] {
  const encodings = Object.entries(r.encodings)
    .map(([encoding, n]) => `${encoding}: ${formatInteger(n)}`)
    .join(', ');
  const lines = [
    `source        ${printable(r.where)}${range === '' ? '' : ` (${range})`}`,
    `objects       ${formatInteger(r.objects)}${encodings === '' ? '' : ` (${encodings})`}`,
    `stored        ${sized(r.bytes)}`,
  ];
  // OTLP objects: the bytes the compression wrapped. Parquet files compress inside, per column
  // chunk: their points as uncompressed OTLP/JSON are what they compare with, and the line says
  // so (the default otlp-json + zstd can store less than the Parquet files).
  if (r.compressionRatio !== null || r.parquet === null) {
    const ratio = r.compressionRatio === null ? '' : `, ${compared(r.compressionRatio)}`;
    const which = r.parquet === null ? '' : ' in the OTLP objects';
    lines.push(`uncompressed  ${sized(r.rawBytes)}${which}${ratio}`);
  }
  if (r.parquet !== null) {
    const files = formatInteger(r.parquet.objects);
    lines.push(
      `as OTLP/JSON  ${sized(r.parquet.otlpJsonBytes)} uncompressed: the Parquet files (${files}) are ${compared(r.parquet.ratio)}`,
    );
  }
  if (r.firstObject !== null) lines.push(`time          ${r.firstObject} .. ${r.lastObject}`);
  if (r.objectsReplaced > 0) {
    lines.push(
      `replaced      ${formatInteger(r.objectsReplaced)} (not read: a compaction output holds their points)`,
    );
  }
  if (r.objectsUnreadable > 0) lines.push(`unreadable    ${formatInteger(r.objectsUnreadable)}`);
  if (r.keysSkipped > 0) lines.push(`other keys    ${formatInteger(r.keysSkipped)} (ignored)`);
  const table = (rows: string[][], right: number[]) => {
    lines.push('');
    // Escaped before the widths are taken, so the columns line up.
    const widths = columnWidths(rows);
    for (const row of rows) lines.push(alignRow(row, widths, new Set(right)));
  };
  // Each signal's table where the range held some of it; where it held nothing at all, the
  // tables of the signals asked for (metrics alone when all were), each empty.
  const none = r.dataPoints === 0 && r.spans === 0 && r.logRecords === 0;
  const emptyOf = (signal: SignalName) =>
    none && asked.includes(signal) && (asked.length < 3 || signal === 'metrics');
  if (r.dataPoints > 0 || emptyOf('metrics')) {
    table(
      [
        ['metric', 'type', 'series', 'data points'],
        ...r.metrics.map((m) => [
          printable(m.metric),
          m.type,
          formatInteger(m.series),
          formatInteger(m.dataPoints),
        ]),
        // Each row is a distinct name and type: their series add up.
        [
          'total',
          '',
          formatInteger(r.metrics.reduce((sum, m) => sum + m.series, 0)),
          formatInteger(r.dataPoints),
        ],
      ],
      [2, 3],
    );
  }
  if (r.spans > 0 || emptyOf('traces')) {
    table(
      [
        ['service', 'spans', 'root spans', 'errors'],
        ...r.spanServices.map((s) => [
          serviceCell(s.service),
          formatInteger(s.spans),
          formatInteger(s.rootSpans),
          formatInteger(s.errorSpans),
        ]),
        [
          'total',
          formatInteger(r.spans),
          formatInteger(r.spanServices.reduce((sum, s) => sum + s.rootSpans, 0)),
          formatInteger(r.spanServices.reduce((sum, s) => sum + s.errorSpans, 0)),
        ],
      ],
      [1, 2, 3],
    );
  }
  if (r.logRecords > 0 || emptyOf('logs')) {
    const classes = (['UNSET', ...SEVERITY_CLASSES] as const).filter((c) =>
      r.logServices.some((s) => s.severities[c] !== undefined),
    );
    table(
      [
        ['service', 'log records', ...classes],
        ...r.logServices.map((s) => [
          serviceCell(s.service),
          formatInteger(s.logRecords),
          ...classes.map((c) => formatInteger(s.severities[c] ?? 0)),
        ]),
        [
          'total',
          formatInteger(r.logRecords),
          ...classes.map((c) =>
            formatInteger(r.logServices.reduce((sum, s) => sum + (s.severities[c] ?? 0), 0)),
          ),
        ],
      ],
      Array.from({ length: classes.length + 1 }, (_, i) => i + 1),
    );
  }
  return lines;
}
