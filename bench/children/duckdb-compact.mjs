// The peer of `otel-s3 compact` in the compaction and lookups benches (bench/compaction.ts,
// bench/lake-lookups.ts): what a cron job running DuckDB does to compact a bucket's hours. For
// each hour directory under the input (a directory holding .parquet files), `COPY (SELECT * FROM
// read_parquet(...) ORDER BY <order>) TO <out>/<hour>.parquet`, at DuckDB's default Parquet
// settings. Arguments: input directory, output directory, threads, and the ORDER BY (metrics'
// service, metric, attribute sets and time by default). Preloaded with peak-rss.mjs.
import { mkdir, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const [
  input,
  output,
  threads,
  order = 'ServiceName, MetricName, ResourceAttributes, Attributes, TimeUnix',
] = process.argv.slice(2);
if (input === undefined || output === undefined || threads === undefined) {
  throw new Error('usage: duckdb-compact.mjs <input dir> <output dir> <threads> [order by]');
}
const hours = new Set();
for (const entry of await readdir(input, { recursive: true, withFileTypes: true })) {
  if (entry.isFile() && entry.name.endsWith('.parquet')) hours.add(entry.parentPath);
}
const db = await DuckDBInstance.create(':memory:', {
  threads,
  autoinstall_known_extensions: 'false',
});
const connection = await db.connect();
try {
  for (const hour of [...hours].sort()) {
    const out = join(output, relative(input, hour));
    await mkdir(out, { recursive: true });
    await connection.run(
      `COPY (SELECT * FROM read_parquet('${hour}/*.parquet') ORDER BY ${order}) ` +
        `TO '${join(out, 'out.parquet')}' (FORMAT parquet)`,
    );
  }
} finally {
  connection.closeSync();
  db.closeSync();
}
