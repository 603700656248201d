// The peer of `otel-s3 compact` in the compaction and lookups benches (bench/compaction.ts,
// bench/lake-lookups.ts): what a cron job running DuckDB does to compact a bucket's hours. For
// each hour directory under the input (a directory holding .parquet files), `COPY (SELECT * FROM
// read_parquet(...) ORDER BY <order>) TO <out>/<hour>.parquet`, at DuckDB's default Parquet
// settings but the codec: zstd at level 3 (ours: a fair comparison of bytes and time) or snappy
// (DuckDB's default). Arguments: input directory, output directory, threads, codec, and the
// ORDER BY (metrics' service, metric, attribute sets and time by default). Preloaded with
// peak-rss.mjs.
import { mkdir, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const [
  input,
  output,
  threads,
  compression,
  order = 'ServiceName, MetricName, ResourceAttributes, Attributes, TimeUnix',
] = process.argv.slice(2);
if (
  input === undefined ||
  output === undefined ||
  threads === undefined ||
  compression === undefined
) {
  throw new Error(
    'usage: duckdb-compact.mjs <input dir> <output dir> <threads> <zstd|snappy> [order by]',
  );
}
/** The COPY options of each codec: zstd at our level (3), snappy as DuckDB's default writes it. */
const CODECS = {
  zstd: 'COMPRESSION zstd, COMPRESSION_LEVEL 3',
  snappy: 'COMPRESSION snappy',
};
const codec = CODECS[/** @type {keyof typeof CODECS} */ (compression)];
if (!Object.hasOwn(CODECS, compression) || codec === undefined) {
  throw new Error(`compression '${compression}' is not allowed: zstd or snappy`);
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
        `TO '${join(out, 'out.parquet')}' (FORMAT parquet, ${codec})`,
    );
  }
} finally {
  connection.closeSync();
  db.closeSync();
}
