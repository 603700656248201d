import { readdirSync, readFileSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { SealedBatch } from '../../../src/pipeline/sealed-batch.js';
import { emptySpoolStats } from '../../../src/pipeline/stats.js';
import { metricsExport } from '../../../src/signals/metrics/export.js';
import { nodeFileSystem, type SpoolFileSystem } from '../../../src/spool/file-system.js';
import type { OpenBatchJournal } from '../../../src/spool/journal.js';
import {
  ENTRY_HEADER_BYTES,
  encodeSegmentHeader,
  type JournalRecordFormat,
} from '../../../src/spool/journal-format.js';
import { captureDiag } from '../../support/diag-capture.js';
import { FaultyFileSystem } from '../../support/faulty-fs.js';
import { ScriptedS3 } from '../../support/scripted-s3.js';
import { attachedJournal, spoolExporter } from '../../support/spool-exporter.js';
import { tempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait.js';

const logged = captureDiag();

let dir: string;
const journals: OpenBatchJournal[] = [];
beforeEach(() => tempDir('otel-s3-journal-damage-', (path) => (dir = path)));
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close(100);
});

const RECORD_BYTES = 100;
const SEAL_ID = '01890a5d-ac96-774b-bcce-b302099a8057';

function journalOn(
  stats = emptySpoolStats(),
  fs: SpoolFileSystem = nodeFileSystem,
  run: {
    signal?: string;
    format?: JournalRecordFormat;
    lost?: (points: number, rawBytes: number) => void;
  } = {},
) {
  const journal = attachedJournal(dir, fs, { stats, ...run });
  journals.push(journal);
  return { journal, stats };
}

/** A batch sealed with SEAL_ID, never settled. */
const sealedBatch = () =>
  ({
    id: SEAL_ID,
    sealedAt: new Date(1_700_000_000_000),
    attributes: {},
    dataTimeMillis: undefined,
    settled: new Promise(() => {}),
  }) as unknown as SealedBatch;

/**
 * Five records (record i has 2^i points, so a replayed batch's points tell which it holds), one
 * group commit, optionally the seal in a second one; returns the part's path and where its entries
 * start.
 */
async function writtenChain(sealed: boolean): Promise<{ path: string; entries: number }> {
  const { journal, stats } = journalOn();
  const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };
  for (let i = 0; i < 5; i++) journal.append(Buffer.alloc(RECORD_BYTES, 0x30 + i), 1 << i, inputs);
  await waitFor(() => stats.journalSyncs > 0, 2_000, 'a group commit');
  if (sealed) {
    journal.sealed(sealedBatch());
    await waitFor(() => stats.journalSyncs > 1, 2_000, 'the seal committed');
  }
  // What a kill -9 now leaves: the journal is simply no longer used.
  journals.splice(journals.indexOf(journal), 1);
  const [file] = readdirSync(join(dir, 'journal'));
  const path = join(dir, 'journal', file as string);
  const bytes = readFileSync(path);
  return { path, entries: 16 + bytes.readUInt32LE(8) };
}

const entryAt = (entries: number, i: number) => entries + i * (ENTRY_HEADER_BYTES + RECORD_BYTES);

function flip(path: string, at: number): void {
  const bytes = readFileSync(path);
  bytes[at] = (bytes[at] as number) ^ 0x40;
  writeFileSync(path, bytes);
}

async function restart(run: { signal?: string; format?: JournalRecordFormat } = {}) {
  logged.length = 0; // what the first run said
  const lost: [number, number][] = [];
  const { journal, stats } = journalOn(emptySpoolStats(), nodeFileSystem, {
    ...run,
    lost: (points, rawBytes) => lost.push([points, rawBytes]),
  });
  const batches: SealedBatch[] = [];
  await journal.replay(new Set(), (b) => batches.push(b));
  const dropped = logged.filter((l) => l.level !== 'info');
  return { batches, stats, dropped, lost };
}

/**
 * An unsealed otlp-json chain of five records (writtenChain) with a second part that says it
 * holds otlp-proto records, with no entry: no batch. Returns the chain's name.
 */
async function mixedFormatChain(): Promise<string> {
  await writtenChain(false);
  const [file] = readdirSync(join(dir, 'journal'));
  const chain = (file as string).split('.')[0] as string;
  writeFileSync(
    join(dir, 'journal', `${chain}.1.journal`),
    encodeSegmentHeader({
      signal: 'metrics',
      format: 'otlp-proto',
      chain,
      part: 1,
      attributes: {},
    }),
  );
  return chain;
}

describe('damage inside a journal part', () => {
  test('a torn tail (the last entry cut short) is the last interval: replayed up to it, quietly', async () => {
    const { path, entries } = await writtenChain(false);
    truncateSync(path, entryAt(entries, 4) + 40);
    const { batches, stats, dropped } = await restart();
    expect(batches.map((b) => b.points)).toEqual([0b01111]);
    expect(stats.quarantined).toBe(0);
    expect(stats.journalDamaged).toBe(0);
    expect(dropped).toEqual([]);
  });

  test('a flipped byte in a middle record: that record is lost, counted and reported; the rest and the seal are replayed', async () => {
    const { path, entries } = await writtenChain(true);
    flip(path, entryAt(entries, 2) + ENTRY_HEADER_BYTES + 10);
    const { batches, stats, dropped } = await restart();
    // Before: only records 0 and 1 replayed (points 0b00011), under a new key, nothing counted.
    expect(batches.map((b) => b.points)).toEqual([0b11011]);
    expect(batches[0]?.id).toBe(SEAL_ID);
    expect(stats.journalDamaged).toBe(1);
    expect(dropped).toEqual([
      { level: 'error', text: expect.stringMatching(/damaged.*1 record of 5 missing.*lost/) },
    ]);
  });

  test('a flipped byte in a middle entry length: what follows is lost, counted and reported', async () => {
    const { path, entries } = await writtenChain(true);
    flip(path, entryAt(entries, 2) + 1);
    const { batches, stats, dropped } = await restart();
    // The framing after the damage cannot be trusted: records 0 and 1 only.
    expect(batches.map((b) => b.points)).toEqual([0b00011]);
    expect(stats.journalDamaged).toBe(1);
    expect(dropped).toEqual([{ level: 'error', text: expect.stringMatching(/damaged.*lost/) }]);
  });

  test('a flipped byte in the header length: the part is not taken for a torn header', async () => {
    const { path } = await writtenChain(true);
    flip(path, 10);
    const { batches, stats, dropped } = await restart();
    // Before: skipped as a torn header, the chain deleted as empty, nothing counted.
    expect(batches.map((b) => b.points)).toEqual([0b11111]);
    expect(batches[0]?.id).toBe(SEAL_ID);
    expect(stats.journalDamaged).toBe(1);
    // Nothing of it lost: a warning, not a drop.
    expect(dropped).toEqual([
      { level: 'warn', text: expect.stringMatching(/damaged.*no record of it is missing/) },
    ]);
  });

  /**
   * Records 0-2 in part 0 (fsynced), 3 to `records - 1` in a second commit whose `failing` step
   * fails: they go to part 1, and part 0 holds them too after a failed fsync (the write reached
   * the disk), half of the first after a failed write. `sealed`: the seal follows, in part 1.
   */
  async function twoParts(
    failing: 'fsync' | 'write' = 'fsync',
    records = 5,
    sealed = false,
  ): Promise<{ first: string; entries: number }> {
    const fs = new FaultyFileSystem().failNext(failing, 'EIO', 1, 1);
    const { journal, stats } = journalOn(emptySpoolStats(), fs);
    const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };
    for (let i = 0; i < 3; i++)
      journal.append(Buffer.alloc(RECORD_BYTES, 0x30 + i), 1 << i, inputs);
    await waitFor(() => stats.journalSyncs > 0, 2_000, 'a group commit');
    for (let i = 3; i < records; i++)
      journal.append(Buffer.alloc(RECORD_BYTES, 0x30 + i), 1 << i, inputs);
    await waitFor(() => stats.journalSyncs > 1, 2_000, 'the rewrite in part 1');
    if (sealed) {
      journal.sealed(sealedBatch());
      await waitFor(() => stats.journalSyncs > 2, 2_000, 'the seal committed');
    }
    journals.splice(journals.indexOf(journal), 1);
    const files = readdirSync(join(dir, 'journal')).sort();
    expect(files).toHaveLength(2);
    const first = join(dir, 'journal', files[0] as string);
    return { first, entries: 16 + readFileSync(first).readUInt32LE(8) };
  }

  test('damage in an earlier part whose records a later part holds loses nothing: counted, a warning', async () => {
    const { first, entries } = await twoParts();
    flip(first, entryAt(entries, 3) + 1);
    const { batches, stats, dropped } = await restart();
    expect(batches.map((b) => b.points)).toEqual([0b11111]);
    expect(stats.journalDamaged).toBe(1);
    expect(dropped).toEqual([{ level: 'warn', text: expect.stringMatching(/damaged/) }]);
  });

  test('damage in an earlier part that lost records: the gap is counted and reported', async () => {
    const { first, entries } = await twoParts();
    flip(first, entryAt(entries, 1) + 1);
    const { batches, stats, dropped } = await restart();
    expect(batches.map((b) => b.points)).toEqual([0b11001]);
    expect(stats.journalDamaged).toBe(1);
    expect(dropped).toEqual([
      { level: 'error', text: expect.stringMatching(/2 records of 5 missing.*lost/) },
    ]);
  });

  test('damage to the last entry of an earlier part whose later part holds the records after it: counted and reported', async () => {
    // Part 0: records 0-2 (fsynced), then half of record 3 (the write that failed); part 1: 3, 4.
    const { first, entries } = await twoParts('write');
    flip(first, entryAt(entries, 2) + ENTRY_HEADER_BYTES + 10);
    const { batches, stats: after, dropped } = await restart();
    expect(batches.map((b) => b.points)).toEqual([0b11011]);
    expect(after.journalDamaged).toBe(1);
    expect(dropped).toEqual([
      { level: 'error', text: expect.stringMatching(/1 record of 5 missing.*lost/) },
    ]);
  });

  /** Part 0: records 0-4 (fsynced), then half of the seal (the write that failed); part 1: the seal. */
  async function sealInPart1(): Promise<{ files: string[]; path: string }> {
    const fs = new FaultyFileSystem().failNext('write', 'EIO', 1, 1);
    const { journal, stats } = journalOn(emptySpoolStats(), fs);
    const inputs = { attributes: {}, group: '', dataTimeMillis: undefined };
    for (let i = 0; i < 5; i++)
      journal.append(Buffer.alloc(RECORD_BYTES, 0x30 + i), 1 << i, inputs);
    await waitFor(() => stats.journalSyncs > 0, 2_000, 'a group commit');
    journal.sealed(sealedBatch());
    await waitFor(() => stats.journalSyncs > 1, 2_000, 'the seal rewritten in part 1');
    journals.splice(journals.indexOf(journal), 1);
    const files = readdirSync(join(dir, 'journal')).sort();
    expect(files).toHaveLength(2);
    const path = join(dir, 'journal', files[0] as string);
    return { files, path };
  }

  test('damage to the last record of an earlier part whose later part holds only the seal: counted and reported', async () => {
    const { files, path } = await sealInPart1();
    flip(path, entryAt(16 + readFileSync(path).readUInt32LE(8), 4) + ENTRY_HEADER_BYTES + 10);
    const { batches, stats: after, dropped } = await restart();
    // Before: replayed without record 4, and nothing counted or said (taken for a torn tail).
    expect(batches.map((b) => b.points)).toEqual([0b01111]);
    expect(batches[0]?.id).toBe(SEAL_ID);
    expect(after.journalDamaged).toBe(1);
    expect(dropped).toEqual([
      {
        level: 'error',
        text: expect.stringMatching(
          new RegExp(`1 record of 5 missing \\(${files[0]}: not whole at the end\\).*lost`),
        ),
      },
    ]);
  });

  test('a sealed chain whose record parts a crash left deleted (the seal goes last) is no damage', async () => {
    const { path } = await sealInPart1();
    unlinkSync(path);
    const { batches, stats, dropped } = await restart();
    expect(batches).toEqual([]);
    expect(stats.journalDamaged).toBe(0);
    expect(dropped).toEqual([]);
  });

  test('an earlier part torn by a write that failed (the next part holds its entries) is no damage to a sealed chain', async () => {
    // Part 0: records 0-3, then half of record 4; part 1: records 3-5, then the seal.
    const { first, entries } = await twoParts('write', 6, true);
    const part0 = readFileSync(first);
    expect(part0.length).toBeGreaterThan(entryAt(entries, 4));
    expect(part0.length).toBeLessThan(entryAt(entries, 5));
    const { batches, stats: after, dropped } = await restart();
    expect(batches.map((b) => [b.points, b.id])).toEqual([[0b111111, SEAL_ID]]);
    expect(after.journalDamaged).toBe(0);
    expect(dropped).toEqual([]);
  });

  test('a torn tail, then a replay that died after writing the seal: the next replay is quiet too', async () => {
    const { path, entries } = await writtenChain(false);
    truncateSync(path, entryAt(entries, 4) + 40);
    const once = await restart();
    expect(readdirSync(join(dir, 'journal'))).toHaveLength(2);
    // That replay dies before its batch is safe: the next start reads the torn part and the seal.
    journals.splice(0);
    const { batches, stats, dropped } = await restart();
    expect(batches.map((b) => [b.points, b.id])).toEqual([[0b01111, once.batches[0]?.id]]);
    expect(stats.journalDamaged).toBe(0);
    expect(dropped).toEqual([]);
  });

  test('the first part gone (a deletion a crash interrupted once the batch was safe) is no damage', async () => {
    const { first } = await twoParts();
    unlinkSync(first);
    const { batches, stats, dropped } = await restart();
    expect(batches.map((b) => b.points)).toEqual([0b11000]);
    expect(stats.journalDamaged).toBe(0);
    expect(dropped).toEqual([]);
  });
});

describe('a chain written in another record format than the run that replays it', () => {
  test('a sealed otlp-json chain, replayed by an otlp-proto run: its records, as otlp-json, under its seal', async () => {
    await writtenChain(true);
    const { batches, stats, dropped } = await restart({ format: 'otlp-proto' });
    // Before: no batch; the chain moved to quarantine ("holds otlp-json records, not otlp-proto").
    expect(batches.map((b) => [b.points, b.recordFormat, b.id])).toEqual([
      [0b11111, 'otlp-json', SEAL_ID],
    ]);
    expect(stats.journalReplayed).toBe(1);
    expect(stats.quarantined).toBe(0);
    expect(dropped).toEqual([]);
    expect(readdirSync(join(dir, 'quarantine'))).toEqual([]);
  });

  test('an open otlp-json chain: the seal the replay writes keeps its format, so a replay that died is replayed again the same', async () => {
    await writtenChain(false);
    const first = await restart({ format: 'otlp-proto' });
    expect(first.batches.map((b) => [b.points, b.recordFormat])).toEqual([[0b11111, 'otlp-json']]);
    // The replay died before its batch was safe: the chain, with the seal it wrote, is replayed again.
    const again = await restart({ format: 'otlp-proto' });
    expect(again.batches.map((b) => [b.points, b.recordFormat, b.id])).toEqual([
      [0b11111, 'otlp-json', first.batches[0]?.id],
    ]);
    expect(again.stats.quarantined).toBe(0);
    expect(again.dropped).toEqual([]);
  });

  test('a chain whose parts hold different record formats is no batch: quarantined, reported as a journal chain', async () => {
    const chain = await mixedFormatChain();
    const { batches, stats, dropped } = await restart({ format: 'otlp-json' });
    expect(batches).toEqual([]);
    expect(stats.quarantined).toBe(1);
    expect(readdirSync(join(dir, 'quarantine')).sort()).toEqual([
      `${chain}.0.journal`,
      `${chain}.1.journal`,
    ]);
    // Before: "spool file <chain> is an unusable journal (...)".
    expect(dropped).toEqual([
      {
        level: 'error',
        text: expect.stringMatching(
          new RegExp(
            `journal chain ${chain} is unusable \\(${chain}\\.1\\.journal holds otlp-proto records`,
          ),
        ),
      },
    ]);
  });

  test("a quarantined chain's readable records are counted dropped in the exporter's stats()", async () => {
    const chain = await mixedFormatChain();
    logged.length = 0;
    const exporter = spoolExporter(new ScriptedS3(), dir, { format: 'otlp-json' });
    try {
      await waitFor(
        () => exporter.stats().spool?.quarantined === 1,
        5_000,
        'the chain quarantined',
      );
      // Records 0 to 4 of part 0 hold 2^0 + ... + 2^4 points; the chain was one batch.
      expect(exporter.stats()).toMatchObject({
        batchesDropped: 1,
        pointsDropped: 0b11111,
        pointsDroppedByReason: { 'spool-corrupt': 0b11111 },
        // The measure of a replayed batch: its records, and what an object of them adds.
        rawBytesDropped: 5 * RECORD_BYTES + metricsExport.records['otlp-json'].overhead(5),
      });
      expect(logged).toContainEqual({
        level: 'error',
        text: expect.stringMatching(
          new RegExp(
            `journal chain ${chain} is unusable .*; its batch is lost, with 5 readable records \\(31 items, counted in`,
          ),
        ),
      });
    } finally {
      await exporter.shutdown();
    }
  });

  test("another signal's chain is left in the journal: not replayed, quarantined or counted lost, reported once as foreign", async () => {
    await writtenChain(true);
    const before = readdirSync(join(dir, 'journal')).sort();
    const { batches, stats, dropped, lost } = await restart({ signal: 'traces' });
    expect(batches).toEqual([]);
    expect(stats.quarantined).toBe(0);
    expect(stats.foreign).toBe(1);
    expect(lost).toEqual([]);
    expect(readdirSync(join(dir, 'journal')).sort()).toEqual(before);
    expect(readdirSync(join(dir, 'quarantine'))).toEqual([]);
    expect(dropped).toEqual([
      {
        level: 'warn',
        text: expect.stringMatching(
          /journal chain \S+ in \S+journal holds metrics, not traces; left where it is, neither replayed nor deleted/,
        ),
      },
    ]);
  });

  test("another signal's chain left alone is still replayed by its own signal's exporter", async () => {
    await writtenChain(true);
    await restart({ signal: 'traces' });
    const { batches, stats } = await restart({ signal: 'metrics' });
    expect(batches.map((b) => b.points)).toEqual([0b11111]);
    expect(batches[0]?.id).toBe(SEAL_ID);
    expect(stats.quarantined).toBe(0);
    expect(stats.foreign).toBe(0);
  });
});

describe('a quarantine the disk does not do', () => {
  /**
   * An unsealed chain of two parts (part 1 only a header), and a start that tries to quarantine
   * it, its first `renames` renames failing (EIO), then closes. `lost` holds what that start
   * counted lost; a later start given the same callback adds to it.
   */
  async function quarantineFailing(renames: number) {
    const chain = await mixedFormatChain();
    const lost: [number, number][] = [];
    const fs = new FaultyFileSystem().failNext('rename', 'EIO', renames);
    const first = journalOn(emptySpoolStats(), fs, {
      lost: (points, rawBytes) => lost.push([points, rawBytes]),
    });
    await first.journal.replay(new Set(), () => {});
    await first.journal.close(100);
    journals.splice(journals.indexOf(first.journal), 1);
    return { chain, lost, fs, stats: first.stats };
  }

  // The chain cannot be moved now (EIO on every rename): it stays in the journal, and the next
  // start quarantines it. Its batch is lost once, so it is counted once, when it is moved.
  test('leaves the chain in the journal, its batch counted dropped by the start that moves it', async () => {
    const { chain, lost, fs, stats } = await quarantineFailing(2);
    expect(fs.failures.map((f) => f.op)).toEqual(['rename', 'rename']);
    expect(readdirSync(join(dir, 'journal')).sort()).toEqual([
      `${chain}.0.journal`,
      `${chain}.1.journal`,
    ]);
    const second = journalOn(emptySpoolStats(), nodeFileSystem, {
      lost: (points, rawBytes) => lost.push([points, rawBytes]),
    });
    await second.journal.replay(new Set(), () => {});
    expect(readdirSync(join(dir, 'quarantine')).sort()).toEqual([
      `${chain}.0.journal`,
      `${chain}.1.journal`,
    ]);
    // Records 0 to 4 of part 0: 2^0 + ... + 2^4 items, 5 records of 100 bytes (overhead 0).
    expect(lost).toEqual([[0b11111, 5 * RECORD_BYTES]]);
    expect(stats.quarantined + second.stats.quarantined).toBe(1);
  });

  // The part with the records stays (EIO), the other moves: what is left is the batch's records,
  // which the next start replays; nothing of it was lost by this start.
  test('a part with the records left behind is not counted dropped: the next start replays it', async () => {
    const { chain, lost, fs } = await quarantineFailing(1);
    expect(fs.failures.map((f) => f.path.endsWith(`${chain}.0.journal`))).toEqual([true]);
    expect(readdirSync(join(dir, 'quarantine'))).toEqual([`${chain}.1.journal`]);
    const { batches } = await restart({ format: 'otlp-json' });
    expect(batches.map((b) => b.points)).toEqual([0b11111]);
    expect(lost).toEqual([]);
  });
});
