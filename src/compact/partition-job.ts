import type { OutputNames } from '../layout/outputs.js';
import { ReadAccessError } from '../reader/errors.js';
import { type ListedObject, openStoredParquet } from '../reader/replaced-inputs.js';
import { hourPath, leaseDirectory, skipRecordKey } from './bookkeeping.js';
import { InputReader } from './inputs.js';
import {
  acquireLease,
  type Lease,
  type LeaseAttempt,
  type LeaseOptions,
  leaseState,
  type UnreadableLease,
} from './lease.js';
import { listHours } from './listing.js';
import { mergeInputs } from './merge.js';
import type { CompactionSettings } from './options.js';
import {
  FULL_OUTPUT_FRACTION,
  type HourObjects,
  type OutputInfo,
  type PartitionPlan,
  planPartition,
} from './plan.js';
import { type PublishContext, publish } from './publish.js';
import { type CompactionEvent, emptyTally, type PartitionReport, type Tally } from './report.js';
import type { AnyCompactionRows } from './signal-rows.js';
import type { CompactionStore } from './store.js';

/**
 * Compacting one hour: take its lease, list it again (the plan was made without the lease),
 * finish what a stopped run left (deletes of objects a verified output replaces), merge what no
 * output holds into new outputs, record inputs that cannot be read, give the lease back. Every
 * step leaves a state the reader reads right and the next run finishes.
 */

export interface RunContext {
  settings: CompactionSettings;
  /** The signal's rows. */
  rows: AnyCompactionRows;
  store: CompactionStore;
  names: OutputNames;
  /** Who this run is, in its leases. */
  holder: string;
  /** If-None-Match on outputs and leases (false only with singleWriter). */
  conditional: boolean;
  signal: AbortSignal;
  emit(event: CompactionEvent): void;
}

const HOUR = 3_600_000;

/** The plan's rules for these settings. */
export function planRules(settings: CompactionSettings) {
  return {
    fullOutputBytes: settings.targetFileBytes * FULL_OUTPUT_FRACTION,
    deleteInputs: settings.deleteInputs,
    outPrefix: settings.outPrefix === settings.prefix ? undefined : settings.outPrefix,
  };
}

const dateOf = (at: number | undefined) => (at === undefined ? undefined : new Date(at));

/** The lease of the planned hour, as `holder` asks for it. */
function leaseOptions(
  settings: CompactionSettings,
  store: CompactionStore,
  hour: Date,
  holder: string,
): LeaseOptions {
  return {
    store,
    directory: leaseDirectory(settings.outPrefix, hour, settings.partitionRoot),
    holder,
    durationMillis: settings.leaseMillis,
    clockSkewMillis: settings.leaseClockSkewMillis,
  };
}

/**
 * `report` with what the hour's lease said: an unreadable lease it holds or that was taken over,
 * and 'busy' with its holder, its expiry and when a run takes it over (the clock-skew allowance
 * after), when another compactor holds it.
 */
function withLease(
  report: PartitionReport,
  settings: CompactionSettings,
  found: { tookOver?: UnreadableLease } | Extract<LeaseAttempt, { busy: unknown }>,
): PartitionReport {
  const unreadable = 'busy' in found ? found.busy.unreadable : found.tookOver;
  if (unreadable !== undefined) {
    report.unreadableLease = {
      key: unreadable.key,
      reason: unreadable.reason,
      expiredAt: dateOf(unreadable.expiredAt),
      tookOver: !('busy' in found),
    };
  }
  if (!('busy' in found)) return report;
  const { holder, expiresAt } = found.busy;
  const takenOverFrom = dateOf(
    expiresAt === undefined ? undefined : expiresAt + settings.leaseClockSkewMillis,
  );
  return {
    ...report,
    status: 'busy',
    busy: { holder, expiresAt: dateOf(expiresAt), takenOverFrom },
  };
}

/**
 * A dry run's report of a planned hour: 'planned', or 'busy' as the run would find it (the
 * lease read, nothing written).
 */
export async function plannedReport(
  settings: CompactionSettings,
  store: CompactionStore,
  plan: PartitionPlan,
  signal: AbortSignal,
): Promise<PartitionReport> {
  const report = reportOf(plan, 'planned', settings.partitionRoot);
  if (settings.singleWriter) return report;
  return withLease(
    report,
    settings,
    await leaseState(leaseOptions(settings, store, plan.hour, ''), signal),
  );
}

export async function compactPartition(
  ctx: RunContext,
  planned: PartitionPlan,
): Promise<PartitionReport> {
  const { settings, store, signal } = ctx;
  const report = reportOf(planned, 'failed', settings.partitionRoot);
  ctx.emit({ type: 'partition-started', partition: report.partition });
  let lease: Lease | undefined;
  if (!settings.singleWriter) {
    const attempt = await acquireLease(
      leaseOptions(settings, store, planned.hour, ctx.holder),
      signal,
    );
    const found = withLease(report, settings, attempt);
    if ('busy' in attempt) return found;
    lease = attempt.lease;
  }
  // Each step (a PUT, a batch of deletes) starts with half a lease left at least.
  const beforeStep = async () => lease?.keep(settings.leaseMillis / 2, signal);
  const underLease = <T>(step: (signal: AbortSignal) => Promise<T>): Promise<T> =>
    lease === undefined ? step(signal) : lease.during(step, signal);
  // An output PUT that failed or whose answer was unclear may still land. Given back, the lease
  // would let the next run list the hour at once, before it lands, and merge the same inputs
  // into an output of its own (both would replace them: every point twice). Left to run out, the
  // next run waits the clock-skew allowance past its expiry, as after a takeover.
  let mayLand = false;
  try {
    const plan = planPartition(await listHour(ctx, planned.hour), planRules(settings));
    Object.assign(
      report,
      reportOf(plan, plan.work ? 'finished' : 'nothing-to-do', settings.partitionRoot),
    );
    const held = await finish(ctx, plan, report, beforeStep);
    // An output whose replaced objects are not all gone keeps the only record of their rows:
    // merged into a new output, they would be listed there without any (superseded), and could
    // never be checked again. It is left as it is until a later run has deleted them.
    if (held.size > 0) {
      let merged = plan.merge.outputs.filter((output) => !held.has(output));
      // One output left alone would be read for nothing (merge.ts writes it not again).
      if (plan.merge.inputs.length === 0 && merged.length < 2) merged = [];
      const dropped = plan.merge.outputs.length - merged.length;
      report.outputsKept += dropped;
      plan.merge.outputs = merged;
      plan.mergeDeletes -= dropped;
      report.toMerge = reportOf(plan, report.status).toMerge;
      report.mergedToDelete = plan.mergeDeletes;
    }
    if (plan.merge.inputs.length + plan.merge.outputs.length > 0) {
      await merge(ctx, plan, report, beforeStep, underLease, () => {
        mayLand = true;
      });
      // Nothing written when every input was unreadable.
      if (report.written.length > 0) report.status = 'compacted';
      else if (report.deleted === 0) report.status = 'nothing-to-do';
    }
  } catch (error) {
    if (error instanceof ReadAccessError || signal.aborted) throw error;
    report.status = 'failed';
    report.error = error instanceof Error ? error.message : String(error);
  } finally {
    if (!mayLand) await lease?.release(signal).catch(() => {});
    else if (lease !== undefined && report.error !== undefined)
      report.error += `; its lease is left to run out (${new Date(lease.expiresAt).toISOString()}): the output's write may still land`;
  }
  return report;
}

/**
 * Deletes what verified outputs replace, after checking the Parquet ones against the footers.
 * The outputs some of whose objects are still there (kept, or their delete failed).
 */
async function finish(
  ctx: RunContext,
  plan: PartitionPlan,
  report: PartitionReport,
  beforeStep: () => Promise<void>,
): Promise<Set<OutputInfo>> {
  const held = new Set<OutputInfo>();
  for (const { output, deletes } of plan.finish) {
    const rowsOf = new Map(output.replaces.inputs.map((i) => [i.key, i.rows]));
    const sure: string[] = [];
    for (const object of deletes) {
      const problem = await parquetRowsProblem(ctx, object, rowsOf.get(object.key));
      if (problem === undefined) sure.push(object.key);
      else report.notDeleted.push({ key: object.key, reason: problem });
    }
    await beforeStep();
    const failed = await ctx.store.delete(sure, ctx.signal);
    report.deleted += sure.length - failed.size;
    for (const [key, reason] of failed) report.notDeleted.push({ key, reason });
    if (sure.length - failed.size < deletes.length) held.add(output);
  }
  return held;
}

/**
 * For a Parquet input: its footer's rows against what the output says it read from it. No
 * check, no delete: a footer that cannot be read now, or rows no present output recorded (the
 * object is only in a list of superseded objects), keep the object for a later run.
 */
async function parquetRowsProblem(
  ctx: RunContext,
  object: ListedObject,
  recorded: number | undefined,
): Promise<string | undefined> {
  if (object.parsed.encoding.format !== 'parquet') return undefined;
  if (recorded === undefined) {
    return 'no output present records the rows it read from it (it is listed as superseded only): kept; compare its rows with the output\'s, then delete it by hand (docs/parquet.md, "Never a point lost, never one twice")';
  }
  const { source } = ctx.store;
  const { limits, signal } = ctx.settings;
  let rows: number;
  try {
    rows = (await openStoredParquet(source, object, limits, signal, ctx.signal)).rows;
  } catch (error) {
    if (error instanceof ReadAccessError) throw error;
    ctx.signal.throwIfAborted();
    const why = error instanceof Error ? error.message : String(error);
    return `its footer cannot be read to check its rows (${why}): kept for a later run`;
  }
  if (rows === recorded) return undefined;
  return `it holds ${rows} rows, the output that replaces it read ${recorded}: kept`;
}

async function merge(
  ctx: RunContext,
  plan: PartitionPlan,
  report: PartitionReport,
  beforeStep: () => Promise<void>,
  underLease: PublishContext['underLease'],
  mayLand: PublishContext['mayLand'],
): Promise<void> {
  const { settings, store, signal } = ctx;
  const reader = new InputReader(
    ctx.rows,
    store.source,
    settings.limits,
    settings.concurrency,
    signal,
  );
  const newlySkipped: { key: string; size: number; reason: string }[] = [];
  const context = {
    store,
    names: ctx.names,
    table: settings.signal,
    hour: plan.hour,
    limits: settings.limits,
    conditional: ctx.conditional,
    deletable: (o: ListedObject) => o.parsed.encoding.format === 'parquet' || settings.deleteInputs,
    beforeStep,
    underLease,
    mayLand,
    signal,
  };
  await mergeInputs(
    [
      ...plan.merge.outputs.map((output) => ({ object: output, output })),
      ...plan.merge.inputs.map((object) => ({ object })),
    ],
    {
      rows: ctx.rows,
      reader,
      targetBytes: settings.targetFileBytes,
      runBytes: settings.runBytes,
      compression: settings.compression,
      async beforeInput(object) {
        await beforeStep();
        ctx.emit({
          type: 'input-read',
          partition: report.partition,
          key: object.key,
          bytes: object.size,
        });
      },
      async onFile(file) {
        const published = await publish(file, context);
        report.written.push({ key: published.key, bytes: published.bytes, rows: published.rows });
        for (const { object, rows } of file.inputs) add(report.read, object.size, rows);
        report.deleted += published.deleted;
        report.notDeleted.push(...published.notDeleted);
      },
      onSkipped(object, error) {
        report.skipped.push({ key: object.key, stage: error.stage, reason: error.message });
        if (error.permanent)
          newlySkipped.push({ key: object.key, size: object.size, reason: error.message });
      },
    },
  );
  if (newlySkipped.length > 0) {
    const earlier = await listHour(ctx, plan.hour);
    const present = new Set(earlier.inputs.map((i) => i.key));
    const objects = [...earlier.skipped.filter((s) => present.has(s.key)), ...newlySkipped];
    const body = new TextEncoder().encode(`${JSON.stringify({ objects }, null, 1)}\n`);
    await beforeStep();
    await store.put(
      skipRecordKey(settings.outPrefix, plan.hour, settings.partitionRoot),
      body,
      false,
      signal,
    );
  }
}

/** One hour listed again, now. */
async function listHour(ctx: RunContext, hour: Date): Promise<HourObjects> {
  const from = hour.getTime();
  const counters = { keysIgnored: 0 };
  const range = { from, to: from + HOUR };
  for await (const objects of listHours(
    ctx.settings,
    ctx.store.source,
    range,
    () => true,
    counters,
    ctx.signal,
  )) {
    return objects;
  }
  return { hour, inputs: [], outputs: [], badOutputs: [], skipped: [] };
}

function add(tally: Tally, bytes: number, points: number): void {
  tally.objects++;
  tally.bytes += bytes;
  tally.points += points;
}

/**
 * A report of the plan, before anything is done. `root`: where the signal's partitions start
 * ('' for metrics, `traces/`, `logs/`), before the hour's path in the report's `partition`.
 */
export function reportOf(
  plan: PartitionPlan,
  status: PartitionReport['status'],
  root = '',
): PartitionReport {
  const tally = (objects: ListedObject[]) => {
    const t = emptyTally();
    for (const o of objects) {
      t.objects++;
      t.bytes += o.size;
    }
    return t;
  };
  return {
    partition: root + hourPath(plan.hour),
    hour: plan.hour,
    status,
    toMerge: { inputs: tally(plan.merge.inputs), outputs: tally(plan.merge.outputs) },
    toDelete: plan.finish.reduce((n, f) => n + f.deletes.length, 0),
    mergedToDelete: plan.mergeDeletes,
    outputsKept: plan.kept.length,
    replacedKept: plan.replacedKept,
    read: emptyTally(),
    written: [],
    deleted: 0,
    notDeleted: [],
    skipped: [],
    skippedEarlier: plan.knownBad.length,
    badOutputs: plan.badOutputs.map((o) => ({ key: o.key, reason: o.reason })),
  };
}
