import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../src/encoding/records.js';
import { flatEncoder, TRACE_ID_BLOOM_FILTERS } from '../../src/signals/flat-parquet/table.js';
import type { LogRecordLike } from '../../src/signals/logs/log-record.js';
import { logColumnBuilders } from '../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../src/signals/logs/parquet-schema.js';
import { spanColumnBuilders } from '../../src/signals/traces/parquet.js';
import { SPANS } from '../../src/signals/traces/parquet-schema.js';
import { duckdbRows } from '../support/duckdb.js';
import { pyarrowPython, testPyarrow } from '../support/parquet-engines.js';
import { prng } from '../support/prng.js';
import { handBuiltSpan } from '../support/readable-span.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * The split-block bloom filters the writer adds to the columns it is asked to
 * (FileWriterOptions.bloomFilters; compaction's outputs of spans and log records have one on
 * TraceId, docs/parquet.md), checked by readers we did not write: DuckDB's parquet_bloom_probe must
 * let every written id through in each row group that holds it and rule out nearly every absent
 * id (at about the false-positive probability the filters are sized for), and pyarrow, given the
 * same values and the same number of distinct values, must write byte for byte the same filter
 * (its header and bitset). That every engine still reads such files exactly is the property test's
 * (parquet-writer-engines.test.ts, which writes some of its files with a TraceId filter).
 */

const FPP = 0.01;
let dir: string;
beforeAll(() => tempDir('otel-s3-bloom-', (path) => (dir = path)));

const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');
/** Random 128-bit ids as lowercase hex, as the exporter writes TraceId. */
const ids = (random: () => number, n: number) =>
  Array.from({ length: n }, () =>
    Array.from({ length: 4 }, () => hex(Math.floor(random() * 2 ** 32), 8)).join(''),
  );

const SERVICES = ['cart', 'checkout', 'payment'];

/** `traces` traces of 1 to 8 spans each, over three services, their ids random. */
function spans(traceIds: string[], random: () => number) {
  return traceIds.flatMap((traceId, t) =>
    Array.from({ length: 1 + Math.floor(random() * 8) }, (_, i) =>
      handBuiltSpan({
        name: `op ${i % 5}`,
        kind: 1,
        spanContext: () => ({ traceId, spanId: hex(t * 16 + i + 1, 16), traceFlags: 1 }),
        startTime: [1_700_000_000 + t, i],
        endTime: [1_700_000_000 + t, i + 1_000 * (t % 7)],
        resource: { attributes: { 'service.name': SERVICES[(t + i) % 3] } },
        instrumentationScope: { name: 'http', version: '1' },
        attributes: {},
        status: { code: 0 },
        events: [],
        links: [],
      }),
    ),
  );
}

function logRecords(traceIds: string[]): LogRecordLike[] {
  return traceIds.flatMap((traceId, t) =>
    [0, 1].map((i) => ({
      resource: { attributes: { 'service.name': SERVICES[(t + i) % 3] } },
      instrumentationScope: { name: 'app' },
      hrTime: [1_700_000_000 + t, i] as const,
      hrTimeObserved: [1_700_000_000 + t, i] as const,
      spanContext: { traceId, spanId: hex(t * 2 + i + 1, 16), traceFlags: 1 },
      body: `record ${i}`,
      attributes: {},
      droppedAttributesCount: 0,
    })),
  );
}

const SIGNALS = [
  {
    name: 'spans',
    file: async (traceIds: string[], random: () => number, rowGroupRows: number) => {
      const builders = spanColumnBuilders();
      builders.append(spans(traceIds, random), newTally(false));
      return flatEncoder(SPANS)(builders.seal(), {
        compression: 'none',
        rowGroupRows,
        bloomFilters: TRACE_ID_BLOOM_FILTERS,
      });
    },
  },
  {
    name: 'log records',
    file: async (traceIds: string[], _random: () => number, rowGroupRows: number) => {
      const builders = logColumnBuilders();
      builders.append(logRecords(traceIds), newTally(false));
      return flatEncoder(LOG_RECORDS)(builders.seal(), {
        compression: 'none',
        rowGroupRows,
        bloomFilters: TRACE_ID_BLOOM_FILTERS,
      });
    },
  },
] as const;

/** DuckDB's answers for each id: per row group, whether its filter rules the id out. */
async function probes(path: string, values: string[]): Promise<Map<string, boolean[]>> {
  const rows = await duckdbRows(
    values
      .map(
        (v, i) =>
          `SELECT ${i} AS i, row_group_id, bloom_filter_excludes FROM parquet_bloom_probe('${path}', 'TraceId', '${v}')`,
      )
      .join(' UNION ALL '),
  );
  const out = new Map(values.map((v) => [v, [] as boolean[]]));
  for (const r of rows) {
    (out.get(values[Number(r.i)] as string) as boolean[])[Number(r.row_group_id)] =
      r.bloom_filter_excludes as boolean;
  }
  return out;
}

describe('TraceId bloom filters, probed by DuckDB', () => {
  test("compaction's filters: TraceId at 1 %", () => {
    expect(TRACE_ID_BLOOM_FILTERS).toEqual({ columns: ['TraceId'], fpp: FPP });
  });

  for (const [k, signal] of SIGNALS.entries()) {
    test(`${signal.name}: every id is let through where it is, about ${FPP * 100} % of 10,000 absent ids anywhere`, async () => {
      const random = prng(33 + k);
      const present = ids(random, 1_500);
      const path = join(dir, `${signal.name.replace(' ', '-')}.parquet`);
      // Row groups of 1,000 rows: several per file, an id in one or two of them.
      await writeFile(path, await signal.file(present, random, 1_000));

      const meta = await duckdbRows(
        `SELECT row_group_id, path_in_schema, bloom_filter_offset, bloom_filter_length
         FROM parquet_metadata('${path}') ORDER BY row_group_id, path_in_schema`,
      );
      const groups = new Set(meta.map((m) => m.row_group_id)).size;
      expect(groups).toBeGreaterThanOrEqual(3);
      // A filter on TraceId in every row group, on no other column.
      expect(
        meta.filter((m) => m.bloom_filter_offset !== null).map((m) => m.path_in_schema),
      ).toEqual(Array.from({ length: groups }, () => 'TraceId'));

      // Where each id is, from the rows DuckDB reads.
      const rows = await duckdbRows(
        `SELECT "TraceId" AS id, file_row_number // 1000 AS g
         FROM read_parquet('${path}', file_row_number = true)`,
      );
      const where = new Map<string, Set<number>>();
      for (const r of rows) {
        const at = where.get(r.id as string) ?? new Set<number>();
        at.add(Number(r.g));
        where.set(r.id as string, at);
      }
      expect(where.size).toBe(present.length);

      const got = await probes(path, present);
      let letThrough = 0;
      let elsewhere = 0;
      for (const id of present) {
        const excluded = got.get(id) as boolean[];
        expect(excluded.length).toBe(groups);
        for (const g of where.get(id) as Set<number>) {
          if (excluded[g] !== false)
            expect.fail(`${id} is in row group ${g}, whose filter excludes it`);
          letThrough++;
        }
        // Row groups that do not hold the id: false positives too.
        for (let g = 0; g < groups; g++) {
          if (!(where.get(id) as Set<number>).has(g)) elsewhere += excluded[g] === false ? 1 : 0;
        }
      }
      expect(letThrough).toBeGreaterThanOrEqual(present.length);

      const absent = ids(prng(1_000 + k), Math.ceil(10_000 / groups));
      const probed = await probes(path, absent);
      let passed = 0;
      for (const id of absent) passed += (probed.get(id) as boolean[]).filter((e) => !e).length;
      const rate = passed / (absent.length * groups);
      // Sized for 1 % at the distinct ids, rounded up to a power of two: at most 1 %, and a
      // filter with every bit set (which lets everything through) fails here.
      expect(rate).toBeLessThan(FPP * 1.5);
      expect(elsewhere / (present.length * (groups - 1))).toBeLessThan(FPP * 2);
      console.log(
        `${signal.name}: ${groups} row groups; absent ids let through ${passed} of ${absent.length * groups} probes (${(rate * 100).toFixed(2)} %)`,
      );
    }, 60_000);
  }
});

/**
 * pyarrow rewrites our file with its own bloom filters on the same columns, each sized for the
 * same number of distinct values at the same fpp, and returns, per column, both files' filter
 * bytes (header and bitset) in hex.
 */
const SAME_FILTERS = `
import sys, json
import pyarrow.parquet as pq
src, dst, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
table = pq.read_table(src)
pq.write_table(table, dst, compression='none', use_dictionary=False,
               bloom_filter_options={c: {'ndv': n, 'fpp': spec['fpp']} for c, n in spec['ndv'].items()})
def filters(path):
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 1, meta.num_row_groups
    group = meta.row_group(0)
    data = open(path, 'rb').read()
    out = {}
    for i in range(group.num_columns):
        c = group.column(i)
        if c.bloom_filter_offset is not None:
            out[c.path_in_schema] = data[c.bloom_filter_offset:c.bloom_filter_offset + c.bloom_filter_length].hex()
    return out
print(json.dumps({'ours': filters(src), 'pyarrow': filters(dst)}))
`;

describe('the same filters as pyarrow writes', () => {
  testPyarrow('spans: TraceId (PLAIN), SpanName (dictionary) and Duration (INT64)', async () => {
    const random = prng(7);
    const traceIds = ids(random, 700);
    const made = spans(traceIds, random);
    const builders = spanColumnBuilders();
    builders.append(made, newTally(false));
    const columns = ['TraceId', 'SpanName', 'Duration'];
    const file = await flatEncoder(SPANS)(builders.seal(), {
      compression: 'none',
      bloomFilters: { columns, fpp: FPP },
    });
    const path = join(dir, 'ours.parquet');
    await writeFile(path, file);
    const ndv = {
      TraceId: traceIds.length,
      SpanName: new Set(made.map((s) => s.name)).size,
      Duration: new Set(made.map((s) => s.endTime[1] - s.startTime[1])).size,
    };
    const { stdout } = await promisify(execFile)(pyarrowPython(), [
      '-c',
      SAME_FILTERS,
      path,
      join(dir, 'pyarrow.parquet'),
      JSON.stringify({ fpp: FPP, ndv }),
    ]);
    const { ours, pyarrow } = JSON.parse(stdout) as Record<string, Record<string, string>>;
    expect(Object.keys(ours ?? {}).sort()).toEqual([...columns].sort());
    for (const c of columns) {
      const a = ours?.[c] ?? '';
      const b = pyarrow?.[c] ?? '';
      expect(a.length, `${c}: filter bytes`).toBe(b.length);
      expect(a === b, `${c}: the same header and bitset as pyarrow's`).toBe(true);
    }
  });
});

describe('a filter at its largest', () => {
  test('more distinct ids than maxBytes holds at the fpp: a bitset of maxBytes, every id still let through (DuckDB)', async () => {
    const random = prng(5);
    const present = ids(random, 1_000);
    const builders = spanColumnBuilders();
    builders.append(spans(present, random), newTally(false));
    const path = join(dir, 'capped.parquet');
    await writeFile(
      path,
      await flatEncoder(SPANS)(builders.seal(), {
        compression: 'none',
        bloomFilters: { columns: ['TraceId'], maxBytes: 256 },
      }),
    );
    const [meta] = await duckdbRows(
      `SELECT bloom_filter_offset, bloom_filter_length FROM parquet_metadata('${path}')
       WHERE path_in_schema = 'TraceId'`,
    );
    // 1,000 ids at 1 % would take 2 KiB; the header (numBytes, three one-member unions) is 16 bytes.
    expect(Number(meta?.bloom_filter_length)).toBe(256 + 16);
    const got = await probes(path, present);
    expect([...got.values()].filter(([excluded]) => excluded !== false)).toEqual([]);
  });
});

describe('which columns can have one', () => {
  const builders = () => {
    const b = spanColumnBuilders();
    b.append(spans(ids(prng(1), 3), prng(2)), newTally(false));
    return b.seal();
  };
  for (const [bloomFilters, message] of [
    [{ columns: ['TraceID'] }, 'no leaf column TraceID'],
    [
      { columns: ['SpanAttributes.key_value.key'] },
      'SpanAttributes.key_value.key is not a required column',
    ],
    [
      { columns: ['Events.Name.list.element'] },
      'Events.Name.list.element is not a required column',
    ],
    [{ columns: ['TraceId'], fpp: 1 }, 'fpp must be between 0 and 1'],
    [{ columns: ['TraceId'], maxBytes: 1000 }, 'maxBytes must be a power of two'],
  ] as const) {
    test(`${JSON.stringify(bloomFilters)}: ${message}`, async () => {
      await expect(
        flatEncoder(SPANS)(builders(), { compression: 'none', bloomFilters }),
      ).rejects.toThrow(message);
    });
  }
});
