import { ExportResultCode } from '@opentelemetry/core';
import { describe, expect, onTestFinished, test } from 'vitest';
import { Episodes } from '../../../src/base/log.js';
import {
  Admission,
  type AdmissionOptions,
  type AdmissionParts,
  UnsealedBatchError,
} from '../../../src/pipeline/admission.js';
import { type BatchOwner, MemoryBudget } from '../../../src/pipeline/budget.js';
import { ColumnBatch } from '../../../src/pipeline/column-batch.js';
import type { OpenJournal } from '../../../src/pipeline/journal-port.js';
import { RecordBatch } from '../../../src/pipeline/open-batch.js';
import { Outcomes } from '../../../src/pipeline/outcomes.js';
import type { SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import { emptyStats } from '../../../src/pipeline/stats.js';
import type { ColumnBuilders, TransferableColumns } from '../../../src/signals/signal.js';
import { captureDiag } from '../../support/diag-capture.js';
import { attachedJournal, testJournal } from '../../support/spool-exporter.js';
import { tempDirs } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };

test('a batch sealed by an export whose append then throws still goes on to be stored', async () => {
  const budget = new MemoryBudget(1 << 20);
  const owner: BatchOwner = {
    outcomes: { appended() {}, sealed() {}, exportRejectedForRoom() {} } as unknown as Outcomes,
    pager: undefined,
  };
  let appends = 0;
  // A journal whose copy of the second export fails (it runs after the batch was sealed for it).
  const journal: OpenJournal = {
    bytes: 0,
    cost: () => 0,
    append: () => {
      if (++appends === 2) throw new Error('journal copy failed');
    },
    sealed: () => undefined,
    copyFailed() {},
    unsealed: () => false,
  };
  const open = new RecordBatch({ overhead: (n) => 2 + n, framing: null });
  const handedOn: SealedBatch[] = [];
  const admission = new Admission(
    { maxBatchBytes: 150, maxBatchAgeMillis: 60_000, times: false },
    { open, budget, owner, journal, onSealed: (b) => handedOn.push(b), appendFailed() {} },
  );
  onTestFinished(() => sealAndSettle(admission, budget, handedOn));
  const first = await admission.accept({ record: Buffer.alloc(100), points: 3, inputs });
  expect(first.code).toBe(ExportResultCode.SUCCESS);
  // 100 + 100 > 150: the first batch is sealed before the second record goes in.
  await admission.accept({ record: Buffer.alloc(100), points: 4, inputs }).catch(() => {});
  const [sealed] = budget.batchesOf(owner);
  expect(sealed?.points).toBe(3);
  // Handed on to be prepared, not left in the budget where nothing prepares it.
  expect(handedOn).toEqual([sealed]);
});

/** A test's last seal (final: it stops the age timer), then the batches handed on settled. */
async function sealAndSettle(
  admission: Pick<Admission<unknown>, 'sealNow'>,
  budget: MemoryBudget,
  handedOn: SealedBatch[],
) {
  await admission.sealNow(true).catch(() => {});
  for (const b of handedOn) budget.settle(b, 'uploaded');
}

/** An owner whose outcomes count nothing; seals that throw are pushed onto `sealFailures`. */
const quietOwner = (sealFailures: unknown[] = []): BatchOwner => ({
  outcomes: {
    appended() {},
    sealed() {},
    exportRejectedForRoom() {},
    sealDeferred: (error: unknown) => sealFailures.push(error),
  } as unknown as Outcomes,
  pager: undefined,
});

/** A journal whose every copy throws, and which records what it was told of the failures. */
function throwingJournal() {
  const failures: unknown[] = [];
  const journal: OpenJournal = {
    bytes: 0,
    cost: () => 0,
    append: () => {
      throw new Error('journal copy failed');
    },
    sealed: () => undefined,
    copyFailed: (error) => failures.push(error),
    unsealed: () => false,
  };
  return { journal, failures };
}

/** Column builders of rows only: an item is how many rows it adds, 10 bytes each. */
function rowBuilders(): ColumnBuilders<number> {
  let rows = 0;
  return {
    get rows() {
      return rows;
    },
    get bytes() {
      return rows * 10;
    },
    append(item, tally) {
      rows += item;
      tally.items += item;
    },
    mark: () => rows,
    rollback(mark) {
      rows = mark as number;
    },
    seal() {
      rows = 0;
      return {} as TransferableColumns;
    },
  };
}

describe('a journal copy that throws once the export is in the open batch', () => {
  test('records: answered SUCCESS, the failure handed to the journal, the batch aged', async () => {
    const budget = new MemoryBudget(1 << 20);
    const owner = quietOwner();
    const { journal, failures } = throwingJournal();
    const handedOn: SealedBatch[] = [];
    const admission = new Admission(
      { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 20, times: false },
      {
        open: new RecordBatch({ overhead: (n) => 2 + n, framing: null }),
        budget,
        owner,
        journal,
        onSealed: (b) => handedOn.push(b),
        appendFailed() {},
      },
    );
    onTestFinished(() => sealAndSettle(admission, budget, handedOn));
    const result = await admission
      .accept({ record: Buffer.alloc(100), points: 3, inputs })
      .catch((error: unknown) => ({ code: -1, error }));
    // The export is in the open batch and will be stored: FAILED would count it lost.
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    expect(failures).toHaveLength(1);
    // Its age timer started as for any first export: the batch is sealed by its age.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(handedOn.map((b) => b.points)).toEqual([3]);
  });

  test('columns: an encoding of the copy that throws leaves the export in the batch', async () => {
    const budget = new MemoryBudget(1 << 20);
    const owner = quietOwner();
    const { journal, failures } = throwingJournal();
    const handedOn: SealedBatch[] = [];
    const admission = new Admission<number>(
      { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 60_000, times: false },
      {
        open: new ColumnBatch(rowBuilders()),
        budget,
        owner,
        journal,
        journalEncode: () => {
          throw new Error('cannot encode the copy');
        },
        onSealed: (b) => handedOn.push(b),
        appendFailed() {},
      },
    );
    onTestFinished(() => sealAndSettle(admission, budget, handedOn));
    const result = await admission
      .accept({ item: 4, inputs, times: false })
      .catch((error: unknown) => ({ code: -1, error }));
    expect(result.code).toBe(ExportResultCode.SUCCESS);
    expect(failures).toHaveLength(1);
    await admission.sealNow();
    expect(handedOn.map((b) => b.points)).toEqual([4]);
  });
});

test('a seal by age that throws is reported, not left unhandled', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  onTestFinished(() => {
    process.off('unhandledRejection', onUnhandled);
  });
  const sealFailures: unknown[] = [];
  const { admission, seals, appendFailures } = sealFailingAdmission(
    1,
    { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 20 },
    { owner: quietOwner(sealFailures) },
  );
  const result = await admission.accept({ item: 4, inputs, times: false });
  expect(result.code).toBe(ExportResultCode.SUCCESS);
  await new Promise((resolve) => setTimeout(resolve, 100));
  // The first seal threw; the second, at the batch's next age, did not.
  expect(seals()).toBe(2);
  expect(unhandled).toEqual([]);
  expect(sealFailures.map((e) => (e as Error).message)).toEqual(['cannot seal the columns']);
  expect(appendFailures).toEqual([]);
});

test('a seal by age that throws leaves the items in the open batch, sealed at its next age', async () => {
  const AGE = 500;
  const sealFailures: unknown[] = [];
  const { admission, seals, appendFailures, handedOn } = sealFailingAdmission(
    1,
    { maxBatchBytes: 1 << 20, maxBatchAgeMillis: AGE },
    { owner: quietOwner(sealFailures) },
  );
  expect((await admission.accept({ item: 4, inputs, times: false })).code).toBe(
    ExportResultCode.SUCCESS,
  );
  await waitFor(() => seals() === 1, 5_000, 'the first seal by age');
  // A second export into the batch that is not empty starts no clock of its own. (The next
  // seal is an age away: AGE leaves a loaded machine the time to make this export first.)
  expect((await admission.accept({ item: 2, inputs, times: false })).code).toBe(
    ExportResultCode.SUCCESS,
  );
  expect(seals()).toBe(1);
  await waitFor(() => handedOn.length > 0, 5_000, 'the seal at the next age');
  // The first seal failed, reported; the second, at the batch's next age, holds both exports.
  expect(sealFailures).toHaveLength(1);
  expect(appendFailures).toEqual([]);
  expect(handedOn.map((b) => b.points)).toEqual([6]);
});

test('a seal that throws at shutdown (final) starts no age timer', async () => {
  const { admission, seals } = sealFailingAdmission(
    Number.POSITIVE_INFINITY,
    { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 20 },
    { owner: quietOwner() },
  );
  await admission.accept({ item: 4, inputs, times: false });
  await expect(admission.sealNow(true)).rejects.toThrow('cannot seal the columns');
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(seals()).toBe(1);
});

test('a seal that throws at shutdown (final) empties the batch and says what it held', async () => {
  const { admission, budget, owner, open } = sealFailingAdmission(
    Number.POSITIVE_INFINITY,
    { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 1_000 },
    { owner: quietOwner() },
  );
  budget.addOpen(open);
  await admission.accept({ item: 4, inputs, times: false });
  await admission.accept({ item: 3, inputs, times: false });
  // rowBuilders: one row per unit of an item, 10 bytes a row.
  expect(budget.heldBy(owner, open)).toBe(70);
  const error = await admission.sealNow(true).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UnsealedBatchError);
  expect(error).toMatchObject({
    message: 'cannot seal the columns',
    points: 7,
    rawBytes: 70,
    journaled: false,
  });
  expect(open.isEmpty).toBe(true);
  expect(budget.heldBy(owner, open)).toBe(0);
});

/**
 * An owner whose outcomes are real ones (stats().pointsDroppedByReason); sealFailingAdmission()
 * closes them when the test finishes.
 */
function countingOwner(): BatchOwner & { outcomes: Outcomes } {
  const outcomes = new Outcomes(emptyStats(), new Episodes(), {
    slowRetryMillis: 1_000,
    maxBufferedBytes: 1 << 20,
    requestTimeoutMillis: 1_000,
    flushTimeoutMillis: 1_000,
    endpoint: 'http://s3.test',
    signal: 'metrics',
  });
  return { outcomes, pager: undefined };
}

/**
 * An Admission of a ColumnBatch of rowBuilders() whose seal throws: its first `failing` times
 * (a number), or while `failing()` is true. The owner is a countingOwner() unless `parts` gives
 * one; every appendFailed is pushed onto `appendFailures` unless `parts` gives its own; what is
 * sealed is pushed onto `handedOn`. When the test finishes, passed or failed: a final seal (which
 * stops the age timer), the batches handed on settled, and the owner's Outcomes closed if real.
 */
function sealFailingAdmission<O extends BatchOwner = BatchOwner & { outcomes: Outcomes }>(
  failing: number | (() => boolean),
  config: Pick<AdmissionOptions, 'maxBatchBytes' | 'maxBatchAgeMillis'>,
  parts: Partial<
    Pick<AdmissionParts<number>, 'appendFailed' | 'itemsOf' | 'journal' | 'journalEncode'>
  > & { owner?: O } = {},
) {
  const budget = new MemoryBudget(1 << 20);
  const owner = parts.owner ?? (countingOwner() as BatchOwner as O);
  const builders = rowBuilders();
  let seals = 0;
  const seal = builders.seal.bind(builders);
  builders.seal = () => {
    seals++;
    if (typeof failing === 'number' ? seals <= failing : failing()) {
      throw new Error('cannot seal the columns');
    }
    return seal();
  };
  const open = new ColumnBatch(builders);
  const handedOn: SealedBatch[] = [];
  const appendFailures: unknown[] = [];
  const admission = new Admission<number>(
    { ...config, times: false },
    {
      appendFailed: (error) => appendFailures.push(error),
      ...parts,
      open,
      budget,
      owner,
      onSealed: (b) => handedOn.push(b),
    },
  );
  onTestFinished(async () => {
    await sealAndSettle(admission, budget, handedOn);
    if (owner.outcomes instanceof Outcomes) owner.outcomes.close();
  });
  return { admission, budget, owner, open, handedOn, appendFailures, seals: () => seals };
}

describe('a seal that throws while an export is admitted', () => {
  const messages = captureDiag();

  test('by size, after the append: answered SUCCESS, its items stay in the open batch', async () => {
    const { admission, owner, open, handedOn, appendFailures, seals } = sealFailingAdmission(1, {
      maxBatchBytes: 50,
      maxBatchAgeMillis: 60_000,
    });
    // 6 rows of 10 bytes: the batch is full after the append, whose seal throws.
    const result = await admission.accept({ item: 6, inputs, times: false });
    expect(seals()).toBe(1);
    expect(result).toEqual({ code: ExportResultCode.SUCCESS });
    expect(appendFailures).toEqual([]);
    expect(messages.map((m) => m.text).join('\n')).toContain(
      'could not seal the open batch (cannot seal the columns): its items stay in it',
    );
    expect(open.isEmpty).toBe(false);
    expect(owner.outcomes.stats.pointsDroppedByReason).toEqual({});
    // The next seal stores them.
    await admission.sealNow();
    expect(handedOn.map((b) => b.points)).toEqual([6]);
  });

  test('first, as the key changed: answered FAILED, its items counted as internal-error', async () => {
    const { admission, owner, handedOn } = sealFailingAdmission(
      1,
      { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 60_000 },
      { appendFailed() {}, itemsOf: (item) => item },
    );
    const first = await admission.accept({
      item: 4,
      inputs: { ...inputs, group: 'a' },
      times: false,
    });
    expect(first.code).toBe(ExportResultCode.SUCCESS);
    const second = await admission.accept({
      item: 3,
      inputs: { ...inputs, group: 'b' },
      times: false,
    });
    expect(second.code).toBe(ExportResultCode.FAILED);
    expect(second.error?.message).toBe(
      'otel-s3-exporter: could not seal the open batch before this export (cannot seal the columns): not taken',
    );
    expect(owner.outcomes.stats.pointsDroppedByReason).toEqual({ 'internal-error': 3 });
    expect(owner.outcomes.stats.pointsDropped).toBe(3);
    expect(messages.map((m) => m.text).join('\n')).toContain('dropping 3 data points');
    // The first export's items stay in the open batch: the next seal stores them.
    await admission.sealNow();
    expect(handedOn.map((b) => b.points)).toEqual([4]);
  });

  test('first, as the export overflows the batch: answered FAILED, its items counted', async () => {
    const { admission, owner, open, handedOn } = sealFailingAdmission(
      1,
      { maxBatchBytes: 50, maxBatchAgeMillis: 60_000 },
      { appendFailed() {} },
    );
    expect((await admission.accept({ item: 4, inputs, times: false })).code).toBe(
      ExportResultCode.SUCCESS,
    );
    // 4 + 3 rows: 70 bytes, past maxBatchBytes: the batch is sealed first, which throws.
    const second = await admission.accept({ item: 3, inputs, times: false });
    expect(second.code).toBe(ExportResultCode.FAILED);
    expect(owner.outcomes.stats.pointsDroppedByReason).toEqual({ 'internal-error': 3 });
    expect(open.isEmpty).toBe(false);
    await admission.sealNow();
    expect(handedOn.map((b) => b.points)).toEqual([4]);
  });
});

describe('a seal that throws at shutdown (final), with a journal', () => {
  captureDiag();
  const newDir = tempDirs();
  // rowBuilders' item n: n rows, journaled as a record of n bytes.
  const journalEncode = (item: number) => ({
    record: Buffer.alloc(item),
    points: item,
    dataTimeMillis: undefined,
  });
  const unsealable = (journal: OpenJournal) =>
    sealFailingAdmission(
      Number.POSITIVE_INFINITY,
      { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 60_000 },
      { owner: quietOwner(), appendFailed() {}, journal, journalEncode },
    ).admission;
  const rejection = (admission: Admission<number>) =>
    admission.sealNow(true).then(
      () => undefined,
      (e: unknown) => e,
    );

  test('a spool that is ours: the chain is kept, and holds no room for a seal', async () => {
    const dir = await newDir('otel-s3-admission-journal-');
    const journal = attachedJournal(dir, undefined, { syncMillis: 60_000 });
    const admission = unsealable(journal);
    try {
      await admission.accept({ item: 4, inputs, times: false });
      expect(journal.bytes).toBeGreaterThan(0);
      expect(await rejection(admission)).toMatchObject({ points: 4, journaled: true });
    } finally {
      await journal.close(5_000);
    }
    // The last commit wrote the entries; nothing is left in memory.
    expect(journal.bytes).toBe(0);
  });

  test('a spool never ours: the chain is given up, its items not said to be journaled', async () => {
    const dir = await newDir('otel-s3-admission-journal-');
    const journal = testJournal(dir);
    const admission = unsealable(journal);
    try {
      await admission.accept({ item: 4, inputs, times: false });
      // Entries wait in memory for the spool to be ours.
      expect(journal.bytes).toBeGreaterThan(0);
      expect(await rejection(admission)).toMatchObject({ points: 4, journaled: false });
      expect(journal.bytes).toBe(0);
    } finally {
      await journal.close(5_000);
    }
  });

  test('a chain given up (a failed copy): its items not said to be journaled', async () => {
    const dir = await newDir('otel-s3-admission-journal-');
    const journal = attachedJournal(dir, undefined, { syncMillis: 60_000 });
    const admission = unsealable(journal);
    try {
      await admission.accept({ item: 4, inputs, times: false });
      journal.copyFailed(new Error('journal copy failed'));
      expect(await rejection(admission)).toMatchObject({ points: 4, journaled: false });
    } finally {
      await journal.close(5_000);
    }
  });
});

describe('a seal that keeps throwing', () => {
  const messages = captureDiag();
  const errors = () => messages.filter((m) => m.level === 'error').map((m) => m.text);

  test('by size: logged once until a seal works, then again at the next failure', async () => {
    const owner = countingOwner();
    let failing = true;
    const { admission, handedOn } = sealFailingAdmission(
      () => failing,
      { maxBatchBytes: 50, maxBatchAgeMillis: 60_000 },
      // As the exporter wires it.
      { owner, appendFailed: (error) => owner.outcomes.encodeFailed(error) },
    );
    // The last seal, when the test finishes, stores what is left.
    onTestFinished(() => {
      failing = false;
    });
    // 5 rows of 10 bytes fill the batch to maxBatchBytes: each export after it (of no rows)
    // leaves it full, and its seal throws again. All are taken.
    for (const item of [5, 0, 0, 0, 0]) {
      const result = await admission.accept({ item, inputs, times: false });
      expect(result.code).toBe(ExportResultCode.SUCCESS);
    }
    expect(errors()).toEqual([
      'otel-s3-exporter: metrics exporter: could not seal the open batch (cannot seal the columns): its items stay in it, sealed again at its age (maxBatchAgeMillis) or the next flush; further failures are not logged until a seal works',
    ]);
    expect(owner.outcomes.stats.pointsDroppedByReason).toEqual({});
    failing = false;
    await admission.sealNow();
    expect(handedOn.map((b) => b.points)).toEqual([5]);
    expect(messages.at(-1)?.text).toBe(
      'otel-s3-exporter: metrics exporter: sealed the open batch again, after 5 failed seals',
    );
    // A new streak is logged again.
    failing = true;
    await admission.accept({ item: 5, inputs, times: false });
    await admission.accept({ item: 0, inputs, times: false });
    expect(errors()).toHaveLength(2);
  });

  test('the count of failed seals includes the seals before an export that threw', async () => {
    const owner = countingOwner();
    let failing = true;
    const { admission, seals } = sealFailingAdmission(
      () => failing,
      { maxBatchBytes: 50, maxBatchAgeMillis: 60_000 },
      { owner, appendFailed: (error) => owner.outcomes.encodeFailed(error) },
    );
    onTestFinished(() => {
      failing = false;
    });
    // 5 rows fill the batch; its seal by size throws. Each export of a row after it needs a
    // fresh batch: the seal before it throws too, and it is answered FAILED.
    await admission.accept({ item: 5, inputs, times: false });
    for (const item of [1, 1]) {
      const result = await admission.accept({ item, inputs, times: false });
      expect(result.code).toBe(ExportResultCode.FAILED);
    }
    const failed = seals();
    expect(failed).toBe(3);
    failing = false;
    await admission.sealNow();
    expect(messages.at(-1)?.text).toBe(
      `otel-s3-exporter: metrics exporter: sealed the open batch again, after ${failed} failed seals`,
    );
  });

  test('by age: logged once, however many ages pass', async () => {
    const owner = countingOwner();
    const { admission, open, seals } = sealFailingAdmission(
      Number.POSITIVE_INFINITY,
      { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 10 },
      { owner, appendFailed: (error) => owner.outcomes.encodeFailed(error) },
    );
    await admission.accept({ item: 4, inputs, times: false });
    await waitFor(() => seals() >= 4, 5_000, 'four seals by age');
    expect(errors()).toHaveLength(1);
    expect(open.isEmpty).toBe(false);
  });
});

describe('an export of no rows after a seal by size that threw', () => {
  // What the exports dropped log goes here, not to stderr as process warnings.
  captureDiag();
  // A batch of 5 rows (50 bytes) is at maxBatchBytes, one of 6 rows (60 bytes, its first
  // export) is over it; either is full, and its seal threw. An export of no rows needs no room:
  // it is answered SUCCESS, dropping nothing (docs/guarantees.md: a part with no items).
  test.each([
    ['at', 5],
    ['over', 6],
  ])('a batch %s maxBatchBytes takes it', async (_, rows) => {
    const { admission, owner, open, seals } = sealFailingAdmission(
      Number.POSITIVE_INFINITY,
      { maxBatchBytes: 50, maxBatchAgeMillis: 60_000 },
      { appendFailed() {} },
    );
    expect((await admission.accept({ item: rows, inputs, times: false })).code).toBe(
      ExportResultCode.SUCCESS,
    );
    expect(seals()).toBe(1);
    const result = await admission.accept({ item: 0, inputs, times: false });
    expect(result).toEqual({ code: ExportResultCode.SUCCESS });
    expect(owner.outcomes.stats.pointsDroppedByReason).toEqual({});
    expect(open.bytes).toBe(rows * 10);
    // An export of one row has no room in it: it must go to the next batch, not taken.
    const oneRow = await admission.accept({ item: 1, inputs, times: false });
    expect(oneRow.code).toBe(ExportResultCode.FAILED);
    expect(owner.outcomes.stats.pointsDroppedByReason).toEqual({ 'internal-error': 1 });
  });
});

describe('an export of no items after exports that could not be appended', () => {
  const messages = captureDiag();
  const appendedAgain = () =>
    messages.map((m) => m.text).filter((text) => text.includes('exports are appended again'));

  // Nothing of it is appended: the streak of failures goes on until an export with items is.
  test('of columns: it does not end the streak', async () => {
    const owner = countingOwner();
    const { admission } = sealFailingAdmission(
      0,
      { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 60_000 },
      { owner, appendFailed: (error) => owner.outcomes.encodeFailed(error) },
    );
    owner.outcomes.encodeFailed(new Error('cannot encode'));
    expect((await admission.accept({ item: 0, inputs, times: false })).code).toBe(
      ExportResultCode.SUCCESS,
    );
    expect(appendedAgain()).toEqual([]);
    await admission.accept({ item: 2, inputs, times: false });
    expect(appendedAgain()).toEqual([
      'otel-s3-exporter: metrics exporter: exports are appended again, after 1 failure to encode or append one (each answered FAILED, counted in stats().exportsRejected)',
    ]);
  });

  test('of a record: it does not end the streak', async () => {
    const owner = countingOwner();
    const budget = new MemoryBudget(1 << 20);
    const handedOn: SealedBatch[] = [];
    const admission = new Admission(
      { maxBatchBytes: 1 << 20, maxBatchAgeMillis: 60_000, times: false },
      {
        open: new RecordBatch({ overhead: (n) => 2 + n, framing: null }),
        budget,
        owner,
        onSealed: (b) => handedOn.push(b),
        appendFailed: (error) => owner.outcomes.encodeFailed(error),
      },
    );
    onTestFinished(async () => {
      await sealAndSettle(admission, budget, handedOn);
      owner.outcomes.close();
    });
    owner.outcomes.encodeFailed(new Error('cannot encode'));
    // A resource without items encodes to a record of none.
    expect((await admission.accept({ record: Buffer.alloc(8), points: 0, inputs })).code).toBe(
      ExportResultCode.SUCCESS,
    );
    expect(appendedAgain()).toEqual([]);
    await admission.accept({ record: Buffer.alloc(40), points: 3, inputs });
    expect(appendedAgain()).toEqual([
      'otel-s3-exporter: metrics exporter: exports are appended again, after 1 failure to encode or append one (each answered FAILED, counted in stats().exportsRejected)',
    ]);
  });
});
