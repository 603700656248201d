import { hostname } from 'node:os';
import { uuidv7 } from 'uuidv7';
import type { SignalName } from '../layout/formats.js';
import { outputNames } from '../layout/outputs.js';
import { hourPath, tmpDirectory } from './bookkeeping.js';
import { conditionalWritesWork } from './conditional-writes.js';
import { dirStore } from './dir-store.js';
import { LOG_RECORD_ROWS, SPAN_ROWS } from './flat-rows.js';
import { type ListingCounters, listedHours, listHours } from './listing.js';
import { METRICS_ROWS } from './metrics-rows.js';
import {
  type CompactionSettings,
  type CompactMetricsOptions,
  resolveCompaction,
} from './options.js';
import {
  compactPartition,
  plannedReport,
  planRules,
  type RunContext,
  reportOf,
} from './partition-job.js';
import { type PartitionPlan, planPartition } from './plan.js';
import {
  type CompactionReport,
  type PartitionReport,
  type UnsettledHour,
  withOwnKeysIgnored,
} from './report.js';
import type { AnyCompactionRows } from './signal-rows.js';
import type { CompactionStore } from './store.js';

const HOUR = 3_600_000;

/** The server does not honour If-None-Match, and the run was not told it is the only writer. */
export class ConditionalWritesUnsupportedError extends Error {
  constructor(where: string) {
    super(
      `${where} does not honour conditional writes (If-None-Match: *), which keep two compactors from writing the same hour: ` +
        'nothing was written. If this is the only compactor that ever runs on this prefix, run with --single-writer (singleWriter: true).',
    );
    this.name = 'ConditionalWritesUnsupportedError';
  }
}

/**
 * Merges the closed hour partitions of metrics under a prefix into few large, sorted Parquet
 * files (see docs/parquet.md, Compaction). Plans from a listing first (a run with nothing to do
 * writes nothing), then compacts each hour under its lease, `partitionConcurrency` at a time.
 * Throws InvalidOptionError for a bad option, ReadAccessError for an access problem, and
 * ConditionalWritesUnsupportedError when the server cannot keep compactors apart; a partition
 * that fails is reported and the others go on.
 */
export async function compactMetrics(options: CompactMetricsOptions): Promise<CompactionReport> {
  return compactSignal(options, METRICS_ROWS);
}

/**
 * As compactMetrics, for spans: the Parquet files under `{prefix}/traces/` (the Parquet layout
 * of spans), each hour into few large files sorted by ServiceName, StatusCode, TraceId and
 * Timestamp. OTLP objects of spans are left as they are.
 */
export async function compactSpans(options: CompactMetricsOptions): Promise<CompactionReport> {
  return compactSignal(options, SPAN_ROWS);
}

/** As compactSpans, for log records (`{prefix}/logs/`). */
export async function compactLogRecords(options: CompactMetricsOptions): Promise<CompactionReport> {
  return compactSignal(options, LOG_RECORD_ROWS);
}

/** The compaction of one signal. */
export function compactionOf(
  signal: SignalName,
): (options: CompactMetricsOptions) => Promise<CompactionReport> {
  return { metrics: compactMetrics, traces: compactSpans, logs: compactLogRecords }[signal];
}

/** Compaction of the signal whose rows are `rows`: the steps above, none of them the signal's. */
async function compactSignal(
  options: CompactMetricsOptions,
  rows: AnyCompactionRows,
): Promise<CompactionReport> {
  const settings = resolveCompaction(options, rows.signal, rows.settleFormat);
  const signal = options.signal ?? new AbortController().signal;
  const emit = options.onProgress ?? (() => {});
  const store = await openStore(options, settings);
  try {
    const counters: ListingCounters = { keysIgnored: 0, ownKeysIgnored: 0 };
    const { shard } = settings;
    const accept = (hour: number) => Math.floor(hour / HOUR) % shard.count === shard.index;
    let partitionsSelected = 0;
    const plans: PartitionPlan[] = [];
    const compactedUnderPrefix: string[] = [];
    const range = hourRange(settings);
    for await (const objects of listHours(
      settings,
      store.source,
      range,
      accept,
      counters,
      signal,
    )) {
      partitionsSelected++;
      const plan = planPartition(objects, planRules(settings));
      if (plan.work || plan.badOutputs.length > 0 || plan.knownBad.length > 0) plans.push(plan);
      else if (
        settings.outPrefix !== settings.prefix &&
        // The outPrefix's directory: lake/, not lake2/ beside it (here outPrefix is not ''). A
        // copy of objects an output under it holds is not the hour staying under the prefix.
        plan.kept.some(
          (output) =>
            !output.key.startsWith(`${settings.outPrefix}/`) && !plan.copies.includes(output),
        )
      ) {
        compactedUnderPrefix.push(settings.partitionRoot + hourPath(plan.hour));
      }
    }
    const work = plans.filter((p) => p.work);
    const toRead = work.flatMap((p) => [...p.merge.inputs, ...p.merge.outputs]);
    emit({
      type: 'planned',
      partitions: work.length,
      objects: toRead.length,
      bytes: toRead.reduce((n, o) => n + o.size, 0),
    });
    const root = settings.partitionRoot;
    const idle = plans.filter((p) => !p.work).map((p) => reportOf(p, 'nothing-to-do', root));
    const unsettled = await unsettledHours(settings, store, range, accept, signal);
    const finish = (partitions: PartitionReport[]): CompactionReport =>
      withOwnKeysIgnored(
        {
          dryRun: settings.dryRun,
          partitionsSelected,
          partitions: [...partitions, ...idle].sort((a, b) => a.hour.getTime() - b.hour.getTime()),
          keysIgnored: counters.keysIgnored,
          unsettled,
          compactedUnderPrefix,
        },
        counters.ownKeysIgnored ?? 0,
      );
    if (settings.dryRun) {
      const planned: PartitionReport[] = [];
      for (const p of work) planned.push(await plannedReport(settings, store, p, signal));
      return finish(planned);
    }
    if (work.length === 0) return finish([]);
    if (
      !settings.singleWriter &&
      !(await conditionalWritesWork(store, settings.outPrefix, signal))
    ) {
      throw new ConditionalWritesUnsupportedError(store.source.description);
    }
    const ctx: RunContext = {
      settings,
      rows,
      store,
      names: outputNames(settings.outPrefix, settings.filePrefix, settings.signal),
      holder: `${hostname()}/${process.pid}/${uuidv7().slice(-12)}`,
      conditional: !settings.singleWriter,
      signal,
      emit,
    };
    const reports = await inTurn(work, settings.partitionConcurrency, async (plan) => {
      const report = await compactPartition(ctx, plan);
      emit({ type: 'partition-done', report });
      return report;
    });
    return finish(reports);
  } finally {
    store.close();
  }
}

/**
 * The hours of the range, past the settled ones, that hold objects: named in the report with the
 * time each settles, so that a run with nothing settled says why (one more listing, from the
 * first unsettled hour on).
 */
async function unsettledHours(
  settings: CompactionSettings,
  store: CompactionStore,
  settled: { from: number; to: number },
  accept: (hour: number) => boolean,
  signal: AbortSignal,
): Promise<UnsettledHour[]> {
  const end = settings.to?.getTime() ?? Number.POSITIVE_INFINITY;
  const from = Math.max(settled.from, settled.to);
  if (from >= end) return [];
  const hours: UnsettledHour[] = [];
  for await (const { hour, objects } of listedHours(
    settings,
    store.source,
    { from, to: end },
    accept,
    signal,
  )) {
    hours.push({
      partition: settings.partitionRoot + hourPath(hour),
      hour,
      objects,
      settlesAt: new Date(hour.getTime() + HOUR + settings.settleMillis),
    });
  }
  return hours;
}

/** A directory's store, or the bucket's: only the latter loads the S3 client (about 0.1 s). */
async function openStore(
  options: CompactMetricsOptions,
  settings: CompactionSettings,
): Promise<CompactionStore> {
  if (options.dir !== undefined) return dirStore(options.dir, tmpDirectory(settings.outPrefix));
  const { s3Store } = await import('./store.js');
  return s3Store(options.bucket, options);
}

/**
 * The hours to look at: those that overlap [from, to) and have settled (ended at least the
 * settle time ago).
 */
function hourRange(settings: CompactionSettings, now = Date.now()): { from: number; to: number } {
  const floor = (ms: number) => ms - (((ms % HOUR) + HOUR) % HOUR);
  const settled = floor(now - settings.settleMillis);
  const from =
    settings.from === undefined ? Number.NEGATIVE_INFINITY : floor(settings.from.getTime());
  const to = Math.min(settings.to?.getTime() ?? Number.POSITIVE_INFINITY, settled);
  return { from, to };
}

/** Runs `work` over the items, at most `limit` at once; results in the items' order. */
async function inTurn<T, R>(
  items: T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
