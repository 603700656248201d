import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { afterAll, expect, test } from 'vitest';
import { compactSpans } from '../../src/compact/index.js';
import { S3LogRecordExporter } from '../../src/index.js';
import {
  type LogRecordRow,
  logRecordRows,
  readLogRecords,
  readSpans,
  spanRows,
} from '../../src/reader.js';
import { compactOptions, listing, mirrorOf, putRaw } from '../support/compaction-data.js';
import { exportSpanBatches } from '../support/flat-batches.js';
import { pyarrowPython, testPyarrow } from '../support/parquet-engines.js';
import { connection, describeS3, withS3 } from '../support/s3.js';
import { signalKeyAt } from '../support/signal-fixtures.js';
import { makeTempDir } from '../support/temp-dir.js';
import { SETTLED_HOUR } from '../support/time.js';

/**
 * A string of tens of MiB in a file: the writer's min/max statistics once held it whole, so the
 * footer was as large, over the reader's 16 MiB, and the file unreadable (an exporter's log of a
 * 20 MiB body: 0 of 2 rows read), or a compaction's output refused on its read-back, the hour
 * failed on every run (a 40 MiB SpanName). Now such values are left out of the statistics.
 */

const MiB = 2 ** 20;
const run = promisify(execFile);

/** A stored object's bytes. */
async function objectBytes(client: S3Client, bucket: string, key: string): Promise<Uint8Array> {
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await got.Body?.transformToByteArray()) ?? new Uint8Array();
}

/** A Parquet file's footer length, from its last 8 bytes. */
const footerBytes = (file: Uint8Array) =>
  new DataView(file.buffer, file.byteOffset).getUint32(file.length - 8, true);

/** pyarrow: `src` with the SpanName of its first row made `bytes` long, written to `dst`. */
const LONG_SPAN_NAME = `
import sys, pyarrow as pa, pyarrow.parquet as pq
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = pq.read_table(src)
i = t.schema.get_field_index('SpanName')
names = t.column('SpanName').to_pylist()
names[0] = 'x' * n
t = t.set_column(i, t.schema.field(i), pa.array(names, t.schema.field(i).type))
pq.write_table(t, dst, compression='zstd')
`;

/** pyarrow: a file's rows, its longest SpanName and its footer's length, as JSON. */
const SUMMARY = `
import sys, json, pyarrow.compute as pc, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(json.dumps({'rows': t.num_rows,
  'longest': pc.max(pc.binary_length(t.column('SpanName'))).as_py(),
  'footer': pq.read_metadata(sys.argv[1]).serialized_size}))
`;

describeS3('a string of tens of MiB in a Parquet file', () => {
  let client: S3Client;
  let bucket: string;
  const dirs: string[] = [];
  withS3('parquet-long-strings', (s) => ({ client, bucket } = s));
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('an exported log record of a 20 MiB body is read back whole', async () => {
    const prefix = `body-${Date.now().toString(36)}`;
    const s3 = new S3LogRecordExporter({ ...connection(), bucket, prefix, format: 'parquet' });
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'long' }),
      processors: [new BatchLogRecordProcessor({ exporter: s3 })],
    });
    const body = 'y'.repeat(20 * MiB);
    provider.getLogger('app').emit({ body: 'short' });
    provider.getLogger('app').emit({ body });
    await provider.forceFlush();
    await provider.shutdown();
    const objects = await listing(client, bucket, `${prefix}/`);
    expect(objects).toHaveLength(1);
    const file = await objectBytes(client, bucket, objects[0]?.key as string);
    // The footer holds no value of the body: it was 20,973,221 bytes.
    expect(footerBytes(file)).toBeLessThan(64 * 1024);

    const problems: string[] = [];
    const rows: LogRecordRow[] = [];
    const stream = readLogRecords({
      bucket,
      ...connection(),
      prefix,
      onError: (p) => problems.push(p.error.message),
    });
    for await (const o of stream) rows.push(...logRecordRows(o.request));
    expect(problems).toEqual([]);
    expect(rows.map((r) => r.body).sort()).toEqual(['short', body].sort());
  }, 120_000);

  testPyarrow(
    'an hour holding a 40 MiB SpanName (written by pyarrow) compacts',
    async () => {
      const prefix = `name-${Date.now().toString(36)}`;
      const batches = [
        { service: 'api', minute: 5, items: 9, seed: 1 },
        { service: 'web', minute: 15, items: 6, seed: 2 },
      ];
      await exportSpanBatches({ bucket, prefix }, connection(), SETTLED_HOUR, batches);
      const dir = await makeTempDir('otel-s3-long-strings-');
      dirs.push(dir);
      const [first] = await listing(client, bucket, `${prefix}/traces/`);
      await writeFile(
        join(dir, 'src.parquet'),
        await objectBytes(client, bucket, first?.key ?? ''),
      );
      const long = join(dir, 'long.parquet');
      await run(pyarrowPython(), [
        '-c',
        LONG_SPAN_NAME,
        join(dir, 'src.parquet'),
        long,
        `${40 * MiB}`,
      ]);
      const at = new Date(SETTLED_HOUR + 30 * 60_000);
      await putRaw(
        client,
        bucket,
        signalKeyAt('traces', 'parquet', prefix, at, '.parquet'),
        await readFile(long),
      );

      const report = await compactSpans(
        compactOptions(connection(), { bucket, prefix, fromMillis: SETTLED_HOUR }),
      );
      expect(report.partitions.map((p) => [p.status, p.error, p.skipped])).toEqual([
        ['compacted', undefined, []],
      ]);
      const written = (await listing(client, bucket, `${prefix}/traces/`)).map((o) => o.key);
      expect(written).toHaveLength(1);
      expect(written[0]).toMatch(/\.compacted\.parquet$/);

      // pyarrow reads the output: every span (9 + 6, and the 9 again with one name long), the
      // long name whole, a footer without it.
      const mirror = await mirrorOf(client, bucket, `${prefix}/`);
      dirs.push(mirror);
      const { stdout } = await run(pyarrowPython(), [
        '-c',
        SUMMARY,
        join(mirror, written[0] ?? ''),
      ]);
      const summary = JSON.parse(stdout) as { rows: number; longest: number; footer: number };
      expect(summary.rows).toBe(24);
      expect(summary.longest).toBe(40 * MiB);
      expect(summary.footer).toBeLessThan(64 * 1024);
      // So does this package's reader.
      let longest = 0;
      let rows = 0;
      for await (const o of readSpans({ bucket, ...connection(), prefix })) {
        for (const r of spanRows(o.request)) {
          rows++;
          longest = Math.max(longest, r.name.length);
        }
      }
      expect([rows, longest]).toEqual([24, 40 * MiB]);
    },
    300_000,
  );
});
