/** What compactMetrics() reports, as it goes (events) and at the end (the report). */

/** Objects, their stored bytes and (once read) their data points. */
export interface Tally {
  objects: number;
  bytes: number;
  points: number;
}

export type PartitionStatus =
  /** Outputs written and verified, and the Parquet inputs they replace deleted. */
  | 'compacted'
  /** Only the deletes an earlier run left undone. */
  | 'finished'
  /** Nothing to do (found so under the lease: another run did it meanwhile). */
  | 'nothing-to-do'
  /** --dry-run: what would be done. */
  | 'planned'
  /** Another compactor holds the partition's lease. */
  | 'busy'
  /** Stopped by an error; what was done is consistent, the next run finishes it. */
  | 'failed';

export interface PartitionReport {
  /** The hour, as its partition path: `year=2026/month=12/day=01/hour=05`. */
  partition: string;
  hour: Date;
  status: PartitionStatus;
  /** What the plan reads and merges: objects no output holds, and outputs below the target. */
  toMerge: { inputs: Tally; outputs: Tally };
  /** Objects outputs already replace, to delete (left by a run that stopped). */
  toDelete: number;
  /**
   * Of the objects in `toMerge`, those deleted once their output is verified: the outputs and
   * the Parquet inputs (OTLP inputs too with deleteInputs). The others are kept.
   */
  mergedToDelete: number;
  /** Outputs of at least half the target, left as they are. */
  outputsKept: number;
  /** Objects replaced by an output and kept (OTLP without --delete-inputs). */
  replacedKept: number;
  /** Objects read and their points. */
  read: Tally;
  /** Output files written. */
  written: { key: string; bytes: number; rows: number }[];
  /** Objects deleted. */
  deleted: number;
  /** Objects that could not be deleted (the next run tries again), with why. */
  notDeleted: { key: string; reason: string }[];
  /** Inputs that could not be read: left where they are, never deleted. */
  skipped: { key: string; stage: string; reason: string }[];
  /** Objects earlier runs could not read, not read again (the hour's skip record). */
  skippedEarlier: number;
  /** Outputs whose footer cannot be read or trusted: they replace nothing, are never deleted. */
  badOutputs: { key: string; reason: string }[];
  /** With status 'busy': who holds the lease, until when. */
  busy?: {
    holder: string;
    expiresAt: Date | undefined;
    /** When a run takes the hour over: the expiry and the clock-skew allowance after it. */
    takenOverFrom: Date | undefined;
  };
  /**
   * The hour's lease object that cannot be read: with status 'busy' it holds the hour until
   * `expiredAt` (undefined: the store gave no time of its write; delete it by hand); else this
   * run took it over, past that.
   */
  unreadableLease?: { key: string; reason: string; expiredAt: Date | undefined; tookOver: boolean };
  /** With status 'failed'. */
  error?: string;
}

export interface CompactionReport {
  dryRun: boolean;
  /** The hours in the selection that this shard compacts and that have settled. */
  partitionsSelected: number;
  /** Only the partitions with work (or a problem); the others needed nothing. */
  partitions: PartitionReport[];
  /** Keys under the prefix that are not in the layout, ignored. */
  keysIgnored: number;
  /**
   * Hours of the range (and the shard) that hold objects but have not settled yet, in time
   * order: a later run compacts them, from `settlesAt` on.
   */
  unsettled: UnsettledHour[];
  /**
   * With an outPrefix of its own: settled hours whose outputs are under the prefix (compacted
   * there by an earlier run without it) and that need nothing more. They stay where they are:
   * nothing of them is written under the outPrefix. Empty without an outPrefix.
   */
  compactedUnderPrefix: string[];
}

export interface UnsettledHour {
  /** `year=2026/month=12/day=01/hour=05`. */
  partition: string;
  hour: Date;
  /** Objects listed in it now. */
  objects: number;
  /** The hour's end plus the settle time: from then on it is compacted. */
  settlesAt: Date;
}

export type CompactionEvent =
  | { type: 'planned'; partitions: number; objects: number; bytes: number }
  | { type: 'partition-started'; partition: string }
  | { type: 'input-read'; partition: string; key: string; bytes: number }
  | { type: 'partition-done'; report: PartitionReport };

export function emptyTally(): Tally {
  return { objects: 0, bytes: 0, points: 0 };
}

/**
 * Of a report's keysIgnored, those in its signal's own directory (`traces/`, `logs/`); the rest
 * are under the prefix's `year=…`, which every signal's run lists (ListingCounters).
 */
const ownKeysIgnored = new WeakMap<CompactionReport, number>();

/** Notes how many of the report's keysIgnored are in its signal's own directory. */
export function withOwnKeysIgnored(report: CompactionReport, own: number): CompactionReport {
  ownKeysIgnored.set(report, own);
  return report;
}

/**
 * The reports of several runs (one a signal) as one. A key out of the layout under `year=…` is
 * counted by every signal's run that lists it: once here (the most any run counted there, their
 * ranges starting alike), with those of each signal's own directory.
 */
export function joinedReports(reports: readonly CompactionReport[]): CompactionReport {
  const own = (r: CompactionReport) => ownKeysIgnored.get(r) ?? r.keysIgnored;
  return {
    dryRun: reports.some((r) => r.dryRun),
    partitionsSelected: reports.reduce((n, r) => n + r.partitionsSelected, 0),
    partitions: reports.flatMap((r) => r.partitions),
    keysIgnored:
      reports.reduce((n, r) => n + own(r), 0) +
      Math.max(0, ...reports.map((r) => r.keysIgnored - own(r))),
    unsettled: reports.flatMap((r) => r.unsettled),
    compactedUnderPrefix: reports.flatMap((r) => r.compactedUnderPrefix),
  };
}
