import { randomBytes, randomInt } from 'node:crypto';
import { UUID } from 'uuidv7';
import type { SignalName } from '../layout/formats.js';
import type { OutputNames } from '../layout/outputs.js';
import { REPLACES_KEY } from '../reader/compacted.js';
import type { ReadLimits } from '../reader/read-limits.js';
import { type ListedObject, openStoredParquet } from '../reader/replaced-inputs.js';
import type { FinishedFile } from './merge.js';
import type { CompactionStore, PutResult } from './store.js';

/**
 * Publishing one output: PUT with If-None-Match, read its footer back from the store and check
 * it against what was read from the inputs, and only then delete the inputs it replaces that
 * are to go. A check that fails deletes the output (nothing else; under the lease) and stops the
 * partition.
 */

export interface PublishContext {
  store: CompactionStore;
  names: OutputNames;
  /** The signal of the outputs: their footer is read back in its schema. */
  table: SignalName;
  hour: Date;
  limits: ReadLimits;
  /** If-None-Match on the PUT (false only with singleWriter on a server without it). */
  conditional: boolean;
  /** Inputs of this kind are deleted once an output replaces them. */
  deletable(object: ListedObject): boolean;
  /** Called before the PUT and before the deletes: the lease must last through each. */
  beforeStep(): Promise<void>;
  /** Runs the output's PUT under the lease (Lease.during), when there is one. */
  underLease<T>(step: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /**
   * Called when the output's PUT failed or its answer leaves its fate unknown (a 409 for a write
   * of its key still in flight): the write may land later, so the hour must not be handed over
   * before the lease has run out (see compactPartition).
   */
  mayLand(): void;
  signal: AbortSignal;
}

export interface Published {
  key: string;
  bytes: number;
  rows: number;
  deleted: number;
  notDeleted: { key: string; reason: string }[];
}

/**
 * The output check failed: the inputs are untouched, and the output was removed, or its delete
 * failed (`notDeleted`: why) and it is still there.
 */
export class VerificationError extends Error {
  constructor(key: string, detail: string, notDeleted?: string) {
    super(
      notDeleted === undefined
        ? `output ${key} failed its check and was deleted: ${detail}`
        : `output ${key} failed its check (${detail}) and could not be deleted (${notDeleted}): it is left where it is, and a later run reads its footer again`,
    );
    this.name = 'VerificationError';
  }
}

export async function publish(file: FinishedFile, c: PublishContext): Promise<Published> {
  // Named above every input, not only in its newest input's millisecond: objects of one
  // millisecond sort by their random bits, and a reader that has paged past one of them while
  // an input above it was still there must find the output after its cursor (else it would
  // list neither the output nor the deleted input, and miss its points without a word).
  const newest =
    file.inputs
      .map((i) => i.object.parsed.id)
      .sort()
      .at(-1) ?? '';
  const key = c.names.render(c.hour, uuidAbove(newest));
  await c.beforeStep();
  let put: PutResult;
  try {
    put = await c.underLease((signal) => c.store.put(key, file.bytes, c.conditional, signal));
  } catch (error) {
    c.mayLand();
    throw error;
  }
  const stored = await readBack(c, key, file);
  // A fresh random name that is taken holds our output only when the SDK sent our PUT again
  // after its answer was lost (the retry is refused for our own object): its footer then lists
  // the objects this output replaces, a list no other output has. Else never ours to touch.
  if (put === 'exists' && (typeof stored === 'string' || stored.replaces !== file.replaces)) {
    // Nothing readable there but another object: a write of ours may be in flight (a 409).
    if (typeof stored === 'string' && !(await takenByAnother(c, key, file.bytes.length))) {
      c.mayLand();
    }
    throw new Error(`output ${key} exists already`);
  }
  const problem = storedProblem(stored, file);
  if (problem !== undefined) {
    // Under the lease, as every write to the hour: a run that stalled past it may find that
    // another took the hour over, saw this output and deleted the inputs it replaces (its
    // footer read back here may only have failed to arrive). Then the output stays.
    await c.beforeStep();
    const failed = await c.store.delete([key], c.signal);
    throw new VerificationError(key, problem, failed.get(key));
  }
  await c.beforeStep();
  const doomed = file.inputs.filter((i) => c.deletable(i.object)).map((i) => i.object.key);
  const failed = doomed.length === 0 ? new Map() : await c.store.delete(doomed, c.signal);
  return {
    key,
    bytes: file.bytes.length,
    rows: file.rows,
    deleted: doomed.length - failed.size,
    notDeleted: [...failed].map(([k, reason]) => ({ key: k, reason })),
  };
}

/**
 * True when another object of another size holds `key`: If-None-Match keeps any write of ours
 * from landing there. False when none is listed, or it cannot be told.
 */
async function takenByAnother(c: PublishContext, key: string, size: number): Promise<boolean> {
  // Listed from its folder, after the keys that sort before it but for its last character.
  const stem = key.slice(0, -1);
  try {
    const folder = key.slice(0, key.lastIndexOf('/'));
    for await (const listed of c.store.source.list(folder, stem, c.signal)) {
      if (listed.key === key) return c.conditional && listed.size !== size;
      if (!listed.key.startsWith(stem)) break;
    }
  } catch {
    c.signal.throwIfAborted();
  }
  return false;
}

/** What the check reads in an output's footer. */
interface StoredFooter {
  rows: number;
  replaces: string | undefined;
}

/** The stored output's footer, read back from the store; or why it cannot be read. */
async function readBack(
  c: PublishContext,
  key: string,
  file: FinishedFile,
): Promise<StoredFooter | string> {
  try {
    const object = { key, size: file.bytes.length };
    const stored = await openStoredParquet(c.store.source, object, c.limits, c.table, c.signal);
    const replaces = stored.keyValues.find((kv) => kv.key === REPLACES_KEY)?.value;
    return { rows: stored.rows, replaces };
  } catch (error) {
    c.signal.throwIfAborted();
    return `its footer cannot be read back: ${error instanceof Error ? error.message : error}`;
  }
}

/** What is wrong with the output as read back; undefined when nothing. */
function storedProblem(stored: StoredFooter | string, file: FinishedFile): string | undefined {
  if (typeof stored === 'string') return stored;
  if (stored.rows !== file.rows) {
    return `its footer says ${stored.rows} rows, the inputs held ${file.rows}`;
  }
  if (stored.replaces !== file.replaces)
    return 'its list of replaced objects is not the one written';
  return undefined;
}

const RANDOM_BITS = 74n;

/**
 * A UUIDv7 that sorts after `id` (a UUIDv7, lowercase as keys hold them): its millisecond with
 * fresh random bits above its own, or the next millisecond when they leave too little room.
 */
export function uuidAbove(id: string): string {
  const hex = id.replaceAll('-', '');
  const millis = Number.parseInt(hex.slice(0, 12), 16);
  // The 74 random bits: 12 after the version nibble, 62 after the two variant bits.
  const bits =
    (BigInt(`0x${hex.slice(13, 16)}`) << 62n) | (BigInt(`0x${hex.slice(16)}`) & (2n ** 62n - 1n));
  const room = 2n ** RANDOM_BITS - 1n - bits;
  if (room < 2n ** 32n) return uuidAt(millis + 1);
  const next = bits + 1n + (randomBytes(8).readBigUInt64BE() % room);
  return UUID.fromFieldsV7(
    millis,
    Number(next >> 62n),
    Number((next >> 32n) & 0x3fffffffn),
    Number(next & 0xffffffffn),
  ).toString();
}

/** A UUIDv7 with this millisecond time and fresh random bits. */
export function uuidAt(millis: number): string {
  const random = (bits: number) => randomInt(0, 2 ** bits);
  return UUID.fromFieldsV7(millis, random(12), random(30), random(32)).toString();
}
