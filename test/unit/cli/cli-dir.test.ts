import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { beforeAll, describe, expect, test } from 'vitest';
import type { StatsReport } from '../../../src/cli/commands/stats.js';
import type { PointRecord } from '../../../src/cli/point-record.js';
import { dataPointRows, readMetrics } from '../../../src/reader.js';
import { type CliInProcessOptions, lines, runCliInProcess } from '../../support/cli-child.js';
import {
  COMPRESSIONS,
  EXTENSION,
  encodeObject,
  FORMATS,
  instrumentValues,
  keyAt,
  rawRowOf,
  recordedValues,
  sampleMetrics,
  writeAtKey,
} from '../../support/reader-fixtures.js';
import { catLine, recordedRequest } from '../../support/recorded-request.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0 } from '../../support/time.js';

/** Runs the CLI in this process, in the test's directory unless told otherwise. */
const run = (args: string[], options: CliInProcessOptions = {}) =>
  runCliInProcess(args, { cwd: root, ...options });

const T0 = CLI_T0;

let root: string;
let mirror: string;
let rm1: ResourceMetrics;
/** Keys of the six objects (both formats, all compressions), 10 s apart from T0, in order. */
const keys: string[] = [];
/** Their sizes on disk, in the same order. */
const sizes: number[] = [];

beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-');
  mirror = join(root, 'mirror');
  rm1 = await sampleMetrics('svc');
  for (const format of FORMATS) {
    for (const compression of COMPRESSIONS) {
      const time = new Date(T0.getTime() + keys.length * 10_000);
      const key = keyAt('prod', time, EXTENSION[format] + EXTENSION[compression]);
      const body = encodeObject(rm1, format, compression);
      await writeAtKey(mirror, key, body);
      keys.push(key);
      sizes.push(body.length);
    }
  }
  return () => removeDir(root);
});

/** `points` over the mirror of prefix `prod`. */
const POINTS_OF_MIRROR = ['points', '--dir', 'mirror', '--prefix', 'prod'];

describe('otel-s3 reading a directory laid out like the bucket', () => {
  test('points --format jsonl: one row per data point of every object, values as recorded', async () => {
    const { code, stdout, stderr } = await run([...POINTS_OF_MIRROR, '--format', 'jsonl']);
    expect([code, stderr]).toEqual([0, '']);
    const rows = lines(stdout).map((l) => JSON.parse(l) as PointRecord);
    expect(rows).toHaveLength(6 * keys.length);
    expect(new Set(rows.map((r) => r.type))).toEqual(
      new Set(['counter', 'up-down-counter', 'gauge', 'histogram', 'exponential-histogram']),
    );
    // Objects in key order, six rows each: every object's rows hold what the SDK recorded.
    for (let i = 0; i < keys.length; i++) {
      const points = rows.slice(6 * i, 6 * i + 6).map(rawRowOf);
      expect(instrumentValues(points), keys[i]).toEqual(recordedValues('svc', rm1));
    }
  });

  test("points --format jsonl gives dataPointRows()' rows: the same fields, names and values", async () => {
    const { code, stdout } = await run([
      'points',
      '--dir',
      'mirror',
      '--prefix',
      'prod',
      '--format',
      'jsonl',
    ]);
    expect(code).toBe(0);
    const printed = lines(stdout).map((l) => JSON.parse(l) as unknown);
    // What a script using the reader gets for the same objects, read with the same options.
    const read: unknown[] = [];
    for await (const object of readMetrics({ dir: mirror, prefix: 'prod' })) {
      for (const row of dataPointRows(object.request)) read.push(JSON.parse(JSON.stringify(row)));
    }
    expect(read).toHaveLength(6 * keys.length);
    expect(printed).toEqual(read);
  });

  test('points: time and start of every row are the end and start times the SDK recorded', async () => {
    // The recorded times, converted here: [seconds, nanoseconds] to ISO 8601 UTC with 9 digits.
    const iso = ([seconds, nanos]: [number, number]) =>
      `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${String(nanos).padStart(9, '0')}Z`;
    const recorded = new Map<string, { time: string; start: string }>();
    for (const metric of rm1.scopeMetrics.flatMap((sm) => sm.metrics)) {
      for (const p of metric.dataPoints) {
        const id = `${metric.descriptor.name} ${JSON.stringify(p.attributes)}`;
        recorded.set(id, { time: iso(p.endTime), start: iso(p.startTime) });
      }
    }
    expect(recorded.size).toBe(6);
    // Told apart: sampleMetrics() collects a few ms after it records.
    for (const { time, start } of recorded.values()) expect(start < time, time).toBe(true);

    const args = ['points', '--dir', 'mirror', '--prefix', 'prod', '--format'];
    const jsonl = await run([...args, 'jsonl']);
    const rows = lines(jsonl.stdout).map((l) => JSON.parse(l) as PointRecord);
    const csv = await run([...args, 'csv']);
    const csvRows = lines(csv.stdout).slice(1);
    expect(rows).toHaveLength(6 * keys.length);
    expect(csvRows).toHaveLength(rows.length);
    rows.forEach((row, i) => {
      const expected = recorded.get(`${row.metric} ${JSON.stringify(row.attributes)}`);
      expect({ time: row.time, start: row.start }, row.metric).toEqual(expected);
      // CSV: the same rows in the same order, time and start its first two columns.
      const [time, start] = (csvRows[i] ?? '').split(',');
      expect({ time, start }, row.metric).toEqual(expected);
    });
  });

  test('points: a table on a terminal, JSON lines otherwise; --metric filters with wildcards', async () => {
    const table = await run(
      ['points', '--dir', 'mirror', '--prefix', 'prod', '--metric', 'http.*'],
      {
        stdoutTTY: true,
      },
    );
    const [header, ...rows] = lines(table.stdout);
    expect(header).toMatch(/^time \(UTC\)\s+resource\s+metric\s+type\s+attributes\s+value$/);
    expect(rows).toHaveLength(6 * 4);
    expect(rows.filter((r) => /http\.requests\s+counter\s+route=\/a\s+12$/.test(r))).toHaveLength(
      6,
    );
    expect(
      rows.filter((r) =>
        /http\.latency\s+histogram\s+count=3 sum=333 min=3 max=300 \| ≤5:1 ≤50:1 ≤500:1$/.test(r),
      ),
    ).toHaveLength(6);

    const piped = await run([...POINTS_OF_MIRROR, '--metric', 'cpu.temperature']);
    expect(lines(piped.stdout).map((l) => (JSON.parse(l) as PointRecord).value)).toEqual(
      Array(6).fill(42.5),
    );
  });

  test('points --metric matching nothing says so, naming the filter and the metrics there are', async () => {
    const { code, stdout, stderr } = await run(
      [...POINTS_OF_MIRROR, '--metric', 'nosuch', '--metric', 'http.x*'],
      { stdoutTTY: true },
    );
    expect(code).toBe(0);
    expect(lines(stdout)).toHaveLength(1); // the header alone
    expect(stderr).toBe(
      'otel-s3: no metric matched --metric "nosuch" --metric "http.x*"; the 36 data points in ' +
        'this range are of cpu.temperature, http.active, http.latency, http.requests, payload.size\n',
    );

    const empty = await run([
      'points',
      '--dir',
      'mirror',
      '--prefix',
      'nothing-here',
      '--metric',
      'x',
    ]);
    // Nothing at all under the prefix, and no range to explain it: exit code 5, not a success.
    expect([empty.code, empty.stderr]).toEqual([
      5,
      expect.stringMatching(
        /^otel-s3: nothing to read: no objects under .*\/nothing-here\/; check --dir and --prefix\n$/,
      ),
    ]);
  });

  test('points --format csv: a header and one line per data point', async () => {
    const { code, stdout } = await run([
      ...POINTS_OF_MIRROR,
      '--format',
      'csv',
      '--metric',
      'http.active',
    ]);
    expect(code).toBe(0);
    const [header, ...rows] = lines(stdout);
    expect(header).toBe(
      'time,start,resource,scope,metric,type,unit,temporality,attributes,value,count,sum,min,max,buckets',
    );
    expect(rows).toHaveLength(6);
    expect(
      rows.every((r) =>
        r.includes(',test-meter,http.active,up-down-counter,,cumulative,{},7,,,,,'),
      ),
    ).toBe(true);
  });

  test('cat: each object as one OTLP/JSON request line, whatever its format; --with-key wraps it', async () => {
    const { code, stdout } = await run(['cat', '--dir', 'mirror', '--prefix', 'prod']);
    expect(code).toBe(0);
    // Each line, read by the strict reference decoder, is the request the SDK handed over as the
    // official serializer writes it: protobuf and JSON objects alike, every compression.
    const recorded = recordedRequest(rm1);
    const printed = lines(stdout);
    expect(printed).toHaveLength(keys.length);
    for (const line of printed) expect(catLine(line)).toEqual(recorded);

    const wrapped = await run(['cat', '--dir', 'mirror', '--prefix', 'prod', '--with-key']);
    const first = JSON.parse(lines(wrapped.stdout)[0] ?? '{}');
    expect(Object.keys(first)).toEqual(['key', 'signal', 'time', 'request']);
    expect({ key: first.key, signal: first.signal, time: first.time }).toEqual({
      key: keys[0],
      signal: 'metrics',
      time: T0.toISOString(),
    });
    expect(catLine(JSON.stringify(first.request))).toEqual(recorded);
  });

  test('ls: time, exact size and key per object, in time order; totals on stderr', async () => {
    const { code, stdout, stderr } = await run(['ls', '--dir', 'mirror', '--prefix', 'prod']);
    expect(code).toBe(0);
    expect(lines(stdout)).toEqual(
      keys.map(
        (k, i) =>
          `${new Date(T0.getTime() + i * 10_000).toISOString()}  ${String(sizes[i]).padStart(12)}  ${k}`,
      ),
    );
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(stderr).toContain(`otel-s3: 6 objects,`);
    expect(stderr).toContain(`(${total.toLocaleString('en-US')} bytes)`);

    const jsonl = await run(['ls', '--dir', 'mirror', '--prefix', 'prod', '--format', 'jsonl']);
    expect(JSON.parse(lines(jsonl.stdout)[3] ?? '')).toEqual({
      time: new Date(T0.getTime() + 30_000).toISOString(),
      size: sizes[3],
      key: keys[3],
      signal: 'metrics',
      format: 'otlp-proto',
      compression: 'zstd',
    });
  });

  test('--from and --to select objects by time ([from, to))', async () => {
    const from = new Date(T0.getTime() + 10_000).toISOString();
    const to = new Date(T0.getTime() + 30_000).toISOString();
    const { stdout } = await run([
      'ls',
      '--dir',
      'mirror',
      '--prefix',
      'prod',
      '--from',
      from,
      '--to',
      to,
    ]);
    expect(lines(stdout).map((l) => l.split(/\s+/)[2])).toEqual([keys[1], keys[2]]);
  });

  test('stats --format json: objects, bytes, compression ratio, data points per metric', async () => {
    const { code, stdout } = await run([
      'stats',
      '--dir',
      'mirror',
      '--prefix',
      'prod',
      '--format',
      'json',
    ]);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as StatsReport;
    const bytes = sizes.reduce((a, b) => a + b, 0);
    // Uncompressed sizes are those of the two objects stored without compression, thrice each.
    const rawBytes = 3 * ((sizes[2] ?? 0) + (sizes[5] ?? 0));
    expect(report).toMatchObject({
      objects: 6,
      objectsUnreadable: 0,
      bytes,
      rawBytes,
      compressionRatio: Number((rawBytes / bytes).toFixed(2)),
      encodings: {
        'otlp-json+zstd': 1,
        'otlp-json+gzip': 1,
        'otlp-json+none': 1,
        'otlp-proto+zstd': 1,
        'otlp-proto+gzip': 1,
        'otlp-proto+none': 1,
      },
      firstObject: T0.toISOString(),
      dataPoints: 36,
    });
    expect(report.metrics).toEqual([
      { metric: 'cpu.temperature', type: 'gauge', series: 1, dataPoints: 6 },
      { metric: 'http.active', type: 'up-down-counter', series: 1, dataPoints: 6 },
      { metric: 'http.latency', type: 'histogram', series: 1, dataPoints: 6 },
      { metric: 'http.requests', type: 'counter', series: 2, dataPoints: 12 },
      { metric: 'payload.size', type: 'exponential-histogram', series: 1, dataPoints: 6 },
    ]);
  });

  test('.otel-s3.json in the current directory gives the defaults', async () => {
    const cwd = await mkdtemp(join(root, 'cwd-'));
    await writeFile(
      join(cwd, '.otel-s3.json'),
      JSON.stringify({ dir: '../mirror', prefix: 'prod' }),
    );
    const { code, stdout } = await run(['ls', '--format', 'jsonl'], { cwd });
    expect(code).toBe(0);
    expect(lines(stdout)).toHaveLength(6);
  });

  test('objects under a deeper prefix than asked for: none listed, and the note names the prefix', async () => {
    const { code, stdout, stderr } = await run(['ls', '--dir', 'mirror']);
    expect([code, stdout]).toEqual([5, '']);
    expect(stderr).toContain(
      `otel-s3: nothing readable: ignored 6 keys under ${mirror}/ that are not in the exporter's layout for this prefix; objects are under --prefix prod`,
    );
  });

  test('an unreadable object is reported and skipped, the rest printed, exit code 1', async () => {
    const dir = join(root, 'with-broken');
    const good = encodeObject(rm1, 'otlp-json', 'zstd');
    const broken = keyAt('prod', new Date(T0.getTime() + 1), '.json.zst');
    await writeAtKey(dir, keyAt('prod', T0, '.json.zst'), good);
    await writeAtKey(dir, broken, Buffer.from('garbage'));
    await writeAtKey(dir, keyAt('prod', new Date(T0.getTime() + 2), '.json.zst'), good);
    const { code, stdout, stderr } = await run(['points', '--dir', dir, '--prefix', 'prod']);
    expect(code).toBe(1);
    expect(lines(stdout)).toHaveLength(2 * 6);
    expect(stderr).toContain(`otel-s3: cannot read ${broken} (decompress): invalid zstd data`);
    expect(stderr).toContain('otel-s3: 1 object of 3 objects could not be read and was skipped');
  });

  test('a missing directory: exit code 3, with what is missing and where the setting came from', async () => {
    const { code, stderr } = await run(['ls', '--dir', 'nowhere']);
    expect(code).toBe(3);
    expect(stderr).toContain(
      `otel-s3: cannot read directory ${join(root, 'nowhere')}: it does not exist`,
    );
    expect(stderr).toContain(`(directory ${join(root, 'nowhere')} from flag --dir)`);
  });

  test.each([
    [
      ['points', '--dir', 'mirror', '--format', 'xml'],
      /argument 'xml' is invalid. Allowed choices are table, csv, jsonl/,
    ],
    [
      ['ls', '--dir', 'mirror', '--since', 'yesterday'],
      /invalid --since "yesterday": expected a duration/,
    ],
    [['ls', '--dir', 'mirror', '--bogus'], /unknown option '--bogus'/],
    [['list', '--dir', 'mirror'], /unknown command 'list'/],
    [['ls'], /nothing to read: give --bucket/],
    // Each in its command's words: check reads nothing, and --dir is no source it can test.
    [
      ['check'],
      /^otel-s3: otel-s3 check tests S3 access: give --bucket <name> \(or set OTEL_EXPORTER_S3_BUCKET\)\n$/,
    ],
    [
      ['compact'],
      /^otel-s3: nothing to compact: give --bucket <name> .* or --dir <path> to compact a local copy\n$/,
    ],
    [[], /Usage: otel-s3/],
  ])('usage errors exit with 2 and say what is wrong: %j', async (args, message) => {
    const { code, stderr, stdout } = await run(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
  });

  test.each(['ls', 'cat', 'points', 'stats'])(
    '%s --help exits 0 and shows its options, the global ones and the exit codes',
    async (command) => {
      const { code, stdout } = await run([command, '--help']);
      expect(code).toBe(0);
      expect(stdout).toContain(`Usage: otel-s3 ${command} [options]`);
      expect(stdout).toContain('Global Options:');
      expect(stdout).toContain('--since <duration>');
      expect(stdout).toContain('Exit codes:');
    },
  );

  test('--help on the program lists the commands, environment variables, exit codes', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    for (const text of [
      'ls [options]',
      'cat [options]',
      'points [options]',
      'stats [options]',
      'OTEL_EXPORTER_S3_BUCKET',
      '--key-template <template>',
      'OTEL_EXPORTER_S3_KEY_TEMPLATE',
      'OTEL_METRIC_EXPORT_INTERVAL',
      '.otel-s3.json',
      '130  interrupted',
    ]) {
      expect(stdout).toContain(text);
    }
  });

  test('when the reader of stdout goes away (EPIPE), reading stops and the exit code is 0', async () => {
    const { code, stdout, stderr } = await run(['cat', '--dir', 'mirror', '--prefix', 'prod'], {
      closeAfter: 1,
    });
    expect([code, stderr]).toEqual([0, '']);
    expect(lines(stdout)).toHaveLength(1);
  });

  test('interrupted (Ctrl-C): exit code 130', async () => {
    const { code, stderr } = await run(['cat', '--dir', 'mirror', '--prefix', 'prod'], {
      signal: AbortSignal.abort(),
    });
    expect(code).toBe(130);
    expect(stderr).toContain('otel-s3: interrupted');
  });

  test('a progress bar on stderr only when it is a terminal, and not with --no-progress', async () => {
    const args = ['stats', '--dir', 'mirror', '--prefix', 'prod'];
    // cli-progress hides the cursor when a bar starts (and clears the bar when done).
    const HIDE_CURSOR = '\u001b[?25l';
    expect((await run(args, { stderrTTY: true })).stderr).toContain(HIDE_CURSOR);
    expect((await run(args)).stderr).toBe('');
    expect((await run([...args, '--no-progress'], { stderrTTY: true })).stderr).toBe('');
    // Streaming output to the terminal is progress enough: no bar over it.
    expect(
      (await run(['points', ...args.slice(1)], { stderrTTY: true, stdoutTTY: true })).stderr,
    ).toBe('');
  });
});

describe('a time range over a prefix whose objects are all under a deeper one', () => {
  test('ls --from gives the note and the exit code it gives without a range', async () => {
    const without = await run(['ls', '--dir', 'mirror']);
    const ranged = await run(['ls', '--dir', 'mirror', '--from', T0.toISOString()]);
    expect([without.code, ranged.code]).toEqual([5, 5]);
    const hint = `objects are under --prefix prod`;
    expect(without.stderr).toContain(hint);
    expect(ranged.stdout).toBe('');
    expect(ranged.stderr).toContain(
      `otel-s3: nothing readable: no key under ${mirror}/ is in the exporter's layout for this prefix (6 keys looked at); ${hint}`,
    );
  });

  test('points --since over an empty prefix: the note and exit code it gives without', async () => {
    const args = ['points', '--dir', 'mirror', '--prefix', 'nothing-here'];
    const without = await run(args);
    const ranged = await run([...args, '--since', '1h']);
    expect([without.code, ranged.code]).toEqual([5, 5]);
    expect(ranged.stderr).toBe(without.stderr);
    expect(ranged.stderr).toMatch(/nothing to read: no objects under .*\/nothing-here\//);
  });

  test('a quiet range in a prefix that does hold objects is still a success', async () => {
    const quiet = await run(['ls', '--dir', 'mirror', '--prefix', 'prod', '--from', '2026-12-01']);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toContain('0 objects');
    expect(quiet.stderr).not.toContain('nothing');
  });
});
