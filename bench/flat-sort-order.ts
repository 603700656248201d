/**
 * Which row order of a compacted hour of spans lets min/max statistics prune best, measured
 * with DuckDB alone (a few seconds, one thread): a synthetic hour of spans (TRACES traces of 3 to
 * 30 spans, each over 2 to 6 of 20 services of skewed sizes, 1 % errors) written sorted three
 * ways at two row group sizes; for each file, how many row groups a lookup by TraceId (200
 * sampled ids) and a filter by ServiceName (every service) must read by the row groups' min/max.
 * Not part of `npm run bench`: `npx tsx bench/flat-sort-order.ts [traces]`. Results and the
 * decision: docs/parquet.md, Compaction ("Order").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const TRACES = Number(process.argv[2] ?? 60_000);
const ORDERS = ['ServiceName, TraceId, Timestamp', 'ServiceName, Timestamp', 'TraceId, Timestamp'];

const dir = mkdtempSync(join(tmpdir(), 'otel-s3-sort-order-'));
const db = await DuckDBInstance.create(':memory:', {
  autoinstall_known_extensions: 'false',
  threads: '1',
});
const c = await db.connect();
const rows = async (sql: string) =>
  (await c.runAndReadAll(sql)).getRowObjectsJson() as Record<string, string>[];
try {
  await c.run(`CREATE TABLE spans AS
    WITH t AS (SELECT i AS trace, md5(i::VARCHAR) AS TraceId,
                 (hash(i) % 3_600_000_000)::BIGINT AS t0, 3 + (hash(i * 7) % 28) AS n
               FROM range(${TRACES}) r(i)),
         s AS (SELECT trace, TraceId, t0, j FROM t, LATERAL range(n::BIGINT) x(j))
    SELECT TraceId, substr(md5(trace::VARCHAR || '-' || j::VARCHAR), 1, 16) AS SpanId,
      'svc-' || lpad((floor(pow(20, (hash(trace * 31 + (j % (2 + hash(trace) % 5))) % 1000) / 1000.0)) - 1)::INT::VARCHAR, 2, '0') AS ServiceName,
      make_timestamp(1764806400000000 + t0 + j * 1000) AS Timestamp,
      CASE WHEN hash(trace * 13 + j) % 100 = 0 THEN 'Error' ELSE 'Unset' END AS StatusCode
    FROM s`);
  const [count] = await rows('SELECT count(*)::VARCHAR AS n FROM spans');
  console.log(`${count?.n} spans in ${TRACES} traces`);
  const ids = (await rows('SELECT TraceId FROM spans USING SAMPLE 200 ROWS (reservoir, 7)')).map(
    (r) => r.TraceId as string,
  );
  const services = (await rows('SELECT DISTINCT ServiceName FROM spans')).map(
    (r) => r.ServiceName as string,
  );
  console.log(
    'row group rows | order | row groups | read by a TraceId lookup | by a ServiceName filter',
  );
  for (const groupRows of [65_536, 16_384]) {
    for (const order of ORDERS) {
      const file = join(dir, `${groupRows}-${order.replace(/\W+/g, '_')}.parquet`);
      await c.run(
        `COPY (SELECT * FROM spans ORDER BY ${order}) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE ${groupRows})`,
      );
      const ranges = new Map<string, Record<string, [string, string]>>();
      for (const m of await rows(
        `SELECT row_group_id::VARCHAR AS g, path_in_schema AS col, stats_min_value AS lo,
           stats_max_value AS hi
         FROM parquet_metadata('${file}') WHERE path_in_schema IN ('TraceId', 'ServiceName')`,
      )) {
        const group = ranges.get(m.g as string) ?? {};
        group[m.col as string] = [m.lo as string, m.hi as string];
        ranges.set(m.g as string, group);
      }
      const groups = [...ranges.values()];
      const read = (column: string, values: string[]) =>
        (
          values
            .map(
              (v) =>
                groups.filter((g) => (g[column]?.[0] ?? '') <= v && v <= (g[column]?.[1] ?? ''))
                  .length,
            )
            .reduce((a, b) => a + b, 0) / values.length
        ).toFixed(1);
      console.log(
        `${groupRows} | ${order} | ${groups.length} | ${read('TraceId', ids)} | ${read('ServiceName', services)}`,
      );
    }
  }
} finally {
  c.closeSync();
  db.closeSync();
  rmSync(dir, { recursive: true, force: true });
}
