import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT } from '../../../bench/lib/child.js';
import { acquirePyarrowPython } from '../../support/pyarrow-python.js';

/**
 * pyarrow as the compaction bench's peer (bench/children/pyarrow-compact.py) writes zstd at level
 * 3, as ours and DuckDB do, so that its bytes and time are compared at the same level. A Parquet
 * footer does not record the level: each column chunk's compressed size is compared with pyarrow
 * writing the same table at an explicit level 3 (and level 1, its default, to show that the
 * levels differ on this input).
 */

const run = promisify(execFile);
const CHILD = join(ROOT, 'bench/children/pyarrow-compact.py');

/** Two files of one hour: the columns the child sorts by, and random doubles. */
const INPUT = `
import os, random, sys
import pyarrow as pa, pyarrow.parquet as pq
hour = os.path.join(sys.argv[1], "hour=00")
os.makedirs(hour)
rng = random.Random(7)
attrs = pa.map_(pa.string(), pa.string())
for f in range(2):
    n = 5000
    pq.write_table(pa.table({
        "ServiceName": [f"svc-{rng.randrange(5)}" for _ in range(n)],
        "MetricName": [f"m-{rng.randrange(20)}" for _ in range(n)],
        "ResourceAttributes": pa.array([[("host", f"h{rng.randrange(3)}")] for _ in range(n)], attrs),
        "Attributes": pa.array([[("k", f"v{rng.randrange(10)}")] for _ in range(n)], attrs),
        "TimeUnix": pa.array([rng.randrange(10**9) for _ in range(n)], pa.int64()),
        "Value": [rng.random() * rng.choice([1, 100, 1e6]) for _ in range(n)],
    }), os.path.join(hour, f"{f}.parquet"))
`;

/** Column chunks' compressed sizes of a file, and of its table written at zstd levels 1 and 3. */
const SIZES = `
import io, json, sys
import pyarrow.parquet as pq
def sizes(source):
    m = pq.ParquetFile(source).metadata
    return [m.row_group(g).column(c).total_compressed_size
            for g in range(m.num_row_groups) for c in range(m.num_columns)]
table = pq.read_table(sys.argv[1])
out = {"written": sizes(sys.argv[1])}
for level in (1, 3):
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", compression_level=level, use_dictionary=True)
    buf.seek(0)
    out["level" + str(level)] = sizes(buf)
print(json.dumps(out))
`;

let dir: string;
let python: string | undefined;
let unavailable = '';

beforeAll(async () => {
  const found = await acquirePyarrowPython();
  if ('python' in found) python = found.python;
  else if (found.skip) unavailable = found.unavailable;
  else throw new Error(found.unavailable);
  dir = await mkdtemp(join(tmpdir(), 'otel-s3-pyarrow-compact-'));
  if (python !== undefined) await run(python, ['-c', INPUT, join(dir, 'in')]);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("pyarrow's compaction, the compaction bench's peer", () => {
  test('writes zstd at level 3, as ours and DuckDB', async (ctx) => {
    if (python === undefined) return ctx.skip(unavailable);
    await run(python, [CHILD, join(dir, 'in'), join(dir, 'out')]);
    const { stdout } = await run(python, ['-c', SIZES, join(dir, 'out', 'hour=00', 'out.parquet')]);
    const sizes = JSON.parse(stdout) as Record<'written' | 'level1' | 'level3', number[]>;
    expect(sizes.level1).not.toEqual(sizes.level3); // the input tells the two levels apart
    expect(sizes.written).toEqual(sizes.level3);
  });
});
