import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { formatBytes, parseByteSize } from '../../../src/base/byte-size.js';
import { parseDuration, parseTime } from '../../../src/cli/duration.js';
import { UsageError } from '../../../src/cli/exit-codes.js';
import { type GlobalFlags, resolveSettings } from '../../../src/cli/settings.js';
import { runCliChild, runCliInProcess } from '../../support/cli-child.js';
import { tempDir } from '../../support/temp-dir.js';
import { thrown } from '../../support/thrown.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');

describe('parseDuration', () => {
  test.each([
    ['30s', 30_000],
    ['15m', 900_000],
    ['1h', 3_600_000],
    ['2d', 172_800_000],
    ['1w', 604_800_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['500ms', 500],
  ])('%s is %d ms', (text, millis) => {
    expect(parseDuration(text)).toBe(millis);
  });

  test.each(['', '1', 'h', '1x', '-1h', '0m', '1 h', '1h-'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('parseByteSize', () => {
  test.each([
    ['1048576', 1_048_576],
    ['512KiB', 524_288],
    ['128MiB', 134_217_728],
    ['128 MiB', 134_217_728],
    ['2GiB', 2_147_483_648],
    ['1.5gib', 1_610_612_736],
    ['64m', 67_108_864],
    ['100k', 102_400],
    ['10B', 10],
    ['1TiB', 1_099_511_627_776],
    ['2t', 2_199_023_255_552],
  ])('%s is %d bytes', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });

  test.each(['', 'MiB', '64MB', '1.5', '0', '0MiB', '-1', '1e6', '1 2', '9999999999GiB', '9999TB'])(
    '%j is not a size (decimal MB is refused rather than guessed at)',
    (text) => {
      expect(parseByteSize(text)).toBeUndefined();
    },
  );
});

test('formatBytes goes up to TiB', () => {
  expect([1023, 1536, 128 * 2 ** 20, 2 ** 31, 1.5 * 2 ** 40].map(formatBytes)).toEqual([
    '1023 B',
    '1.5 KiB',
    '128.0 MiB',
    '2.00 GiB',
    '1.50 TiB',
  ]);
});

describe('parseTime', () => {
  test.each([
    ['2026-11-30T04:00:00Z', '2026-11-30T04:00:00.000Z'],
    // Past the millisecond: the next one (objects' seal times are whole milliseconds).
    ['2026-11-30T04:00:00.123456789Z', '2026-11-30T04:00:00.124Z'],
    ['2026-11-30T04:00:00.123000000Z', '2026-11-30T04:00:00.123Z'],
    ['2026-11-30T23:59:59.9999Z', '2026-12-01T00:00:00.000Z'],
    ['2026-11-30T04:00Z', '2026-11-30T04:00:00.000Z'],
    ['2026-11-30T05:00:00+01:00', '2026-11-30T04:00:00.000Z'],
    // No zone: UTC, like the partitions (Date.parse would take local time).
    ['2026-11-30T04:00:00', '2026-11-30T04:00:00.000Z'],
    ['2026-11-30 04:00', '2026-11-30T04:00:00.000Z'],
    ['2026-11-30', '2026-11-30T00:00:00.000Z'],
    // Another UTC date than the one written: still that date.
    ['2026-11-30T23:30:00-01:00', '2026-12-01T00:30:00.000Z'],
    ['2026-03-01T00:30+01:00', '2026-02-28T23:30:00.000Z'],
  ])('%s is %s', (text, iso) => {
    expect(parseTime(text)?.toISOString()).toBe(iso);
  });

  test.each([
    'yesterday',
    '2026-13-01',
    '2026-02-30',
    '2026-02-30T00:00Z',
    '2026-02-29T12:00:00+01:00',
    '2026-04-31 04:00-05:00',
    '30/11/2026',
    '2026-11-30T25:00Z',
    '1700000000',
  ])('%j is not a time', (text) => {
    expect(parseTime(text)).toBeUndefined();
  });
});

describe('resolveSettings', () => {
  let cwd: string;
  beforeAll(() => tempDir('otel-s3-settings-', (path) => (cwd = path)));

  const resolveIn = (dir: string, flags: GlobalFlags, env: Record<string, string> = {}) =>
    resolveSettings(flags, env, dir, NOW);
  const usageError = (fn: () => unknown): string => thrown(fn, UsageError).message;

  test("one signal's variables: read by that signal's commands, named as not read by the others", async () => {
    const dir = await mkdtemp(join(cwd, 'signal-vars-'));
    const env = {
      OTEL_EXPORTER_S3_BUCKET: 'b',
      OTEL_EXPORTER_S3_PREFIX: 'all',
      OTEL_EXPORTER_S3_METRICS_PREFIX: 'metrics-only',
    };
    // Before: every command read the prefix for all (`all`), and said nothing.
    const points = resolveSettings({}, env, dir, NOW, 'metrics');
    expect([points.prefix, points.origins.prefix]).toEqual([
      'metrics-only',
      'environment variable OTEL_EXPORTER_S3_METRICS_PREFIX',
    ]);
    expect(resolveSettings({}, env, dir, NOW, 'traces').prefix).toBe('all');
    const ls = resolveSettings({}, env, dir, NOW);
    expect(ls.prefix).toBe('all');
    expect(ls.warnings).toEqual([
      expect.stringMatching(
        /^OTEL_EXPORTER_S3_METRICS_PREFIX is one signal's: points, spans, logs and trace read it/,
      ),
    ]);
  });

  test('an AWS endpoint switch the AWS SDK ignores is said before reading S3', () => {
    // Before: no word; the SDK passes over "False" and reads the standard endpoint.
    const env = { AWS_USE_FIPS_ENDPOINT: 'False' };
    expect(resolveIn(cwd, { bucket: 'b' }, env).warnings).toEqual([
      'invalid environment variable AWS_USE_FIPS_ENDPOINT: "False" (expected "true" or "false", in lower case); the AWS SDK ignores it and takes use_fips_endpoint of the AWS config file, else false',
    ]);
    // A local copy makes no request.
    expect(resolveIn(cwd, { dir: cwd }, env).warnings).toEqual([]);
  });

  test('a --from after now is said, with the zone a time without one is read in', () => {
    // Before: the range was read and came back empty ("no spans in ... since 2026-11-30T13:00:00.000Z",
    // exit 0), with no word that it starts an hour after now: a local time given without its zone.
    const ahead = resolveIn(cwd, { bucket: 'b', from: '2026-11-30T13:00' });
    expect(ahead.warnings).toEqual([
      '--from 2026-11-30T13:00:00.000Z is after now (2026-11-30T12:00:00.000Z): only objects sealed by a clock ahead of this one can be in the range; a time without a zone is UTC: add the zone (2026-11-30T13:00+02:00)',
    ]);
    expect(resolveIn(cwd, { bucket: 'b', from: '2026-12-01' }).warnings).toEqual([
      expect.stringMatching(/is after now .*: add the zone \(2026-12-01T00:00\+02:00\)$/),
    ]);
    expect(resolveIn(cwd, { bucket: 'b', from: '2026-11-30T14:00+01:00' }).warnings).toEqual([
      '--from 2026-11-30T13:00:00.000Z is after now (2026-11-30T12:00:00.000Z): only objects sealed by a clock ahead of this one can be in the range',
    ]);
    expect(resolveIn(cwd, { bucket: 'b', from: '2026-11-30T11:00' }).warnings).toEqual([]);
    expect(resolveIn(cwd, { bucket: 'b', since: '1h' }).warnings).toEqual([]);
  });

  test('flags win over environment variables, which win over .otel-s3.json', async () => {
    const dir = await mkdtemp(join(cwd, 'layers-'));
    await writeFile(
      join(dir, '.otel-s3.json'),
      JSON.stringify({
        bucket: 'from-file',
        prefix: 'file/p',
        region: 'file-region',
        endpoint: 'http://file:1',
      }),
    );
    const env = { OTEL_EXPORTER_S3_BUCKET: 'from-env', OTEL_EXPORTER_S3_REGION: 'env-region' };
    const s = resolveIn(dir, { bucket: 'from-flag' }, env);
    expect(s.source).toEqual({
      kind: 's3',
      bucket: 'from-flag',
      region: 'env-region',
      endpoint: 'http://file:1',
    });
    expect(s.prefix).toBe('file/p');
    expect(s.origins).toEqual({
      bucket: 'flag --bucket',
      region: 'environment variable OTEL_EXPORTER_S3_REGION',
      endpoint: `"endpoint" in ${join(dir, '.otel-s3.json')}`,
      prefix: `"prefix" in ${join(dir, '.otel-s3.json')}`,
    });
    expect(resolveIn(dir, {}, env).source).toMatchObject({ bucket: 'from-env' });
    expect(resolveIn(dir, {}).source).toMatchObject({ bucket: 'from-file', region: 'file-region' });
  });

  test('a dir in .otel-s3.json is relative to the file; --dir to the current directory', async () => {
    const dir = await mkdtemp(join(cwd, 'dir-'));
    await writeFile(
      join(dir, '.otel-s3.json'),
      JSON.stringify({ dir: 'mirror', prefix: 'demo/run' }),
    );
    expect(resolveIn(dir, {})).toMatchObject({
      source: { kind: 'dir', dir: join(dir, 'mirror') },
      prefix: 'demo/run',
      where: `${join(dir, 'mirror')}/demo/run/`,
    });
    expect(resolveIn(dir, { config: '.otel-s3.json', dir: 'other' }).source).toEqual({
      kind: 'dir',
      dir: join(dir, 'other'),
    });
    // A bucket from the environment outranks the file's dir.
    expect(resolveIn(dir, {}, { OTEL_EXPORTER_S3_BUCKET: 'b' }).source).toMatchObject({
      kind: 's3',
    });
  });

  test('a .otel-s3.json saved with a byte order mark (Windows editors) is read as without one', async () => {
    const dir = await mkdtemp(join(cwd, 'bom-'));
    await writeFile(
      join(dir, '.otel-s3.json'),
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from('{"bucket": "metrics", "prefix": "prod"}'),
      ]),
    );
    expect(resolveIn(dir, {})).toMatchObject({
      source: { kind: 's3', bucket: 'metrics' },
      prefix: 'prod',
    });
  });

  test('--since is relative to now; --from and --to are times; no range by default', () => {
    expect(resolveIn(cwd, { bucket: 'b', since: '1h' }).from?.toISOString()).toBe(
      '2026-11-30T11:00:00.000Z',
    );
    const s = resolveIn(cwd, { bucket: 'b', from: '2026-11-30T10:00Z', to: '2026-11-30T11:00Z' });
    expect([s.from?.toISOString(), s.to?.toISOString()]).toEqual([
      '2026-11-30T10:00:00.000Z',
      '2026-11-30T11:00:00.000Z',
    ]);
    expect(resolveIn(cwd, { bucket: 'b' })).toMatchObject({
      from: undefined,
      to: undefined,
      concurrency: 32,
    });
  });

  test.each<[string, GlobalFlags, Record<string, string>, RegExp]>([
    [
      'no source',
      {},
      {},
      /nothing to read: give --bucket <name> \(or set OTEL_EXPORTER_S3_BUCKET\)/,
    ],
    ['two sources', { bucket: 'b', dir: 'd' }, {}, /--dir and --bucket name two sources/],
    [
      'bad --since',
      { bucket: 'b', since: '1x' },
      {},
      /invalid --since "1x": expected a duration like 30s, 15m/,
    ],
    [
      '--since further back than any date',
      { bucket: 'b', since: '99999999999w' },
      {},
      /^invalid --since "99999999999w": expected a duration like 30s, 15m.*, of at most 100000000d$/,
    ],
    [
      '--since given a time',
      { bucket: 'b', since: '2026-12-01T10:00Z' },
      {},
      /^invalid --since "2026-12-01T10:00Z": --since takes a duration like 30s, 15m.*, back from now; for a range from a time: --from 2026-12-01T10:00Z$/,
    ],
    [
      '--from given a duration',
      { bucket: 'b', from: '2h' },
      {},
      /^invalid --from "2h": --from takes an ISO 8601 time.*; for the last 2h: --since 2h$/,
    ],
    [
      '--since and --from',
      { bucket: 'b', since: '1h', from: '2026-01-01' },
      {},
      /--since and --from/,
    ],
    [
      'bad --from',
      { bucket: 'b', from: 'noon' },
      {},
      /invalid --from "noon": expected an ISO 8601 time/,
    ],
    [
      'impossible --to with a zone',
      { bucket: 'b', to: '2026-02-30T00:00Z' },
      {},
      /invalid --to "2026-02-30T00:00Z": expected an ISO 8601 time like 2026-11-30T04:00:00Z/,
    ],
    [
      '--to before --from',
      { bucket: 'b', from: '2026-02-01', to: '2026-01-01' },
      {},
      /invalid --to "2026-01-01": it is before/,
    ],
    [
      'bad --concurrency',
      { bucket: 'b', concurrency: '0' },
      {},
      /^invalid flag --concurrency \(option concurrency\): 0 \(expected an integer count from 1 to 64\)$/,
    ],
    [
      'bad --endpoint',
      { bucket: 'b', endpoint: 'localhost:9000' },
      {},
      /^invalid flag --endpoint \(option endpoint\): "localhost:9000" \(expected an absolute http/,
    ],
    [
      'an --endpoint with a password',
      { bucket: 'b', endpoint: 'http://user:s3cr3t@127.0.0.1:9000' },
      {},
      /^invalid flag --endpoint \(option endpoint\): "http:\/\/\[redacted\]@127\.0\.0\.1:9000" \(expected an absolute http:\/\/ or https:\/\/ URL without user info \("user:password@"\)/,
    ],
    [
      'bad --prefix',
      { bucket: 'b', prefix: 'a/../b' },
      {},
      /^invalid flag --prefix \(option prefix\): "a\/..\/b" \(expected a key prefix/,
    ],
    [
      'bad bucket from env',
      {},
      { OTEL_EXPORTER_S3_BUCKET: 'a b' },
      /^invalid environment variable OTEL_EXPORTER_S3_BUCKET \(option bucket\): "a b" \(expected a bucket name/,
    ],
    [
      'bad endpoint from env',
      { bucket: 'b' },
      { OTEL_EXPORTER_S3_ENDPOINT: 'ftp://x' },
      /^invalid environment variable OTEL_EXPORTER_S3_ENDPOINT \(option endpoint\): "ftp:\/\/x"/,
    ],
    [
      'bad path style from env',
      { bucket: 'b' },
      { OTEL_EXPORTER_S3_FORCE_PATH_STYLE: 'yes' },
      /^invalid environment variable OTEL_EXPORTER_S3_FORCE_PATH_STYLE \(option forcePathStyle\): "yes" \(expected true or false\)$/,
    ],
    [
      'bad prefix from env',
      { bucket: 'b' },
      { OTEL_EXPORTER_S3_PREFIX: 'a//b' },
      /^invalid environment variable OTEL_EXPORTER_S3_PREFIX \(option prefix\): "a\/\/b"/,
    ],
    [
      'missing --config',
      { bucket: 'b', config: 'nope.json' },
      {},
      /cannot read config file .*nope\.json/,
    ],
  ])('%s is a usage error that names it', (_name, flags, env, message) => {
    expect(usageError(() => resolveIn(cwd, flags, env))).toMatch(message);
  });

  test('otel-s3 with a --since past any date exits 2, naming the flag', async () => {
    const run = await runCliInProcess(['ls', '--dir', cwd, '--since', '99999999999w'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/invalid --since "99999999999w": expected a duration/);
  });

  test('the environment sets path style as true or false', () => {
    const on = resolveIn(cwd, { bucket: 'b' }, { OTEL_EXPORTER_S3_FORCE_PATH_STYLE: 'TRUE' });
    expect(on.source).toMatchObject({ forcePathStyle: true });
    const flagWins = resolveIn(
      cwd,
      { bucket: 'b', forcePathStyle: false },
      { OTEL_EXPORTER_S3_FORCE_PATH_STYLE: 'true' },
    );
    expect(flagWins.source).toMatchObject({ forcePathStyle: false });
  });

  test.each<[string, string, RegExp]>([
    ['not JSON', '{bucket: b}', /not valid JSON/],
    ['not an object', '["b"]', /expected a JSON object/],
    [
      'an unknown key',
      '{"bucket":"b","buckt":"c"}',
      /unknown key "buckt"; allowed: bucket, prefix/,
    ],
    ['a secret', '{"bucket":"b","secretAccessKey":"x"}', /credentials never go in this file/],
    [
      'a wrong type',
      '{"bucket":"b","forcePathStyle":"yes"}',
      /^invalid "forcePathStyle" in .*\.otel-s3\.json \(option forcePathStyle\): "yes" \(expected true or false\)$/,
    ],
    [
      'an empty string',
      '{"bucket":""}',
      /^invalid "bucket" in .*\.otel-s3\.json \(option bucket\): "" \(expected a bucket name/,
    ],
    ['bucket and dir', '{"bucket":"b","dir":"d"}', /give "bucket" or "dir", not both/],
    [
      'a bad concurrency',
      '{"bucket":"b","concurrency":100}',
      /^invalid "concurrency" in .*\.otel-s3\.json \(option concurrency\): 100 \(expected an integer count from 1 to 64\)$/,
    ],
  ])('.otel-s3.json with %s is a usage error naming the file', async (_name, text, message) => {
    const dir = await mkdtemp(join(cwd, 'bad-'));
    await writeFile(join(dir, '.otel-s3.json'), text);
    const error = usageError(() => resolveIn(dir, {}));
    expect(error).toMatch(message);
    expect(error).toContain(join(dir, '.otel-s3.json'));
  });
});

describe('credentials', () => {
  let home: string;
  beforeEach(() => tempDir('otel-s3-profile-', (path) => (home = path)));

  test('an AWS_PROFILE that names no profile is named in the error, with the files looked in', async () => {
    await mkdir(join(home, '.aws'));
    await writeFile(join(home, '.aws', 'config'), '[profile other]\nregion = eu-west-1\n');
    await writeFile(
      join(home, '.aws', 'credentials'),
      '[other]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = secret\n',
    );
    // Nothing listens on port 9: no credentials, so no request is sent. No instance metadata
    // either: on a cloud runner it would answer with credentials, elsewhere its timeouts add
    // seconds to each of the three runs.
    const env = { AWS_PROFILE: 'nosuch', AWS_EC2_METADATA_DISABLED: 'true' };
    const args = [
      'ls',
      '--bucket',
      'b',
      '--endpoint',
      'http://127.0.0.1:9',
      '--region',
      'us-east-1',
    ];
    // `ls` and `check` read the same files and write nothing: both at once.
    const [run, check] = await Promise.all([
      runCliChild(args, { cwd: home, env }),
      runCliChild(['check', ...args.slice(1)], { cwd: home, env }),
    ]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(
      `AWS_PROFILE names the profile "nosuch", which is in neither ${join(home, '.aws', 'config')} nor ${join(home, '.aws', 'credentials')}`,
    );
    // `check` says it as the fix of each step that needed credentials.
    expect(check.stdout).toContain('AWS_PROFILE names the profile "nosuch", which is in neither');
    // A profile that is there but gives no credentials is named too, as found.
    await writeFile(join(home, '.aws', 'credentials'), '[nosuch]\n');
    const empty = await runCliChild(args, { cwd: home, env });
    expect(empty.code).toBe(3);
    expect(empty.stderr).toContain(
      `AWS_PROFILE names the profile "nosuch" (in ${join(home, '.aws', 'credentials')}), which gave no credentials`,
    );
  }, 90_000);
});
