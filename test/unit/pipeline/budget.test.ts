import { describe, expect, test } from 'vitest';
import { Episodes } from '../../../src/base/log.js';
import type { SignalName } from '../../../src/layout/formats.js';
import { type BatchOwner, MemoryBudget, type Pager } from '../../../src/pipeline/budget.js';
import { Outcomes } from '../../../src/pipeline/outcomes.js';
import { type BatchOutcome, SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import { emptyStats } from '../../../src/pipeline/stats.js';
import type { SpoolEntry } from '../../../src/spool/spool.js';
import { captureDiag } from '../../support/diag-capture.js';

const messages = captureDiag();

/** The outcomes of one exporter of `signal` under a budget of `limit` bytes. */
function outcomesOf(limit: number, signal: SignalName = 'metrics'): Outcomes {
  return new Outcomes(emptyStats(), new Episodes(), {
    slowRetryMillis: 1_000,
    maxBufferedBytes: limit,
    requestTimeoutMillis: 1_000,
    flushTimeoutMillis: 1_000,
    endpoint: 'http://s3.test',
    signal,
  });
}

/** A sealed batch of a second exporter: `points` points of `rawBytes`. */
function otherBatch(rawBytes: number, points: number): SealedBatch {
  return SealedBatch.seal({
    contents: { records: [Buffer.alloc(1)] },
    rawBytes,
    points,
    attributes: {},
    dataTimeMillis: undefined,
  });
}

function setup(limit = 100, openBytes = 0) {
  const open = { bytes: openBytes };
  const outcomes = outcomesOf(limit);
  const budget = new MemoryBudget(limit);
  budget.addOpen(open);
  const owner: BatchOwner = { outcomes, pager: undefined };
  owners.set(budget, owner);
  return { open, outcomes, budget, owner };
}

/** The owner each test's budget counts its batches to. */
const owners = new WeakMap<MemoryBudget, BatchOwner>();

/** A sealed batch of `points` points, admitted holding `bytes`, in the state asked for. */
function admitted(
  budget: MemoryBudget,
  bytes: number,
  state: 'unprepared' | 'queued' | 'uploading' = 'unprepared',
  points = 1,
) {
  const batch = SealedBatch.seal({
    contents: { records: [Buffer.alloc(1)] },
    rawBytes: bytes,
    points,
    attributes: {},
    dataTimeMillis: undefined,
  });
  budget.admit(batch, bytes, owners.get(budget) as BatchOwner);
  if (state !== 'unprepared') {
    batch.startPreparing();
    batch.bodyMade({
      key: `k${batch.seq}`,
      contentType: 'x',
      body: Buffer.alloc(bytes),
      sha256: undefined,
      crc32: undefined,
    });
    batch.queue();
    if (state === 'uploading') batch.startUpload(new AbortController());
  }
  return batch;
}

const entry = (name: string): SpoolEntry => ({
  name,
  fileBytes: 1,
  meta: { key: name, contentType: 'x', points: 1, rawBytes: 1, sealedAt: 0 },
});

describe('MemoryBudget', () => {
  test('counts the open batch and every pending batch, and what each holds now', () => {
    const { open, budget } = setup(100, 10);
    const a = admitted(budget, 30);
    expect(budget.bytes).toBe(40);
    budget.resize(a, 5); // compressed
    expect(budget.bytes).toBe(15);
    open.bytes = 20;
    expect(budget.bytes).toBe(25);
    expect(budget.fits(75)).toBe(true);
    expect(budget.fits(76)).toBe(false);
  });

  test('makes room by dropping the oldest idle batches, counted, once per episode in the log', async () => {
    const { budget, outcomes } = setup(100);
    const busy = admitted(budget, 40, 'uploading');
    const old = admitted(budget, 30, 'queued', 3);
    const young = admitted(budget, 30, 'unprepared', 4);
    expect(budget.makeRoom(30)).toBe(true); // 100 held: the oldest idle one goes
    expect(busy.isSettled).toBe(false);
    expect(await old.settled).toBe('dropped');
    expect(young.isSettled).toBe(false);
    expect(outcomes.stats.pointsDroppedByReason).toEqual({ 'buffer-full': 3 });
    expect(budget.makeRoom(60)).toBe(true);
    expect(young.isSettled).toBe(true);
    expect(budget.makeRoom(61)).toBe(false); // only the busy one is left
    expect(busy.isSettled).toBe(false);
    expect(messages.filter((m) => /maxBufferedBytes \(100\) reached/.test(m.text))).toHaveLength(1);
  });

  test('a batch whose records are still being compressed is not dropped for room: that frees nothing', async () => {
    const { budget, outcomes, owner } = setup(100);
    let end: (body: Uint8Array) => void = () => {};
    const frame = new Promise<Uint8Array>((resolve) => {
      end = resolve;
    });
    // Its records wait in the compressor's stream (shared with the batches after it): dropping
    // the batch would release its bytes from the count, not from memory.
    const compressing = SealedBatch.seal({
      contents: { frame },
      rawBytes: 60,
      points: 2,
      attributes: {},
      dataTimeMillis: undefined,
    });
    budget.admit(compressing, 60, owner);
    expect(compressing.isIdle).toBe(false);
    expect(budget.makeRoom(50)).toBe(false);
    expect(compressing.isSettled).toBe(false);
    expect(outcomes.stats.pointsDropped).toBe(0);
    expect(budget.bytes).toBe(60);
    end(new Uint8Array(10)); // compressed: now dropping it frees its bytes
    await frame;
    await new Promise((resolve) => setImmediate(resolve));
    expect(compressing.isIdle).toBe(true);
    expect(budget.makeRoom(50)).toBe(true);
    expect(await compressing.settled).toBe('dropped');
    expect(outcomes.stats.pointsDroppedByReason).toEqual({ 'buffer-full': 2 });
  });

  test('with a pager, batches on disk leave memory first, and nothing is dropped for them', () => {
    const { budget, outcomes, owner } = setup(100);
    const pagedOut: SealedBatch[] = [];
    const pager: Pager = { pagedOut: (b) => pagedOut.push(b), settled: () => {} };
    owner.pager = pager;
    const inMemoryOnly = admitted(budget, 50, 'queued');
    const onDisk = admitted(budget, 50, 'queued');
    onDisk.spooled(entry('a'));
    expect(budget.makeRoom(50)).toBe(true);
    expect(pagedOut).toEqual([onDisk]);
    expect(onDisk.state).toBe('paged-out');
    expect(inMemoryOnly.isSettled).toBe(false);
    expect(outcomes.stats.pointsDropped).toBe(0);
    expect(budget.bytes).toBe(50);
  });

  test('a restored batch without room is held at 0 bytes, paged out once on disk, never dropped for room', async () => {
    const { budget, outcomes, owner } = setup(100);
    const pagedOut: SealedBatch[] = [];
    owner.pager = { pagedOut: (b) => pagedOut.push(b), settled: () => {} };
    admitted(budget, 80, 'uploading'); // busy: no room can be made
    /** A replayed batch of 50 bytes admitted, its body made, written (or not), queued. */
    const restored = (written: boolean) => {
      const batch = otherBatch(50, 5);
      expect(budget.admitRestored(batch, 50, owner)).toBe(false);
      expect(budget.bytes).toBe(80);
      batch.startPreparing();
      batch.bodyMade({
        key: 'k',
        contentType: 'x',
        body: Buffer.alloc(50),
        sha256: undefined,
        crc32: undefined,
      });
      budget.resize(batch, 50); // as Preparation does: still 0 until placed
      if (written) batch.spooled(entry(`f${batch.seq}`));
      batch.queue();
      return batch;
    };
    const onDisk = restored(true);
    expect(budget.place(onDisk)).toBe(false);
    expect(onDisk.state).toBe('paged-out');
    expect(pagedOut).toEqual([onDisk]);
    expect(budget.bytes).toBe(80);
    expect(outcomes.stats.pointsDropped).toBe(0);
    // Its file could not be written: room is asked for again, and without it, it is dropped.
    const notWritten = restored(false);
    expect(budget.place(notWritten)).toBe(false);
    expect(await notWritten.settled).toBe('dropped');
    expect(outcomes.stats.pointsDroppedByReason).toEqual({ 'buffer-full': 5 });
    expect(budget.bytes).toBe(80);
    // With room, a restored batch is held like any other.
    const held = otherBatch(10, 1);
    expect(budget.admitRestored(held, 10, owner)).toBe(true);
    expect(budget.place(held)).toBe(true);
    expect(budget.bytes).toBe(90);
  });

  test('a restored batch held at 0 bytes is no victim: dropping it would make no room', () => {
    const { budget, owner } = setup(100);
    admitted(budget, 80, 'uploading');
    const restored = otherBatch(50, 5);
    expect(budget.admitRestored(restored, 50, owner)).toBe(false);
    const idle = admitted(budget, 10, 'queued');
    expect(budget.makeRoom(15)).toBe(true);
    expect(idle.isSettled).toBe(true);
    expect(restored.isSettled).toBe(false);
  });

  test('settling releases the bytes and tells the pager how the batch ended', () => {
    const { budget, owner } = setup(100);
    const seen: [SealedBatch, BatchOutcome][] = [];
    owner.pager = { pagedOut: () => {}, settled: (b, o) => seen.push([b, o]) };
    const a = admitted(budget, 60, 'uploading');
    budget.settle(a, 'uploaded');
    budget.settle(a, 'dropped'); // a second ending is ignored
    expect(budget.bytes).toBe(0);
    expect(budget.size).toBe(0);
    expect(seen).toEqual([[a, 'uploaded']]);
  });

  test('waits until every batch is settled or blocked on a fault waiting cannot fix', async () => {
    const { budget } = setup(100);
    const a = admitted(budget, 10, 'uploading');
    const b = admitted(budget, 10, 'uploading');
    let done = false;
    const waiting = budget.whenSettledOrBlocked([a, b]).then(() => (done = true));
    budget.settle(a, 'uploaded');
    await Promise.resolve();
    expect(done).toBe(false);
    budget.markBlocked(b); // still uploading: not blocked yet
    await Promise.resolve();
    expect(done).toBe(false);
    b.backOff(60_000, () => {});
    budget.markBlocked(b);
    await waiting;
    expect(done).toBe(true);
  });

  test('a waiter that gives up is no longer checked: timed-out flushes leave nothing behind', async () => {
    const { budget } = setup(100);
    const a = admitted(budget, 10, 'uploading');
    let checks = 0;
    const futile = () => {
      checks++;
      return false;
    };
    const giveUps = Array.from({ length: 3 }, () => new AbortController());
    let ended = 0;
    for (const g of giveUps) {
      void budget.whenSettledOrBlocked([a], futile, g.signal).then(() => ended++);
    }
    budget.changed();
    expect(checks).toBe(6); // each waiter checked at its start and at the change
    for (const g of giveUps) g.abort();
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBe(3); // given up: they end, though the batch is still uploading
    checks = 0;
    budget.changed();
    budget.settle(a, 'uploaded');
    expect(checks).toBe(0);
  });

  test('at a shutdown deadline, batches on disk stay for the next run and the rest are dropped', () => {
    const { budget, outcomes, owner } = setup(100);
    const kept = admitted(budget, 10, 'queued');
    kept.spooled(entry('k'));
    const lost = admitted(budget, 10, 'queued', 5);
    expect(budget.abandonAll(owner)).toEqual({
      left: 1,
      dropped: { batches: 1, rawBytes: 10 },
      maybeStored: 0,
    });
    expect(outcomes.stats.pointsDroppedByReason).toEqual({ shutdown: 5 });
    expect([kept.state, lost.state]).toEqual(['settled', 'settled']);
  });
});

describe('one budget, several exporters', () => {
  test('the oldest idle batch goes whoever owns it, and each drop is counted to its owner', () => {
    const { budget, outcomes: metrics, owner: metricsOwner } = setup(100);
    const spans = outcomesOf(100, 'traces');
    const spanOwner: BatchOwner = { outcomes: spans, pager: undefined };
    const spanOpen = { bytes: 10 };
    budget.addOpen(spanOpen);
    const oldMetrics = admitted(budget, 40, 'queued', 4);
    const span = otherBatch(30, 3);
    budget.admit(span, 30, spanOwner);
    expect(budget.bytes).toBe(80); // both open batches and both pending ones
    expect([budget.bytesOf(metricsOwner), budget.bytesOf(spanOwner)]).toEqual([40, 30]);
    expect(budget.makeRoom(40)).toBe(true); // the oldest idle batch is the metrics one
    expect(oldMetrics.isSettled).toBe(true);
    expect(span.isSettled).toBe(false);
    expect(metrics.stats.pointsDroppedByReason).toEqual({ 'buffer-full': 4 });
    expect(spans.stats.pointsDropped).toBe(0);
    expect(budget.makeRoom(70)).toBe(true); // now the span batch
    expect(spans.stats.pointsDroppedByReason).toEqual({ 'buffer-full': 3 });
    expect(metrics.stats.pointsDropped).toBe(4);
  });

  test("one exporter's shutdown gives up only its own batches", () => {
    const { budget, owner } = setup(100);
    const other: BatchOwner = { outcomes: outcomesOf(100, 'logs'), pager: undefined };
    const mine = admitted(budget, 10, 'queued');
    const theirs = otherBatch(10, 1);
    budget.admit(theirs, 10, other);
    expect(budget.abandonAll(owner).dropped.batches).toBe(1);
    expect([mine.isSettled, theirs.isSettled]).toEqual([true, false]);
    expect(budget.pending(other)).toEqual({ batches: 1, rawBytes: 10 });
  });
});
