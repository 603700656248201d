import { cp, readFile, stat, writeFile } from 'node:fs/promises';

import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { beforeEach, describe, expect, test } from 'vitest';
import { type CompactMetricsOptions, compactMetrics } from '../../../src/compact/index.js';
import type { FinishedFile } from '../../../src/compact/merge.js';
import { METRICS_ROWS } from '../../../src/compact/metrics-rows.js';
import { decodeReplaces, REPLACES_KEY } from '../../../src/reader/compacted.js';
import { resolveKeyLayout } from '../../../src/reader/key-layout.js';
import {
  dataPointRows,
  InvalidOptionError,
  listMetricObjects,
  readMetrics,
} from '../../../src/reader.js';
import { runCliInProcess } from '../../support/cli-child.js';
import { batchAt, duckdbPointTexts, pointsOf, sorted } from '../../support/compaction-data.js';
import { exportToDir, keysIn, mergeAllIn } from '../../support/compaction-dir.js';
import { duckdbRows } from '../../support/duckdb.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR, HOUR_MS } from '../../support/time.js';
import { zstdDecompress } from '../../support/zstd.js';

const at = (hour: number, minute: number) => HOUR + hour * HOUR_MS + minute * 60_000 + 7;

/** Compaction on a local directory: the same code as on S3, through the directory store. */
describe('compactMetrics on a directory', () => {
  let dir: string;
  beforeEach(() => tempDir('otel-s3-compact-dir-', (path) => (dir = path)));
  /** Compacts `dir`/p from HOUR on, nothing left to settle; `extra` on top. */
  const compactHour = (extra: Partial<Extract<CompactMetricsOptions, { dir: string }>> = {}) =>
    compactMetrics({ dir, prefix: 'p', settleMillis: 0, from: new Date(HOUR), ...extra });
  const outputs = async () => (await keysIn(dir)).filter((k) => k.endsWith('.compacted.parquet'));
  const footer = async (key: string) => parquetMetadata(await readFile(join(dir, key)));

  test('outputs are cut between inputs near the target size: each holds every point of the inputs it lists', async () => {
    // Outputs take about 4–5 bytes a point: more than one 64 KiB file's worth.
    const batches = Array.from({ length: 36 }, (_, i) => batchAt(`svc-${i % 3}`, at(0, i), 300, i));
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, batches);
    const inputs = (await keysIn(dir)).filter((k) => k.endsWith('.parquet'));
    const report = await compactHour({ targetFileBytes: 64 * 1024 });
    const written = await outputs();
    expect(written.length).toBeGreaterThan(1);
    expect(report.partitions[0]?.written.map((w) => w.key).sort()).toEqual(written);
    const listed: string[] = [];
    let rows = 0;
    for (const key of written) {
      const meta = await footer(key);
      const text = meta.key_value_metadata?.find((kv) => kv.key === REPLACES_KEY)?.value as string;
      const replaces = decodeReplaces(text);
      listed.push(...replaces.inputs.map((i) => i.key));
      // The footer's rows are the points of the inputs it lists, as counted when they were read.
      expect(Number(meta.num_rows)).toBe(replaces.inputs.reduce((n, i) => n + i.rows, 0));
      rows += Number(meta.num_rows);
    }
    expect(listed.sort()).toEqual(inputs);
    expect(rows).toBe(pointsOf(batches).length);
    expect(sorted(await duckdbPointTexts(dir))).toEqual(pointsOf(batches));
  });

  test('late data with a file too large to join the small output: still at most one small output', async () => {
    const target = 64 * 1024;
    const sizes = async () =>
      Promise.all((await outputs()).map(async (k) => (await readFile(join(dir, k))).length));
    const early = [batchAt('svc-0', at(0, 1), 400, 1)];
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, early);
    await compactHour({ targetFileBytes: target });
    expect(await sizes()).toHaveLength(1);
    // Late: an exporter file that the output cannot take without passing the target (12,000
    // series: about 78 KB), then a small one. The small output used to be cut off alone in
    // front of the large file (written again as it was), and the small late file after it was
    // a second small output, merged again by the next run.
    const late = [batchAt('svc-1', at(0, 11), 12000, 2), batchAt('svc-2', at(0, 12), 400, 3)];
    for (const batch of late) await exportToDir(dir, { prefix: 'p', format: 'parquet' }, [batch]);
    await compactHour({ targetFileBytes: target });
    const after = await sizes();
    expect(
      after.filter((size) => size < target / 2).length,
      `outputs ${after}`,
    ).toBeLessThanOrEqual(1);
    const again = await compactHour({ targetFileBytes: target });
    expect(again.partitions.map((p) => [p.written.length, p.deleted])).toEqual([]);
    expect(sorted(await duckdbPointTexts(dir))).toEqual(pointsOf([...early, ...late]));
  });

  test('a late file that cannot be read: the small output is left as it is, not written again', async () => {
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, [batchAt('api', at(0, 1), 300, 1)]);
    await compactHour({ targetFileBytes: 64 * 1024 });
    const [output] = await outputs();
    const before = await keysIn(dir);
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, [batchAt('web', at(0, 2), 300, 2)]);
    const late = (await keysIn(dir)).find((k) => !before.includes(k)) as string;
    await writeFile(join(dir, late), 'not Parquet');
    const report = await compactHour({ targetFileBytes: 64 * 1024 });
    const [partition] = report.partitions;
    expect(partition?.skipped.map((s) => s.key)).toEqual([late]);
    // The output alone would be written again as it is, replacing itself: nothing to write.
    expect(partition?.written).toEqual([]);
    expect(await outputs()).toEqual([output]);
  });

  test('a file is one sorted run: runs spilled past runBytes are merged (series whole, in time order)', async () => {
    // Three services, four times each: inputs come in the reverse order of services and times,
    // so every run holds rows that sort after rows of later runs.
    const batches = Array.from({ length: 12 }, (_, i) =>
      batchAt(`svc-${2 - (i % 3)}`, at(0, 50 - 4 * Math.floor(i / 3)), 100, i),
    );
    await exportToDir(dir, { prefix: 'p', format: 'otlp-json' }, batches);
    // Empty builders hold 30 KB, then 100-200 bytes a point: runs of one or two inputs, merged
    // in chunks of 64 rows (so a run is several chunks).
    const files = await mergeAllIn(dir, resolveKeyLayout('p', {}), METRICS_ROWS, 96 * 1024);
    expect(files).toHaveLength(1);
    const file = files[0] as FinishedFile;
    // Every point, as DuckDB reads them.
    await writeFile(join(dir, 'out.parquet'), file.bytes);
    expect(sorted(await duckdbPointTexts(dir, 'out.parquet'))).toEqual(pointsOf(batches));
    const rows = await parquetReadObjects({
      file: new Uint8Array(file.bytes).buffer,
      columns: ['ServiceName', 'MetricName', 'ResourceAttributes', 'Attributes', 'TimeUnix'],
      compressors: { ZSTD: (input: Uint8Array) => zstdDecompress(input) },
    });
    const text = (map: unknown) =>
      JSON.stringify(
        Object.entries(map as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
      );
    // One sorted run: service and metric never go back, each series is one stretch of rows,
    // in time order.
    const seen = new Set<string>();
    let stretches = 0;
    let previous: { head: string; series: string; time: bigint } | undefined;
    for (const r of rows) {
      const head = `${String(r.ServiceName)}\u0000${String(r.MetricName)}`;
      const series = `${head} ${text(r.ResourceAttributes)} ${text(r.Attributes)}`;
      const time = BigInt(r.TimeUnix instanceof Date ? r.TimeUnix.getTime() : String(r.TimeUnix));
      if (previous !== undefined) expect(head >= previous.head).toBe(true);
      if (series !== previous?.series) {
        stretches++;
        seen.add(series);
      } else expect(time >= previous.time).toBe(true);
      previous = { head, series, time };
    }
    expect(seen.size).toBe(3 * 3 * 100);
    expect(stretches).toBe(seen.size);
  });

  test('two runs whose rows fit one merged batch: written from memory as one sorted run, no spill', async () => {
    // The later input's service sorts first. The first input (6,000 points) fills a run: its
    // builders pass 800 KiB; the second (180) is small: 6,180 rows of 104 bytes, under 800 KiB.
    const batches = [batchAt('svc-1', at(0, 10), 2000, 1), batchAt('svc-0', at(0, 50), 60, 2)];
    await exportToDir(dir, { prefix: 'p', format: 'otlp-json' }, batches);
    // A spill would fail: the temporary directory is a file.
    const notADirectory = join(dir, 'not-a-directory');
    await writeFile(notADirectory, '');
    const tmpdir = process.env.TMPDIR;
    process.env.TMPDIR = notADirectory;
    const merge = (runBytes: number) =>
      mergeAllIn(dir, resolveKeyLayout('p', {}), METRICS_ROWS, runBytes);
    try {
      const files = await merge(800 * 1024);
      expect(files).toHaveLength(1);
      await writeFile(join(dir, 'out.parquet'), (files[0] as FinishedFile).bytes);
      expect(sorted(await duckdbPointTexts(dir, 'out.parquet'))).toEqual(pointsOf(batches));
      const services = await duckdbRows(
        `SELECT ServiceName AS s FROM read_parquet('${join(dir, 'out.parquet')}') ORDER BY file_row_number`,
      );
      const order = services.map((r) => String(r.s));
      expect(order.indexOf('svc-1')).toBe(order.lastIndexOf('svc-0') + 1);
      // Smaller runs: the same inputs need the spill.
      await expect(merge(32 * 1024)).rejects.toThrow(/not-a-directory/);
    } finally {
      if (tmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdir;
    }
  });

  // 60,000 points exported and compacted: 2–3 s, 10 s on a loaded machine (not a bound).
  test('an hour of several files: every input is read once (the first file is not made twice)', {
    timeout: 60_000,
  }, async () => {
    // 40 inputs of 1,500 points, about 8 bytes a point compacted: four files of a 128 KiB
    // target. Cut on the guess of 25 bytes a point, the first file held 4 inputs (about 46 KB),
    // was thrown away and made again: 44 reads. Runs of 256 KiB spill about 2,000 points each.
    const batches = Array.from({ length: 40 }, (_, i) => batchAt(`svc-${i % 4}`, at(0, i), 500, i));
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, batches);
    const reads: string[] = [];
    const targetBytes = 128 * 1024;
    const files = await mergeAllIn(dir, resolveKeyLayout('p', {}), METRICS_ROWS, 256 * 1024, {
      targetBytes,
      reads,
    });
    expect(reads).toHaveLength(batches.length);
    expect(new Set(reads).size).toBe(batches.length);
    expect(files.length).toBeGreaterThan(1);
    expect(files.filter((f) => f.bytes.length < targetBytes / 2).length).toBeLessThanOrEqual(1);
    expect(files.reduce((n, f) => n + f.inputs.length, 0)).toBe(batches.length);
    expect(files.reduce((n, f) => n + f.rows, 0)).toBe(pointsOf(batches).length);
  });

  test('the reader reads an output in place of the objects it replaces, in both default layouts', async () => {
    const parquet = [batchAt('api', at(0, 5), 5, 1)];
    const otlp = [batchAt('web', at(0, 25), 5, 2)];
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, parquet);
    await exportToDir(dir, { prefix: 'p', format: 'otlp-json' }, otlp);
    await compactHour();
    const expected = pointsOf([...parquet, ...otlp]).length;
    for (const format of ['parquet', 'otlp-json'] as const) {
      const stream = readMetrics({ dir, prefix: 'p', format, partitionTime: 'data' });
      let points = 0;
      for await (const object of stream) points += dataPointRows(object.request).length;
      expect(points).toBe(expected);
      // otlp-json: the kept OTLP object is skipped, not counted again.
      expect(stream.stats.objectsReplaced).toBe(format === 'otlp-json' ? 1 : 0);
    }
  });

  test('a range that starts inside a compacted hour of minute partitions finds its output', async () => {
    const otlp = [batchAt('web', at(0, 5), 3, 1), batchAt('web', at(0, 45), 3, 2)];
    await exportToDir(dir, { prefix: 'p', format: 'otlp-json' }, otlp);
    await compactHour({ deleteInputs: true });
    const listed = [];
    // From the middle of the hour: the listing starts at minute 27 (the partitionTime 'data'
    // margin), after the output, which sorts before the hour's minutes.
    const from = new Date(HOUR + 30 * 60_000);
    for await (const o of listMetricObjects({ dir, prefix: 'p', from, partitionTime: 'data' })) {
      listed.push(o.key);
    }
    expect(listed).toEqual(await outputs());
  });

  test('an output whose footer cannot be read replaces nothing: its inputs are still read', async () => {
    const batches = [batchAt('api', at(0, 5), 4, 1)];
    await exportToDir(dir, { prefix: 'p', format: 'otlp-json' }, batches);
    await compactHour();
    const [only] = await outputs();
    await writeFile(join(dir, only as string), 'not Parquet');
    const stream = readMetrics({ dir, prefix: 'p', onError: () => {} });
    let points = 0;
    for await (const object of stream) points += dataPointRows(object.request).length;
    expect(points).toBe(pointsOf(batches).length);
    expect(stream.stats.objectsUnreadable).toBe(1);
  });

  test('a range read gives the same points before and after compaction: an output is read when an object it replaces is in the range', async () => {
    // Batches of an hour long past, filed under it (partitionTime: 'data') and sealed now. A
    // range of that hour holds none of them by their seal times, before compaction; after it,
    // the range read the whole output, whose time span ran from the hour's start to now.
    const batches = [batchAt('svc', at(0, 10), 3, 1), batchAt('svc', at(0, 50), 3, 2)];
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, batches);
    const pointsIn = async (from: number, to: number, prefix = 'p') => {
      let n = 0;
      const stream = readMetrics({ dir, prefix, from: new Date(from), to: new Date(to) });
      for await (const object of stream) n += dataPointRows(object.request).length;
      return n;
    };
    const now = Date.now();
    const ranges = [
      [at(0, 0), at(1, 0)],
      [at(0, 0), now - 3_600_000],
      [now - 60_000, now + 60_000],
    ] as const;
    const before = [];
    for (const [from, to] of ranges) before.push(await pointsIn(from, to));
    expect(before).toEqual([0, 0, 0]);
    await compactHour();
    expect(await outputs()).toHaveLength(1);
    const after = [];
    for (const [from, to] of ranges) after.push(await pointsIn(from, to));
    expect(after).toEqual(before);
    // Read whole, the output is read by a range that holds the seal time of an object it lists.
    expect(await pointsIn(at(0, 0), now + 60_000)).toBe(pointsOf(batches).length);
    // A copy under another prefix (a mirror) reads the same: the seal times are in the names.
    await cp(join(dir, 'p'), join(dir, 'copy'), { recursive: true });
    const copied = [];
    for (const [from, to] of ranges) copied.push(await pointsIn(from, to, 'copy'));
    expect(copied).toEqual(before);
  });

  test('an output larger than 16 MiB is read one row group at a time, as parts of one object with its footer', async () => {
    const batch = batchAt('big', at(0, 5), 1, 1);
    const huge = 'x'.repeat(17 * 1024 * 1024);
    const rm = batch.rm as unknown as { resource: { attributes: Record<string, unknown> } };
    rm.resource.attributes.blob = huge;
    await exportToDir(dir, { prefix: 'p', format: 'otlp-json' }, [batch]);
    await compactHour({ compression: 'none' });
    const stream = readMetrics({ dir, prefix: 'p' });
    const parts = [];
    for await (const object of stream) {
      parts.push({
        part: object.part,
        points: dataPointRows(object.request).length,
        // A part's bytes are the file's footer: small, ending in PAR1.
        footer:
          object.bytes.length < 64 * 1024 && Buffer.from(object.bytes.subarray(-4)).toString(),
      });
    }
    expect(parts).toEqual([
      { part: { index: 0, count: 1 }, points: batch.points.length, footer: 'PAR1' },
    ]);
    expect(stream.stats).toMatchObject({ objects: 1, objectsRead: 1, objectsUnreadable: 0 });
  });

  test('--shard i/n: every settled hour is compacted by exactly one of the shards', async () => {
    const batches = Array.from({ length: 5 }, (_, h) => batchAt('svc', at(h, 10), 2, h));
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, batches);
    const done: string[][] = [];
    for (const index of [0, 1, 2]) {
      const report = await compactHour({ shard: { index, count: 3 } });
      done.push(report.partitions.map((p) => p.partition));
      for (const p of report.partitions) {
        expect(Math.floor(p.hour.getTime() / HOUR_MS) % 3).toBe(index);
      }
    }
    expect(done.flat().sort()).toHaveLength(5);
    expect(new Set(done.flat()).size).toBe(5);
  });

  test('outputs under another prefix: the hour layout there, inputs replaced here', async () => {
    const batches = [batchAt('api', at(0, 5), 4, 1), batchAt('api', at(0, 35), 4, 2)];
    await exportToDir(dir, { prefix: 'raw', format: 'otlp-proto' }, batches);
    await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    const written = await outputs();
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(
      /^lake\/year=\d{4}\/month=\d\d\/day=\d\d\/hour=\d\d\/metrics_[0-9a-f-]{36}\.compacted\.parquet$/,
    );
    expect(sorted(await duckdbPointTexts(dir, 'lake/**/*.parquet'))).toEqual(pointsOf(batches));
    // A second run finds the OTLP objects replaced by the output under the other prefix.
    const again = await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    expect(again.partitions).toEqual([]);
    expect(again.compactedUnderPrefix).toEqual([]);
  });

  test('an hour compacted both to an outPrefix and in place: no run merges the two copies', async () => {
    const batches = [batchAt('api', at(0, 5), 4, 1), batchAt('api', at(0, 35), 4, 2)];
    await exportToDir(dir, { prefix: 'raw', format: 'otlp-json' }, batches);
    await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    // The OTLP objects are kept: a run in place (which does not list lake/) compacts them again.
    await compactHour({ prefix: 'raw' });
    const both = await outputs();
    expect(both).toHaveLength(2);
    const count = async (prefix: string) => {
      let points = 0;
      for await (const object of readMetrics({ dir, prefix }))
        points += dataPointRows(object.request).length;
      return points;
    };
    // Each output holds every point once; merged together, they would hold each twice.
    await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    expect(await count('lake')).toBe(pointsOf(batches).length);
    expect(await count('raw')).toBe(pointsOf(batches).length);
    // A late object of the hour: merged with the copy under lake/, never beside it.
    const late = [...batches, batchAt('api', at(0, 50), 4, 3)];
    await exportToDir(dir, { prefix: 'raw', format: 'otlp-json' }, late.slice(2));
    await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    expect(await count('lake')).toBe(pointsOf(late).length);
    expect(sorted(await duckdbPointTexts(dir, 'lake/**/*.parquet'))).toEqual(pointsOf(late));
  });

  test('an object late for the outPrefix, compacted in place with the others: merged under the outPrefix', async () => {
    const batches = [batchAt('api', at(0, 5), 4, 1), batchAt('api', at(0, 35), 4, 2)];
    await exportToDir(dir, { prefix: 'raw', format: 'otlp-json' }, batches);
    await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    // A late object, then a run in place: its output holds the two kept objects and the late one.
    const late = [...batches, batchAt('api', at(0, 50), 4, 3)];
    await exportToDir(dir, { prefix: 'raw', format: 'otlp-json' }, late.slice(2));
    await compactHour({ prefix: 'raw' });
    expect(await outputs()).toHaveLength(2);
    await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    // Under lake/: every point once, the late ones too.
    expect(sorted(await duckdbPointTexts(dir, 'lake/**/*.parquet'))).toEqual(pointsOf(late));
    expect(sorted(await duckdbPointTexts(dir, 'raw/**/*.parquet'))).toEqual(pointsOf(late));
    // A run after it has nothing left to merge: the hour has settled.
    const again = await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    expect(again.partitions.filter((p) => p.status !== 'nothing-to-do')).toEqual([]);
    // The copy under raw/ is left, and the hour is under lake/: not said to stay under raw/.
    expect(again.compactedUnderPrefix).toEqual([]);
    expect(sorted(await duckdbPointTexts(dir, 'lake/**/*.parquet'))).toEqual(pointsOf(late));
  });

  test('late objects for the outPrefix in a full output in place: merged under the outPrefix too', async () => {
    const batches = [batchAt('api', at(0, 5), 4, 1), batchAt('api', at(0, 35), 4, 2)];
    await exportToDir(dir, { prefix: 'raw', format: 'otlp-json' }, batches);
    await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    // A large late object, then a run in place: its output, full for a 64 KiB target, holds
    // the two kept objects and the late one; the one under lake/ is small.
    const late = [...batches, batchAt('api', at(0, 50), 4500, 3)];
    await exportToDir(dir, { prefix: 'raw', format: 'otlp-json' }, late.slice(2));
    await compactHour({ prefix: 'raw' });
    const sizes = new Map(
      await Promise.all(
        (await outputs()).map(
          async (k) => [k.split('/')[0], (await stat(join(dir, k))).size] as const,
        ),
      ),
    );
    expect(sizes.get('raw')).toBeGreaterThanOrEqual(32 * 1024);
    expect(sizes.get('lake')).toBeLessThan(32 * 1024);
    await compactHour({ prefix: 'raw', outPrefix: 'lake', targetFileBytes: 64 * 1024 });
    expect(sorted(await duckdbPointTexts(dir, 'lake/**/*.parquet'))).toEqual(pointsOf(late));
    expect(sorted(await duckdbPointTexts(dir, 'raw/**/*.parquet'))).toEqual(pointsOf(late));
  });

  test('an hour compacted in place, then a run with an outPrefix: said, not moved', async () => {
    const batches = [batchAt('api', at(0, 5), 4, 1), batchAt('api', at(0, 35), 4, 2)];
    await exportToDir(dir, { prefix: 'raw', format: 'parquet' }, batches);
    const first = await compactHour({ prefix: 'raw' });
    expect(first.compactedUnderPrefix).toEqual([]);
    const [output] = await outputs();
    const later = await compactHour({ prefix: 'raw', outPrefix: 'lake' });
    expect(later.partitions).toEqual([]);
    expect(later.compactedUnderPrefix).toEqual([first.partitions[0]?.partition]);
    expect(await outputs()).toEqual([output]);
    const cli = await runCliInProcess(
      ['compact', '--dir', dir, '--prefix', 'raw', '--out-prefix', 'lake', '--until', '1h'],
      { cwd: dir },
    );
    expect(cli.stderr).toContain(
      `1 hour already compacted under the prefix (by a run without --out-prefix) stays there, nothing of it written under --out-prefix: ${first.partitions[0]?.partition}`,
    );
  });

  test('an hour compacted in place under a prefix the outPrefix begins: said too', async () => {
    // 'lake2' and 'lake' are two directories: an output under lake2/ is not under lake/.
    const batches = [batchAt('api', at(0, 5), 4, 1), batchAt('api', at(0, 35), 4, 2)];
    await exportToDir(dir, { prefix: 'lake2', format: 'parquet' }, batches);
    const first = await compactHour({ prefix: 'lake2' });
    const later = await compactHour({ prefix: 'lake2', outPrefix: 'lake' });
    expect(later.partitions).toEqual([]);
    expect(later.compactedUnderPrefix).toEqual([first.partitions[0]?.partition]);
  });

  test('hours that have not settled are left alone', async () => {
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, [batchAt('api', Date.now(), 2, 1)]);
    const report = await compactMetrics({ dir, prefix: 'p' });
    expect(report.partitionsSelected).toBe(0);
    expect(await outputs()).toEqual([]);
  });

  test('bad options name the option and what is allowed', async () => {
    const bad = [
      [{ keyTemplate: '{service.name}/%Y/%m/%d/%H/metrics_{uuid}' }, 'keyTemplate'],
      [{ partitionTimeZone: 'local' }, 'partitionTimeZone'],
      [{ prefix: 'a', outPrefix: 'a/lake' }, 'outPrefix'],
      [{ shard: { index: 3, count: 3 } }, 'shard.index'],
      [{ targetFileBytes: 1000 }, 'targetFileBytes'],
      [{ compression: 'lz4' }, 'compression'],
    ] as const;
    for (const [options, name] of bad) {
      const attempt = compactMetrics({ dir, ...(options as object) });
      await expect(attempt).rejects.toThrow(InvalidOptionError);
      await expect(attempt).rejects.toThrow(name);
    }
  });
});
