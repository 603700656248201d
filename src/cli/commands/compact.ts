import { BYTE_SIZE_HELP, byteSizeOf, formatBytes } from '../../base/byte-size.js';
import { InvalidOptionError } from '../../base/invalid-option.js';
import { compactIsolated } from '../../compact/isolated.js';
import type { CompactMetricsOptions } from '../../compact/options.js';
import {
  type CompactionEvent,
  type CompactionReport,
  joinedReports,
  type PartitionReport,
  type UnsettledHour,
} from '../../compact/report.js';
import { check } from '../../config/option-table.js';
import type { Compression, SignalName } from '../../layout/formats.js';
import { type CommandContext, finalNote, readerOptions } from '../context.js';
import { DURATION_HELP, parseDuration, parseTime, TIME_HELP } from '../duration.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { formatInteger, plural } from '../format.js';
import { noProgress, type Progress, progressBar } from '../progress.js';
import { jsonLine, printable } from '../terminal-text.js';

/** The flags of `otel-s3 compact`, as commander parsed them. */
export interface CompactFlags {
  outPrefix?: string;
  targetFileBytes?: string;
  settle?: string;
  until?: string;
  compression?: Compression;
  dryRun?: boolean;
  deleteInputs?: boolean;
  shard?: string;
  singleWriter?: boolean;
  partitions?: string;
  format: 'text' | 'json';
  /** The signals compacted, in this order (all three unless told). */
  signals: SignalName[];
}

/**
 * `otel-s3 compact`: merges the closed hours under the prefix into large sorted Parquet files,
 * each signal's in turn (metrics, spans, log records). One line per partition on stdout as it is
 * done (or the report as JSON at the end); a progress bar on a terminal.
 */
export async function compact(ctx: CommandContext, flags: CompactFlags): Promise<number> {
  const options = compactOptions(ctx, flags);
  const showBar = ctx.settings.progress && ctx.stderrIsTTY && flags.format === 'text';
  const progress: Progress = showBar ? progressBar(ctx.stderr) : noProgress(ctx.stderr);
  // Without a bar, a line per partition as it is done; with one, all of them after it.
  const streamed = new Set<string>();
  let writing = Promise.resolve();
  let report: CompactionReport;
  try {
    const onProgress = (event: CompactionEvent) => {
      if (event.type === 'planned' && event.objects > 0) {
        progress.stop();
        progress.start(event.objects, event.bytes);
      }
      if (event.type === 'input-read') progress.advance(event.bytes);
      if (event.type === 'partition-done' && flags.format === 'text' && !showBar) {
        streamed.add(event.report.partition);
        const line = printable(partitionLine(event.report));
        writing = writing.then(() => ctx.out.line(line));
      }
    };
    // In a worker with a bounded heap where the package is built (see isolated.ts), one for
    // every signal; else here, signal after signal.
    const isolated = compactIsolated(options, onProgress, ctx.signal, undefined, flags.signals);
    if (isolated !== undefined) report = await isolated;
    else {
      const reports: CompactionReport[] = [];
      const { compactionOf } = await import('../../compact/compact-metrics.js');
      for (const which of flags.signals) {
        reports.push(await compactionOf(which)({ ...options, onProgress, signal: ctx.signal }));
      }
      report = joinedReports(reports);
    }
  } finally {
    progress.stop();
    await writing;
  }
  if (flags.format === 'json') {
    await ctx.out.line(jsonLine(report));
  } else {
    for (const p of report.partitions) {
      if (!streamed.has(p.partition)) await ctx.out.line(printable(partitionLine(p)));
    }
    await finalNote(ctx, summary(report, ctx.settings.where));
  }
  for (const p of report.partitions) {
    for (const s of p.skipped) {
      await finalNote(ctx, `skipped ${s.key} (${s.stage}): ${s.reason}; it was left where it is`);
    }
    // Kept because its check could not be done or failed (a later run tries again), or its
    // delete failed: said here, not only in the exit code.
    for (const n of p.notDeleted) await finalNote(ctx, `not deleted ${n.key}: ${n.reason}`);
    for (const b of p.badOutputs) {
      await finalNote(ctx, `output ${b.key} cannot be read (${b.reason}); it was left where it is`);
    }
    if (p.error !== undefined) await finalNote(ctx, `${p.partition} failed: ${p.error}`);
    if (p.unreadableLease !== undefined) await finalNote(ctx, unreadableLeaseNote(p));
  }
  // No hour in the layout, settled or not: a prefix with nothing of these signals is said.
  if (report.partitionsSelected === 0 && report.unsettled.length === 0 && !trouble(report)) {
    // Imported here: the reader's listing loads the S3 client, which a run on --dir otherwise
    // never does (test/integration/exporter-imports.test.ts).
    const { nothingToCompact } = await import('../listing-notes.js');
    const nothing = await nothingToCompact(ctx, flags.signals);
    if (nothing !== undefined) return nothing;
  }
  return trouble(report) ? EXIT.unreadable : EXIT.ok;
}

/**
 * `lease …/000000000004.lease of year=…/hour=05 cannot be read (why): the hour is held until
 * 2026-12-01T19:15:10.000Z, then taken as expired`, or that this run took it over.
 */
function unreadableLeaseNote(p: PartitionReport): string {
  const u = p.unreadableLease;
  if (u === undefined) return '';
  const head = `lease ${u.key} of ${p.partition} cannot be read (${u.reason})`;
  if (u.tookOver) {
    return `${head}: taken as expired (its write was a lease and the clock-skew allowance before ${u.expiredAt?.toISOString() ?? 'unknown'}) and replaced`;
  }
  return u.expiredAt === undefined
    ? `${head}: the store gives no time of its write, so it holds the hour until it is deleted; delete it if no compactor runs on this hour`
    : `${head}: the hour is held until ${u.expiredAt.toISOString()}, then taken as expired`;
}

/** Whether a partition failed or kept, skipped, could not read an object or its lease. */
function trouble(report: CompactionReport): boolean {
  return report.partitions.some(
    (p) =>
      p.status === 'failed' ||
      (p.status === 'busy' && p.unreadableLease !== undefined) ||
      p.skipped.length > 0 ||
      p.notDeleted.length > 0 ||
      p.badOutputs.length > 0,
  );
}

/** The API's options from the settings and the flags; a bad flag's error names its option. */
function compactOptions(ctx: CommandContext, flags: CompactFlags): CompactMetricsOptions {
  const options: CompactMetricsOptions = {
    ...readerOptions(ctx),
    ...ctx.settings.limits,
    concurrency: ctx.settings.concurrency,
    dryRun: flags.dryRun === true,
    deleteInputs: flags.deleteInputs === true,
    singleWriter: flags.singleWriter === true,
  };
  if (flags.outPrefix !== undefined) options.outPrefix = flags.outPrefix;
  if (flags.compression !== undefined) options.compression = flags.compression;
  if (flags.targetFileBytes !== undefined) options.targetFileBytes = size(flags.targetFileBytes);
  if (flags.settle !== undefined) options.settleMillis = settleMillis(flags.settle);
  if (flags.until !== undefined) options.to = until(ctx, flags.until);
  if (flags.shard !== undefined) options.shard = shard(flags.shard);
  if (flags.partitions !== undefined) options.partitionConcurrency = partitions(flags.partitions);
  return options;
}

// The flags' texts as the options' values. A text that spells none is an InvalidOptionError of
// the option; a value out of range is left to resolveCompaction. execute() (main.ts) names the
// flag in either message, as it does for every option a flag sets.

function size(text: string): number {
  const bytes = byteSizeOf(text);
  if (bytes === undefined) throw new InvalidOptionError('targetFileBytes', text, BYTE_SIZE_HELP);
  return bytes;
}

function settleMillis(text: string): number {
  const millis = text.trim() === '0' ? 0 : parseDuration(text, { zero: true });
  if (millis === undefined) {
    throw new InvalidOptionError('settleMillis', text, `0 or ${DURATION_HELP}`);
  }
  return Math.round(millis);
}

/** A count, checked here: what is not one is out of the rule's range (1-16), like 0 or 17. */
function partitions(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : text;
  return check<number>('partitionConcurrency')('partitionConcurrency', n);
}

/** `i/n`; its ranges (n at most 10,000, i below n) are resolveCompaction's to check. */
function shard(text: string): { index: number; count: number } {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (match === null) {
    throw new InvalidOptionError('shard', text, 'i/n with 0 <= i < n, e.g. 0/4');
  }
  return { index: Number(match[1]), count: Number(match[2]) };
}

function until(ctx: CommandContext, text: string): Date {
  if (ctx.settings.to !== undefined) {
    throw new UsageError('--until and --to both set the end of the range: give one of them');
  }
  const ago = parseDuration(text);
  const date = ago === undefined ? parseTime(text) : new Date(Date.now() - ago);
  if (date === undefined) {
    throw new UsageError(
      `invalid --until ${JSON.stringify(text)}: expected ${TIME_HELP}, or ${DURATION_HELP} (that long ago)`,
    );
  }
  return date;
}

/** `year=…/hour=05  compacted  600 objects, 12.3 MiB, 1,200,000 points → 1 file, 20.1 MiB; deleted 600` */
export function partitionLine(p: PartitionReport): string {
  const head = `${p.partition}  ${p.status}`;
  const tally = (n: number, bytes: number) => `${plural(n, 'object')}, ${formatBytes(bytes)}`;
  switch (p.status) {
    case 'planned': {
      const parts = [`merge ${tally(p.toMerge.inputs.objects, p.toMerge.inputs.bytes)}`];
      if (p.toMerge.outputs.objects > 0) {
        parts.push(
          `and ${plural(p.toMerge.outputs.objects, 'smaller output')} (${formatBytes(p.toMerge.outputs.bytes)})`,
        );
      }
      const merged = p.toMerge.inputs.objects + p.toMerge.outputs.objects;
      if (merged > 0) {
        const kept = merged - p.mergedToDelete;
        parts.push(
          `; delete ${formatInteger(p.mergedToDelete)}${kept > 0 ? `, keep ${plural(kept, 'OTLP object')}` : ''}`,
        );
      }
      if (p.toDelete > 0) parts.push(`; delete ${plural(p.toDelete, 'replaced object')}`);
      if (p.outputsKept > 0) parts.push(`; keep ${plural(p.outputsKept, 'output')}`);
      return `${head}  ${parts.join(' ').replaceAll(' ;', ';')}`;
    }
    case 'busy':
      if (p.unreadableLease !== undefined) {
        return `${head}  its lease cannot be read (until ${p.unreadableLease.expiredAt?.toISOString() ?? 'it is deleted'})`;
      }
      return `${head}  another compactor holds it (${p.busy?.holder ?? 'unknown'}, until ${p.busy?.expiresAt?.toISOString() ?? 'unknown'}${p.busy?.takenOverFrom === undefined ? '' : `; taken over from ${p.busy.takenOverFrom.toISOString()}`})`;
    case 'failed':
      return `${head}  ${p.error ?? ''}`;
    case 'nothing-to-do':
      return p.skippedEarlier > 0
        ? `${head}  ${plural(p.skippedEarlier, 'unreadable object')} left from an earlier run`
        : head;
    default: {
      const written = p.written.reduce((n, w) => n + w.bytes, 0);
      const read = `${tally(p.read.objects, p.read.bytes)}, ${plural(p.read.points, itemWord(p.partition))}`;
      const out = `${plural(p.written.length, 'file')}, ${formatBytes(written)}`;
      const skipped = p.skipped.length > 0 ? `; skipped ${p.skipped.length}` : '';
      return `${head}  ${read} -> ${out}; deleted ${formatInteger(p.deleted)}${skipped}`;
    }
  }
}

/** What a partition's items are: spans' and log records' partitions are under `traces/`, `logs/`. */
const itemWord = (partition: string): string =>
  partition.startsWith('traces/') ? 'span' : partition.startsWith('logs/') ? 'log record' : 'point';

function summary(report: CompactionReport, where: string, now = Date.now()): string {
  const count = (status: PartitionReport['status']) =>
    report.partitions.filter((p) => p.status === status).length;
  const written = report.partitions.flatMap((p) => p.written);
  const ignored =
    report.keysIgnored > 0 ? `${plural(report.keysIgnored, 'key')} not in the layout ignored` : '';
  if (report.dryRun) {
    return `dry run: ${plural(count('planned'), 'partition')} to compact of ${formatInteger(report.partitionsSelected)} settled in ${where}${count('busy') > 0 ? `, ${count('busy')} busy (another compactor)` : ''}; nothing was written${ignored === '' ? '' : `, ${ignored}`}${unsettledNote(report.unsettled, now)}${underPrefixNote(report)}`;
  }
  const parts = [
    `${plural(count('compacted') + count('finished'), 'partition')} compacted of ${formatInteger(report.partitionsSelected)} settled in ${where}`,
    `${plural(written.length, 'file')} written (${formatBytes(written.reduce((n, w) => n + w.bytes, 0))})`,
  ];
  if (count('busy') > 0) parts.push(`${count('busy')} busy (another compactor)`);
  if (count('failed') > 0) parts.push(`${count('failed')} failed`);
  if (ignored !== '') parts.push(ignored);
  return parts.join(', ') + unsettledNote(report.unsettled, now) + underPrefixNote(report);
}

/**
 * `; 1 hour already compacted under raw/ stays there, nothing of it written under lake/:
 * traces/…/hour=00` (an earlier run without --out-prefix), or nothing.
 */
function underPrefixNote(report: CompactionReport): string {
  const hours = report.compactedUnderPrefix;
  if (hours.length === 0) return '';
  const named = hours.slice(0, UNSETTLED_NAMED).join(', ');
  const more = hours.length > UNSETTLED_NAMED ? `, and ${hours.length - UNSETTLED_NAMED} more` : '';
  return `; ${plural(hours.length, 'hour')} already compacted under the prefix (by a run without --out-prefix) ${hours.length === 1 ? 'stays' : 'stay'} there, nothing of ${hours.length === 1 ? 'it' : 'them'} written under --out-prefix: ${named}${more}`;
}

/** How many unsettled hours are named; the rest are counted. */
const UNSETTLED_NAMED = 3;

/**
 * `; 1 hour not settled yet: year=…/hour=18 (40 objects, compacted from 2026-12-01T19:15:10.000Z,
 * in 25 min)`, or nothing when every hour with objects has settled.
 */
function unsettledNote(unsettled: readonly UnsettledHour[], now: number): string {
  if (unsettled.length === 0) return '';
  const named = unsettled.slice(0, UNSETTLED_NAMED).map((h) => {
    const wait = Math.max(0, Math.ceil((h.settlesAt.getTime() - now) / 60_000));
    return `${h.partition} (${plural(h.objects, 'object')}, compacted from ${h.settlesAt.toISOString()}, in ${formatInteger(wait)} min)`;
  });
  const more =
    unsettled.length > UNSETTLED_NAMED ? `, and ${unsettled.length - UNSETTLED_NAMED} more` : '';
  return `; ${plural(unsettled.length, 'hour')} not settled yet: ${named.join(', ')}${more}`;
}
