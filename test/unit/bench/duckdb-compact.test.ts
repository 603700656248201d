import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT } from '../../../bench/lib/child.js';
import { duckdbRows } from '../../support/duckdb.js';

/**
 * DuckDB as the compaction benches' peer (bench/children/duckdb-compact.mjs) writes the codec it
 * is told, so that its bytes and time are compared with ours at the same codec (zstd level 3).
 */

const run = promisify(execFile);
const CHILD = join(ROOT, 'bench/children/duckdb-compact.mjs');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'otel-s3-duckdb-compact-'));
  await mkdir(join(dir, 'in', 'hour=00'), { recursive: true });
  for (const f of ['a', 'b']) {
    await duckdbRows(
      `COPY (SELECT range AS x, 'v' || range AS y FROM range(1000)) TO '${join(dir, 'in', 'hour=00', `${f}.parquet`)}' (FORMAT parquet)`,
    );
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const codecs = async (out: string) =>
  (
    await duckdbRows(
      `SELECT DISTINCT compression FROM parquet_metadata('${out}/**/*.parquet') ORDER BY 1`,
    )
  ).map((r) => r.compression);

describe("DuckDB's compaction, the benches' peer", () => {
  test('writes zstd when told, every row kept', async () => {
    const out = join(dir, 'zstd');
    await run(process.execPath, [CHILD, join(dir, 'in'), out, '1', 'zstd', 'x, y']);
    expect(await codecs(out)).toEqual(['ZSTD']);
    expect(await duckdbRows(`SELECT count(*)::INTEGER AS n FROM '${out}/**/*.parquet'`)).toEqual([
      { n: 2000 },
    ]);
  });

  test('writes snappy when told', async () => {
    const out = join(dir, 'snappy');
    await run(process.execPath, [CHILD, join(dir, 'in'), out, '1', 'snappy', 'x, y']);
    expect(await codecs(out)).toEqual(['SNAPPY']);
  });

  test('another codec: a clear error naming the argument and what is allowed', async () => {
    await expect(
      run(process.execPath, [CHILD, join(dir, 'in'), join(dir, 'lz4'), '1', 'lz4']),
    ).rejects.toThrow("compression 'lz4' is not allowed: zstd or snappy");
  });
});
