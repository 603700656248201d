import { inputRows, type Replaces, replacedKeys } from '../reader/compacted.js';
import type { ListedObject } from '../reader/replaced-inputs.js';

/**
 * What to do with one closed hour, decided from its listing alone (and the footers of its
 * outputs): no lease, no write. Pure, so that every rule here is tested without a server.
 */

/** A compaction output and what its footer says. */
export interface OutputInfo extends ListedObject {
  /** Rows in the file, from its footer. */
  rows: number;
  replaces: Replaces;
}

/** An output whose footer cannot be trusted: it replaces nothing and is never deleted. */
export interface BadOutput extends ListedObject {
  reason: string;
  /**
   * Its footer could not be fetched (not: was read and is bad). What it replaces is unknown, and
   * may be the hour's other objects: nothing is merged in its hour until it is read.
   */
  unfetched?: boolean;
}

/** An object an earlier run could not read (the hour's skip record). */
export interface SkippedObject {
  key: string;
  size: number;
  reason: string;
}

export interface HourObjects {
  hour: Date;
  /** Objects of the input layout, in key order. */
  inputs: ListedObject[];
  /** Readable outputs of this hour (under the output prefix, or the input prefix). */
  outputs: OutputInfo[];
  badOutputs: BadOutput[];
  /** From the skip record, when there is one. */
  skipped: SkippedObject[];
}

export interface PlanRules {
  /** Outputs at least this large are left as they are (see FULL_OUTPUT_FRACTION). */
  fullOutputBytes: number;
  /** Also delete the OTLP objects an output replaces (kept by default). */
  deleteInputs: boolean;
  /**
   * Where the run writes its outputs when not in place: of two outputs that hold the same
   * objects' rows, the one under it is the one merged. Undefined: in place.
   */
  outPrefix?: string;
}

export interface PartitionPlan {
  hour: Date;
  /** What to read into new outputs: outputs that are not full, then objects no output holds. */
  merge: { outputs: OutputInfo[]; inputs: ListedObject[] };
  /**
   * How many of the merged objects are deleted once their output is verified (the outputs and
   * the Parquet inputs, and the OTLP ones with deleteInputs); the others are kept.
   */
  mergeDeletes: number;
  /** Objects that outputs already replace and that are to be deleted (a run stopped before). */
  finish: { output: OutputInfo; deletes: ListedObject[] }[];
  /** Outputs left as they are. */
  kept: OutputInfo[];
  /**
   * Of those, the ones left because an output taken before them holds the same objects (a copy
   * in place of an hour under the out-prefix).
   */
  copies: OutputInfo[];
  /** Objects earlier runs could not read, not read again. */
  knownBad: ListedObject[];
  badOutputs: BadOutput[];
  /** Objects replaced by an output and kept (OTLP): neither read nor deleted. */
  replacedKept: number;
  /** True when the hour needs a write: a merge or deletes. */
  work: boolean;
}

/**
 * Outputs of at least this fraction of --target-file-bytes are full: late data is merged only
 * with the smaller ones, so a late file never rewrites the whole hour and repeated runs settle
 * at the target's file count.
 */
export const FULL_OUTPUT_FRACTION = 0.5;

export function planPartition(objects: HourObjects, rules: PlanRules): PartitionPlan {
  const { inputs, outputs } = objects;
  const present = new Map<string, ListedObject>();
  for (const object of [...inputs, ...outputs]) present.set(object.key, object);

  // An object is finished by an output that records the rows it read from it when there is
  // one (its delete needs that count), else by one that lists it as superseded.
  const replacedBy = new Map<string, OutputInfo>();
  for (const output of outputs) {
    for (const key of output.replaces.superseded) replacedBy.set(key, output);
  }
  for (const output of outputs) {
    for (const input of output.replaces.inputs) replacedBy.set(input.key, output);
  }
  const deletable = (object: ListedObject) =>
    object.parsed.encoding.format === 'parquet' || rules.deleteInputs;

  const live = outputs.filter((output) => !replacedBy.has(output.key));
  const full = live.filter((o) => o.size >= rules.fullOutputBytes || !consistent(o));
  // Two outputs that replace the same object both hold its rows: an hour compacted under an
  // out-prefix and again in place (a run in place does not list the out-prefix, and the OTLP
  // objects are kept). Merged together, or one merged while the other stays, every row of that
  // object would be in the hour twice, for good. So an output that shares a replaced object with
  // one taken before it is left as it is: those under the run's out-prefix are taken first (full,
  // then small), then the others (full, then small).
  const claimed = new Set<string>();
  const claim = (output: OutputInfo) => {
    const keys = replacedKeys(output.replaces);
    if (keys.some((key) => claimed.has(key))) return false;
    for (const key of keys) claimed.add(key);
    return true;
  };
  // Inside the out-prefix's directory: lake/, not lake2/ beside it.
  const underOut = (o: OutputInfo) =>
    rules.outPrefix !== undefined && o.key.startsWith(`${rules.outPrefix}/`);
  const outside = (o: OutputInfo) => !underOut(o);
  const rest = live.filter((o) => !full.includes(o));
  const taken = new Set(
    [
      ...full.filter(underOut),
      ...rest.filter(underOut),
      ...full.filter(outside),
      ...rest.filter(outside),
    ].filter(claim),
  );
  const small = [...rest.filter(underOut), ...rest.filter(outside)].filter((o) => taken.has(o));
  const copies = rest.filter((o) => !taken.has(o));
  // An object only copies outside the out-prefix hold (an object late for the out-prefix,
  // compacted in place with the ones already there) is in no output under it: it is read again,
  // or the out-prefix never holds it. A copy under the out-prefix (or in place) holds it already.
  const held = new Set(claimed);
  for (const copy of live.filter((o) => !taken.has(o)))
    if (rules.outPrefix === undefined || underOut(copy))
      for (const key of replacedKeys(copy.replaces)) held.add(key);
  const inputKeys = new Set(inputs.map((input) => input.key));
  const readAgain = (key: string) => inputKeys.has(key) && replacedBy.has(key) && !held.has(key);

  const finish = new Map<OutputInfo, ListedObject[]>();
  let replacedKept = 0;
  for (const [key, output] of replacedBy) {
    const object = present.get(key);
    if (object === undefined || readAgain(key)) continue;
    if (!consistent(output)) continue; // a footer that disagrees with itself deletes nothing
    if (deletable(object)) finish.set(output, [...(finish.get(output) ?? []), object]);
    else replacedKept++;
  }

  const skipped = new Map(objects.skipped.map((s) => [s.key, s]));
  const raw: ListedObject[] = [];
  const knownBad: ListedObject[] = [];
  for (const input of inputs) {
    if (replacedBy.has(input.key) && !readAgain(input.key)) continue;
    if (skipped.get(input.key)?.size === input.size) knownBad.push(input);
    else raw.push(input);
  }
  // Merged beside an output whose footer was not fetched, objects it holds would be in two
  // outputs that neither replaces the other: every point of them twice, for good.
  const unknown = objects.badOutputs.some((output) => output.unfetched === true);
  const merging = !unknown && (raw.length > 0 || small.length >= 2);
  const merge = merging ? { outputs: small, inputs: raw } : { outputs: [], inputs: [] };
  return {
    hour: objects.hour,
    merge,
    mergeDeletes: merge.outputs.length + merge.inputs.filter(deletable).length,
    finish: [...finish].map(([output, deletes]) => ({ output, deletes })),
    kept: merging ? [...full, ...copies] : live,
    copies: live.filter((o) => !taken.has(o)),
    knownBad,
    badOutputs: objects.badOutputs,
    replacedKept,
    work: merging || finish.size > 0,
  };
}

/** An output's footer rows equal the rows its metadata says it read. */
export function consistent(output: OutputInfo): boolean {
  return inputRows(output.replaces) === output.rows;
}
