import { constants } from 'node:buffer';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { beforeAll, describe, expect, test } from 'vitest';
import type { StatsReport } from '../../../src/cli/commands/stats.js';
import type { PointRecord } from '../../../src/cli/point-record.js';
import { type CliInProcessOptions, lines, runCliInProcess } from '../../support/cli-child.js';
import {
  EVIL,
  gzipBomb,
  nestedJsonObject,
  withEvilText,
  withGaugeTime,
  zstdBomb,
} from '../../support/hostile-objects.js';
import { encodeObject, keyAt, sampleMetrics, writeAtKey } from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0, timesAfter } from '../../support/time.js';

const MiB = 1024 * 1024;
const at = timesAfter(CLI_T0);

let root: string;
let rm1: ResourceMetrics;
const run = (args: string[], options: CliInProcessOptions = {}) =>
  runCliInProcess(args, { cwd: root, ...options });

beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-hostile-');
  rm1 = await sampleMetrics('svc');
  return () => removeDir(root);
});

describe('hostile objects', () => {
  const keys = {
    good1: keyAt('h', at(0), '.json.zst'),
    zstdBomb: keyAt('h', at(1), '.json.zst'),
    gzipBomb: keyAt('h', at(2), '.binpb.gz'),
    deep: keyAt('h', at(3), '.json'),
    badTime: keyAt('h', at(4), '.json'),
    large: keyAt('h', at(5), '.json'),
    good2: keyAt('h', at(6), '.binpb'),
  };
  beforeAll(async () => {
    const json = encodeObject(rm1, 'otlp-json', 'none');
    const files: Record<keyof typeof keys, Uint8Array> = {
      good1: encodeObject(rm1, 'otlp-json', 'zstd'),
      zstdBomb: await zstdBomb(256 * MiB),
      gzipBomb: await gzipBomb(16 * MiB),
      deep: nestedJsonObject(200_000),
      badTime: withGaugeTime(json, '1000000000000000000000000'),
      large: Buffer.concat([json.subarray(0, -1), Buffer.alloc(9 * MiB, ' '), Buffer.from('\n')]),
      good2: encodeObject(rm1, 'otlp-proto', 'none'),
    };
    for (const [name, bytes] of Object.entries(files)) {
      await writeAtKey(join(root, 'hostile'), keys[name as keyof typeof keys], bytes);
    }
  });
  const dir = ['--dir', 'hostile', '--prefix', 'h'];
  const args = [...dir, '--max-decompressed-bytes', '8MiB', '--max-object-bytes', '8MiB'];

  test('points: each skipped with its reason, naming the flag to raise; every good point printed; exit code 1', async () => {
    const { code, stdout, stderr } = await run(['points', ...args, '--format', 'jsonl']);
    expect(code).toBe(1);
    expect(lines(stdout)).toHaveLength(12);
    expect(lines(stderr)).toEqual([
      `otel-s3: cannot read ${keys.zstdBomb} (decompress): decompressed size is over the --max-decompressed-bytes limit of 8.0 MiB`,
      `otel-s3: cannot read ${keys.gzipBomb} (decompress): decompressed size is over the --max-decompressed-bytes limit of 8.0 MiB`,
      // 600,000 levels: more objects than a read builds under 8 MiB, refused before its depth.
      `otel-s3: cannot read ${keys.deep} (decode): 600008 JSON objects and arrays, more than the 524288 a read builds (a decompression bomb of empty values?)`,
      `otel-s3: cannot read ${keys.badTime} (decode): timeUnixNano "1000000000000000000000000" is not a time in nanoseconds since 1970 (an unsigned 64-bit integer)`,
      `otel-s3: cannot read ${keys.large} (fetch): stored size 9.0 MiB is over the --max-object-bytes limit of 8.0 MiB`,
      'otel-s3: 5 objects of 7 objects could not be read and were skipped (see above)',
    ]);
  });

  test('stats: the same objects skipped and counted, the good ones totalled', async () => {
    const { code, stdout } = await run(['stats', ...args, '--format', 'json']);
    expect(code).toBe(1);
    expect(JSON.parse(stdout) as StatsReport).toMatchObject({
      objects: 2,
      objectsUnreadable: 5,
      dataPoints: 12,
    });
  });

  test('by default: the stored limit follows the decompressed one, 64 MiB', async () => {
    const { stderr } = await run(['points', ...dir]);
    expect(stderr).toContain(
      `cannot read ${keys.zstdBomb} (decompress): decompressed size is over the --max-decompressed-bytes limit of 64.0 MiB`,
    );
    const { stderr: smaller } = await run(['points', ...dir, '--max-decompressed-bytes', '4m']);
    expect(smaller).toContain(
      `cannot read ${keys.deep} (fetch): stored size 5.3 MiB is over the --max-object-bytes limit of 4.0 MiB`,
    );
  });
});

describe('size flags', () => {
  const misspelled = 'a size in bytes like 134217728, 512KiB, 128MiB or 2GiB';
  // A size that is one, but not a whole number of bytes in range, is out of range: not misspelled.
  const outOfRange = `a whole number of bytes from 1 to ${constants.MAX_LENGTH} (the largest Buffer)`;
  test.each([
    [
      ['--max-decompressed-bytes', '64MB'],
      `--max-decompressed-bytes (option maxDecompressedBytes): "64MB" (expected ${misspelled})`,
    ],
    [
      ['--max-object-bytes', '0'],
      `--max-object-bytes (option maxObjectBytes): 0 (expected ${outOfRange})`,
    ],
    [
      ['--max-object-bytes', '1.5'],
      `--max-object-bytes (option maxObjectBytes): 1.5 (expected ${outOfRange})`,
    ],
  ])('%j is a usage error naming the flag, the value and what is allowed', async (flags, what) => {
    const { code, stderr } = await run(['ls', '--dir', '.', ...flags]);
    expect(code).toBe(2);
    expect(stderr).toBe(`otel-s3: invalid flag ${what}\n`);
  });

  test('.otel-s3.json sets them as bytes or as a size; flags win', async () => {
    const cwd = await mkdtemp(join(root, 'config-'));
    await writeFile(
      join(cwd, '.otel-s3.json'),
      JSON.stringify({ dir: '.', maxObjectBytes: 1000, maxDecompressedBytes: 'lots' }),
    );
    const bad = await run(['ls'], { cwd });
    expect([bad.code, bad.stderr]).toEqual([
      2,
      `otel-s3: invalid "maxDecompressedBytes" in ${join(cwd, '.otel-s3.json')} (option maxDecompressedBytes): "lots" (expected a size in bytes like 134217728, 512KiB, 128MiB or 2GiB)\n`,
    ]);
    const good = await run(['ls', '--max-decompressed-bytes', '1m'], { cwd });
    // Accepted; the directory holds only the config file, so there is nothing to read (5).
    expect([good.code, good.stderr]).toEqual([5, expect.stringContaining('nothing readable')]);
  });
});

describe('control characters from the bucket never reach a terminal raw', () => {
  /** Anything a terminal acts on: C0 but newline, DEL, C1, bidi controls. */
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
  // Keys in the layout cannot hold control characters (the prefix, filePrefix and template
  // refuse them, attribute values are sanitized): they reach the output only as ignored keys
  // and the deeper prefixes named in the note about them.
  const brokenKey = keyAt('e', at(1), '.json');
  const evilKey = keyAt('e', at(3), '.json').replace('metrics_', '\u001b[31mmetrics_');
  beforeAll(async () => {
    const dir = join(root, 'evil');
    await writeAtKey(
      dir,
      keyAt('e', at(0), '.json'),
      withEvilText(encodeObject(rm1, 'otlp-json', 'none')),
    );
    await writeAtKey(dir, brokenKey, Buffer.from('not json'));
    await writeAtKey(dir, evilKey, Buffer.from('not json'));
    // Under a deeper prefix: named in the note about ignored keys.
    await writeAtKey(dir, keyAt('e/\u001b[2J', at(2), '.json'), Buffer.from('{}\n'));
  });
  const evil = ['--dir', 'evil', '--prefix', 'e'];

  test('points table: names and values escaped, one row per line; the stderr note escapes the key', async () => {
    const { stdout, stderr } = await run(['points', ...evil], { stdoutTTY: true });
    expect(stdout).not.toMatch(RAW);
    expect(stderr).not.toMatch(RAW);
    const rows = lines(stdout).filter((l) => l.includes('evil'));
    expect(rows).toHaveLength(2); // the counter's two points, one line each
    expect(rows[0]).toContain('evil\\x1b[2Jname\\u202e');
    expect(rows[0]).toContain('k\\x1b]0;pwned\\x07=v\\nnext\\x9b31m');
    expect(stderr).toContain(`cannot read ${brokenKey} (decode): invalid JSON`);
    expect(stderr).toContain('ignored 2 keys');
  });

  test('jsonl, cat and ls --format jsonl: JSON with every such character escaped, the same values', async () => {
    const points = await run(['points', ...evil, '--format', 'jsonl']);
    const cat = await run(['cat', ...evil]);
    const ls = await run(['ls', ...evil, '--format', 'jsonl']);
    for (const out of [points.stdout, cat.stdout, ls.stdout]) expect(out).not.toMatch(RAW);
    const records = lines(points.stdout).map((l) => JSON.parse(l) as PointRecord);
    const counter = records.filter((r) => r.metric === EVIL.metric);
    expect(counter.map((r) => r.attributes)).toEqual([
      { [EVIL.key]: EVIL.value },
      { [EVIL.key]: EVIL.value },
    ]);
    expect(cat.stdout).toContain('evil\\u001b[2Jname\\u202e');
    expect(lines(ls.stdout).map((l) => (JSON.parse(l) as { key: string }).key)).toContain(
      brokenKey,
    );
  });

  test('ls text and stats text escape keys and metric names', async () => {
    const ls = await run(['ls', ...evil]);
    const stats = await run(['stats', ...evil]);
    for (const out of [ls.stdout, ls.stderr, stats.stdout, stats.stderr])
      expect(out).not.toMatch(RAW);
    expect(ls.stderr).toContain('objects are under --prefix e/\\x1b[2J');
    expect(stats.stdout).toMatch(/^evil\\x1b\[2Jname\\u202e\s+counter\s+1\s+2$/m);
    // Escaped before the columns were measured: they still line up.
    const table = lines(stats.stdout);
    const header = table.find((l) => l.startsWith('metric')) ?? '';
    const row = table.find((l) => l.startsWith('evil')) ?? '';
    expect(row.indexOf('counter')).toBe(header.indexOf('type'));
  });

  test('csv: RFC 4180 (fields with a quote, comma or line break quoted), values kept as they are', async () => {
    const { stdout } = await run(['points', ...evil, '--format', 'csv']);
    const row = stdout
      .split('\r\n')
      .join('\n')
      .split('\n')
      .find((l) => l.includes('evil'));
    // The metric column holds the name verbatim; the attributes column is quoted JSON text.
    expect(row).toContain(`,${EVIL.metric},counter,`);
    expect(row).toContain(`"{""${JSON.stringify(EVIL.key).slice(1, -1)}"":""v\\nnext\u009b31m""}"`);
  });

  test('csv on a terminal: the same fields, their control characters shown escaped', async () => {
    const { stdout } = await run(['points', ...evil, '--format', 'csv'], { stdoutTTY: true });
    expect(stdout).not.toMatch(RAW);
    expect(stdout).toContain(',evil\\x1b[2Jname\\u202e,counter,');
    expect(stdout).toContain('""v\\nnext\\x9b31m""');
  });
});
