import { constants } from 'node:buffer';
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { BYTE_SIZE_HELP } from '../../../src/base/byte-size.js';
import { partitionLine } from '../../../src/cli/commands/compact.js';
import { DURATION_HELP } from '../../../src/cli/duration.js';
import { hourPath } from '../../../src/compact/bookkeeping.js';
import { emptyTally, type PartitionReport } from '../../../src/compact/report.js';
import { BOOKKEEPING_DIR, INTERNAL_AREA } from '../../../src/layout/outputs.js';
import { runCliInProcess } from '../../support/cli-child.js';
import { batchAt } from '../../support/compaction-data.js';
import {
  exportLogsToDir,
  exportSpansToDir,
  exportToDir,
  keysIn,
} from '../../support/compaction-dir.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR, HOUR_MS } from '../../support/time.js';

describe('otel-s3 compact', () => {
  let root: string;
  beforeEach(() => tempDir('otel-s3-cli-compact-', (path) => (root = path)));

  /** HOUR's lease directory under the prefix `p` of the copy `m`, made. */
  async function hourLeaseDir(): Promise<string> {
    const leases = [BOOKKEEPING_DIR, 'leases', ...hourPath(new Date(HOUR)).split('/')];
    const dir = join(root, 'm', 'p', ...leases);
    await mkdir(dir, { recursive: true });
    return dir;
  }
  const run = (args: string[]) =>
    runCliInProcess(['compact', '--dir', join(root, 'm'), '--prefix', 'p', ...args], { cwd: root });

  test('a line per partition on stdout, the summary on stderr; a second run has nothing to do', async () => {
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
      batchAt('api', HOUR + 11 * 60_000, 3, 2),
    ]);
    const first = await run(['--from', new Date(HOUR).toISOString(), '--settle', '0']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^year=\d{4}\/month=\d\d\/day=\d\d\/hour=\d\d {2}compacted {2}2 objects, .* 18 points -> 1 file, .*; deleted 2\n$/,
    );
    expect(first.stderr).toMatch(/1 partition compacted of 1 settled in .*, 1 file written/);
    const second = await run([
      '--from',
      new Date(HOUR).toISOString(),
      '--settle',
      '0',
      '--format',
      'json',
    ]);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ partitions: [], partitionsSelected: 1 });
    // The bookkeeping is in the reader's internal area: never read, never counted.
    expect(BOOKKEEPING_DIR.startsWith(INTERNAL_AREA)).toBe(true);
    expect(
      (await keysIn(join(root, 'm'))).filter((k) => !k.includes(`/${BOOKKEEPING_DIR}/`)),
    ).toHaveLength(1);
  });

  test('the dry run says how many of the objects it merges the run deletes, for every signal', async () => {
    const m = join(root, 'm');
    // Each signal's hour: two Parquet files and an OTLP object (kept by the run).
    await exportToDir(m, { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
      batchAt('api', HOUR + 11 * 60_000, 3, 2),
    ]);
    await exportToDir(m, { prefix: 'p', format: 'otlp-json' }, [
      batchAt('api', HOUR + 21 * 60_000, 3, 3),
    ]);
    const flat = [
      { service: 'web', minute: 3, items: 4, seed: 1 },
      { service: 'api', minute: 14, items: 5, seed: 2 },
    ];
    await exportSpansToDir(m, HOUR, flat);
    await exportSpansToDir(
      m,
      HOUR,
      [{ service: 'db', minute: 25, items: 3, seed: 3 }],
      'otlp-json',
    );
    await exportLogsToDir(m, HOUR, flat);
    await exportLogsToDir(m, HOUR, [{ service: 'db', minute: 25, items: 3, seed: 3 }], 'otlp-json');
    const range = ['--from', new Date(HOUR).toISOString(), '--settle', '0'];
    const dryText = await run([...range, '--dry-run']);
    const dry = JSON.parse((await run([...range, '--dry-run', '--format', 'json'])).stdout);
    const real = JSON.parse((await run([...range, '--format', 'json'])).stdout);
    const deletedByRun = real.partitions.map((p: PartitionReport) => [p.partition, p.deleted]);
    expect(deletedByRun.map(([, n]: [string, number]) => n)).toEqual([2, 2, 2]);
    // Before: the plan said 0 (only what a stopped run left), and its line no delete at all.
    expect(
      dry.partitions.map((p: PartitionReport) => [p.partition, p.toDelete + p.mergedToDelete]),
    ).toEqual(deletedByRun);
    expect(dryText.stdout.trim().split('\n')).toEqual(
      deletedByRun.map(([partition]: [string]) =>
        expect.stringMatching(
          new RegExp(
            `^${partition}  planned  merge 3 objects, [\\d.]+ KiB; delete 2, keep 1 OTLP object$`,
          ),
        ),
      ),
    );
  });

  test('the dry run says an hour another compactor holds is busy, as the run does', async () => {
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
      batchAt('api', HOUR + 11 * 60_000, 3, 2),
    ]);
    const dir = await hourLeaseDir();
    const expiresAt = Date.now() + 10 * 60_000;
    await writeFile(
      join(dir, '000000000000.lease'),
      JSON.stringify({ holder: 'elsewhere/1/abc', generation: 0, expiresAt }),
    );
    const range = ['--from', new Date(HOUR).toISOString(), '--settle', '0', '--format', 'json'];
    const dry = JSON.parse((await run([...range, '--dry-run'])).stdout);
    const real = JSON.parse((await run(range)).stdout);
    const statuses = (r: { partitions: PartitionReport[] }) =>
      r.partitions.map((p) => [p.partition, p.status, p.busy?.holder]);
    expect(statuses(real)).toEqual([[hourPath(new Date(HOUR)), 'busy', 'elsewhere/1/abc']]);
    // Before: the dry run planned the hour the run then left alone.
    expect(statuses(dry)).toEqual(statuses(real));
  });

  test('a busy hour says from when a run takes it: its lease expiry and the clock-skew allowance', async () => {
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
    ]);
    const dir = await hourLeaseDir();
    // Expired 20 s ago: within the 60 s allowed for clocks that disagree, the hour is still held.
    const expiresAt = Date.now() - 20_000;
    await writeFile(
      join(dir, '000000000000.lease'),
      JSON.stringify({ holder: 'elsewhere/1/abc', generation: 0, expiresAt }),
    );
    const out = await run(['--from', new Date(HOUR).toISOString(), '--settle', '0']);
    // Before: "(elsewhere/1/abc, until <20 s ago>)", a time already past.
    expect(out.stdout).toBe(
      `${hourPath(new Date(HOUR))}  busy  another compactor holds it (elsewhere/1/abc, until ${new Date(expiresAt).toISOString()}; taken over from ${new Date(expiresAt + 60_000).toISOString()})\n`,
    );
  });

  test('a prefix with nothing to compact in the layout is said, exit code 5; an empty range is not', async () => {
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
    ]);
    const at = (prefix: string, ...args: string[]) =>
      runCliInProcess(['compact', '--dir', join(root, 'm'), '--prefix', prefix, ...args], {
        cwd: root,
      });
    const settled = ['--from', new Date(HOUR).toISOString(), '--settle', '0'];
    // Before: "0 partitions compacted of 0 settled in .../pp/" and exit code 0, for a misspelled
    // prefix as for one above the exporter's: a scheduled run that never compacts anything.
    const typo = await at('pp', ...settled);
    expect([typo.code, typo.stderr.split('\n').slice(1)]).toEqual([
      5,
      [
        `otel-s3: nothing to compact: no objects under ${join(root, 'm')}/pp/; check --dir and --prefix`,
        '',
      ],
    ]);
    const above = await at('', ...settled, '--dry-run');
    expect(above.code).toBe(5);
    expect(above.stderr).toMatch(
      /nothing to compact: no key under .* is in the exporter's layout for this prefix \(1 key looked at\); objects are under --prefix p\n$/,
    );
    // A prefix that holds objects, none in the range: nothing to do, and no fault.
    const quiet = await at(
      'p',
      '--from',
      new Date(HOUR + 2 * HOUR_MS).toISOString(),
      '--settle',
      '0',
    );
    expect(quiet.code).toBe(0);
  });

  test('a key out of the layout is counted once, whichever signals list its directory', async () => {
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
    ]);
    const [key] = (await keysIn(join(root, 'm'))) as [string];
    // Beside the metrics' file (a directory every signal's run lists: OTLP spans and log
    // records are filed there too), and in the spans' own directory.
    const hourDir = key.slice(0, key.lastIndexOf('/'));
    await writeFile(join(root, 'm', ...hourDir.split('/'), 'notes.txt'), 'x');
    const spansDir = join(root, 'm', 'p', 'traces', ...hourDir.split('/').slice(1));
    await mkdir(spansDir, { recursive: true });
    await writeFile(join(spansDir, 'notes.txt'), 'x');
    const range = ['--from', new Date(HOUR).toISOString(), '--settle', '0', '--dry-run'];
    const all = await run([...range, '--format', 'json']);
    expect(JSON.parse(all.stdout).keysIgnored).toBe(2);
    // Each signal alone counts the keys its listing passed over.
    const metrics = await run([...range, '--signal', 'metrics', '--format', 'json']);
    expect(JSON.parse(metrics.stdout).keysIgnored).toBe(1);
    const spans = await run([...range, '--signal', 'traces', '--format', 'json']);
    expect(JSON.parse(spans.stdout).keysIgnored).toBe(2);
    // The dry run's summary says it as the real run's does.
    const dry = await run(range);
    expect(dry.stderr).toMatch(/; nothing was written, 2 keys not in the layout ignored\n$/);
    const text = await run(range.filter((a) => a !== '--dry-run'));
    expect(text.stderr).toMatch(/, 2 keys not in the layout ignored/);
  });

  test('a lease that cannot be read holds the hour (exit code 1) until a lease and the skew after its write', async () => {
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
      batchAt('api', HOUR + 11 * 60_000, 3, 2),
    ]);
    const dir = await hourLeaseDir();
    const file = join(dir, '000000000003.lease');
    await writeFile(file, '{"holder":');
    const key = `p/${BOOKKEEPING_DIR}/leases/${hourPath(new Date(HOUR))}/000000000003.lease`;
    const args = ['--from', new Date(HOUR).toISOString(), '--settle', '0'];
    const held = await run(args);
    const until = new Date((await stat(file)).mtimeMs + 10 * 60_000 + 60_000).toISOString();
    expect(held.code).toBe(1);
    expect(held.stdout).toMatch(/ {2}busy {2}its lease cannot be read \(until /);
    expect(held.stderr).toContain(
      `otel-s3: lease ${key} of ${hourPath(new Date(HOUR))} cannot be read (`,
    );
    expect(held.stderr).toContain(`: the hour is held until ${until}, then taken as expired\n`);
    // Written 11 minutes and a second ago: past the default lease (10 min) and skew (60 s).
    const past = (Date.now() - 11 * 60_000 - 1_000) / 1000;
    await utimes(file, past, past);
    const taken = await run(args);
    expect(taken.code).toBe(0);
    expect(taken.stdout).toMatch(/ {2}compacted {2}2 objects/);
    expect(taken.stderr).toMatch(/cannot be read \(.*\): taken as expired .* and replaced\n/);
    expect(await readdir(dir)).toEqual(['000000000005.lease']);
  });

  test('an input its check keeps is named on stderr, with why; exit code 1', async () => {
    const dir = join(root, 'm');
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
      batchAt('api', HOUR + 11 * 60_000, 4, 2),
    ]);
    const [first, second] = (await keysIn(dir)) as [string, string];
    const saved = [await readFile(join(dir, first)), await readFile(join(dir, second))];
    const from = ['--from', new Date(HOUR).toISOString(), '--settle', '0'];
    expect((await run(from)).code).toBe(0);
    // A stopped run's state, but under the first input's key other rows (the second's: 4
    // series, not 3) than the output read from it.
    await writeFile(join(dir, first), saved[1] as Buffer);
    await writeFile(join(dir, second), saved[1] as Buffer);
    const again = await run(from);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      new RegExp(
        `^otel-s3: not deleted ${first}: it holds \\d+ rows, the output that replaces it read \\d+: kept$`,
        'm',
      ),
    );
    expect(await keysIn(dir)).toContain(first);
    expect(await keysIn(dir)).not.toContain(second);
  });

  test('an object listed as superseded only is never deleted unchecked: each run names it, exit code 1', async () => {
    const dir = join(root, 'm');
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 60_000, 3, 1),
      batchAt('api', HOUR + 11 * 60_000, 4, 2),
    ]);
    const [first] = (await keysIn(dir)) as [string];
    const saved = await readFile(join(dir, first));
    const from = ['--from', new Date(HOUR).toISOString(), '--settle', '0'];
    expect((await run(from)).code).toBe(0);
    // A late file: the next run merges the output with it, and the new output lists `first`
    // as superseded only, with no row count of its own.
    await exportToDir(dir, { prefix: 'p', format: 'parquet' }, [
      batchAt('api', HOUR + 21 * 60_000, 2, 3),
    ]);
    expect((await run(from)).code).toBe(0);
    // `first` there again, as an earlier version could leave it (after a failed check or
    // delete). No count proves its rows are the output's: it is kept, and said to be, by
    // every run, never deleted unchecked and never merged again (its rows would count twice).
    await writeFile(join(dir, first), saved);
    for (let i = 0; i < 2; i++) {
      const again = await run(from);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(
        `not deleted ${first}: no output present records the rows it read from it (it is listed as superseded only): kept; compare its rows with the output's, then delete it by hand (docs/parquet.md, "Never a point lost, never one twice")`,
      );
      expect(again.stdout).toMatch(/ 0 files, 0 B; deleted 0\n$/);
    }
    expect((await keysIn(dir)).filter((k) => k.endsWith('.parquet'))).toHaveLength(2);
    expect(await keysIn(dir)).toContain(first);
  });

  test.each([
    [['--until', 'tomorrow'], /invalid --until "tomorrow"/],
    [['--until', '1d', '--to', '2026-01-01'], /--until and --to both set the end/],
    [['--compression', 'lz4'], /--compression/],
  ])('%j is a usage error (exit 2) that names the flag', async (args, message) => {
    const result = await run(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  // Before, the flags' options were named alone ("invalid option partitionConcurrency: 0 ..."), a
  // size too large read as misspelled, and --shard and --partitions had messages of their own.
  const sizes = `an integer of bytes from 65536 to ${constants.MAX_LENGTH}`;
  test.each([
    [
      ['--concurrency', '0'],
      '--concurrency (option concurrency): 0 (expected an integer count from 1 to 64)',
    ],
    [
      ['--partitions', '0'],
      '--partitions (option partitionConcurrency): 0 (expected an integer count from 1 to 16)',
    ],
    [
      ['--partitions', '17'],
      '--partitions (option partitionConcurrency): 17 (expected an integer count from 1 to 16)',
    ],
    [
      ['--partitions', 'many'],
      '--partitions (option partitionConcurrency): "many" (expected an integer count from 1 to 16)',
    ],
    [
      ['--target-file-bytes', '1KiB'],
      `--target-file-bytes (option targetFileBytes): 1024 (expected ${sizes})`,
    ],
    [
      ['--target-file-bytes', '9999999999GiB'],
      `--target-file-bytes (option targetFileBytes): ${9999999999 * 2 ** 30} (expected ${sizes})`,
    ],
    [
      ['--target-file-bytes', '128MB'],
      `--target-file-bytes (option targetFileBytes): "128MB" (expected ${BYTE_SIZE_HELP})`,
    ],
    [
      ['--settle', '100000w'],
      '--settle (option settleMillis): 60480000000000 (expected an integer of milliseconds from 0 to 604800000)',
    ],
    [
      ['--settle', 'soon'],
      `--settle (option settleMillis): "soon" (expected 0 or ${DURATION_HELP})`,
    ],
    [
      ['--shard', '0/10001'],
      '--shard (option shard.count): 10001 (expected an integer count from 1 to 10000)',
    ],
    [['--shard', '4/4'], '--shard (option shard.index): 4 (expected an integer index from 0 to 3)'],
    [['--shard', 'x'], '--shard (option shard): "x" (expected i/n with 0 <= i < n, e.g. 0/4)'],
    [
      ['--out-prefix', 'p/sub'],
      '--out-prefix (option outPrefix): "p/sub" (expected the prefix itself ("p") or a prefix outside it, not nested in it or around it)',
    ],
    // Global flags the compaction checks against each other, and a size limit too large.
    [
      ['--partition-time-zone', 'local'],
      '--partition-time-zone (option partitionTimeZone): "local" (expected \'UTC\'',
    ],
    [
      ['--max-object-bytes', '9999999999GiB'],
      `--max-object-bytes (option maxObjectBytes): ${9999999999 * 2 ** 30} (expected a whole number of bytes from 1 to ${constants.MAX_LENGTH}`,
    ],
  ])('%j: exit 2, "invalid flag %s"', async (args, message) => {
    const result = await run(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`otel-s3: invalid flag ${message}`);
  });

  test('a value the compaction refuses names the variable that gave it', async () => {
    const result = await runCliInProcess(['compact', '--dir', join(root, 'm')], {
      cwd: root,
      env: { OTEL_EXPORTER_S3_PARTITION_TIME_ZONE: 'local' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'invalid environment variable OTEL_EXPORTER_S3_PARTITION_TIME_ZONE (option partitionTimeZone): "local"',
    );
  });
});

describe('the compaction lines speak in the right number', () => {
  const report = (read: { objects: number; points: number }): PartitionReport => ({
    partition: 'year=2026/month=12/day=01/hour=05',
    hour: new Date(Date.UTC(2026, 11, 1, 5)),
    status: 'compacted',
    toMerge: { inputs: emptyTally(), outputs: emptyTally() },
    toDelete: 0,
    mergedToDelete: 0,
    outputsKept: 0,
    replacedKept: 0,
    read: { ...read, bytes: 2048 },
    written: [{ key: 'k', bytes: 4096, rows: read.points }],
    deleted: read.objects,
    notDeleted: [],
    skipped: [],
    skippedEarlier: 0,
    badOutputs: [],
  });

  test('one object of one point', () => {
    expect(partitionLine(report({ objects: 1, points: 1 }))).toBe(
      'year=2026/month=12/day=01/hour=05  compacted  1 object, 2.0 KiB, 1 point -> 1 file, 4.0 KiB; deleted 1',
    );
  });

  test('many', () => {
    expect(partitionLine(report({ objects: 2, points: 1_200 }))).toBe(
      'year=2026/month=12/day=01/hour=05  compacted  2 objects, 2.0 KiB, 1,200 points -> 1 file, 4.0 KiB; deleted 2',
    );
  });

  test("spans' and log records' partitions count spans and log records", () => {
    const read = { objects: 2, points: 1_200 };
    for (const [root, items] of [
      ['traces/', '1,200 spans'],
      ['logs/', '1,200 log records'],
    ]) {
      expect(
        partitionLine({ ...report(read), partition: `${root}year=2026/month=12/day=01/hour=05` }),
      ).toBe(
        `${root}year=2026/month=12/day=01/hour=05  compacted  2 objects, 2.0 KiB, ${items} -> 1 file, 4.0 KiB; deleted 2`,
      );
    }
  });
});

describe('hours that have not settled yet', () => {
  let root: string;
  beforeEach(() => tempDir('otel-s3-cli-unsettled-', (path) => (root = path)));

  test('the dry run names them and says when each settles', async () => {
    const now = Date.now();
    const thisHour = Math.floor(now / HOUR_MS) * HOUR_MS;
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, [
      batchAt('api', now - 1_000, 2, 1),
    ]);
    const settle = 20 * 60_000;
    const { code, stdout, stderr } = await runCliInProcess(
      ['compact', '--dir', join(root, 'm'), '--prefix', 'p', '--dry-run', '--settle', '20m'],
      { cwd: root },
    );
    expect([code, stdout]).toEqual([0, '']);
    const hour = new Date(thisHour);
    const path = `year=${hour.getUTCFullYear()}/month=${String(hour.getUTCMonth() + 1).padStart(2, '0')}/day=${String(hour.getUTCDate()).padStart(2, '0')}/hour=${String(hour.getUTCHours()).padStart(2, '0')}`;
    const settlesAt = new Date(thisHour + HOUR_MS + settle).toISOString();
    expect(stderr).toMatch(
      new RegExp(
        `^otel-s3: dry run: 0 partitions to compact of 0 settled in .*; nothing was written; 1 hour not settled yet: ${path} \\(1 object, compacted from ${settlesAt}, in \\d+ min\\)\\n$`,
      ),
    );
    const json = await runCliInProcess(
      [
        'compact',
        '--dir',
        join(root, 'm'),
        '--prefix',
        'p',
        '--dry-run',
        '--settle',
        '20m',
        '--format',
        'json',
      ],
      { cwd: root },
    );
    expect(JSON.parse(json.stdout).unsettled).toEqual([
      { partition: path, hour: hour.toISOString(), objects: 1, settlesAt },
    ]);
  });
});

describe('a zero --settle written with a unit', () => {
  let root: string;
  beforeEach(() => tempDir('otel-s3-cli-settle-zero-', (path) => (root = path)));

  // The message for a bad --settle asks for "0 or a duration like 30s": 0s, 0m and 0h0m are
  // such durations, of no time, and mean what 0 means (an hour settles as it ends).
  test.each(['0', '0s', '0m', '0ms', '0h0m'])(
    '--settle %s: an hour settles when it ends',
    async (zero) => {
      const now = Date.now();
      const thisHour = Math.floor(now / HOUR_MS) * HOUR_MS;
      await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, [
        batchAt('api', now - 1_000, 2, 1),
      ]);
      const { code, stdout, stderr } = await runCliInProcess(
        [
          'compact',
          '--dir',
          join(root, 'm'),
          '--prefix',
          'p',
          '--dry-run',
          '--settle',
          zero,
          '--format',
          'json',
        ],
        { cwd: root },
      );
      expect([code, stderr]).toEqual([0, '']);
      expect(JSON.parse(stdout).unsettled.map((u: { settlesAt: string }) => u.settlesAt)).toEqual([
        new Date(thisHour + HOUR_MS).toISOString(),
      ]);
    },
  );
});
