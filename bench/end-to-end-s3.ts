/**
 * End to end into the real S3 server: realistic exports through export() → seal (8 MiB) →
 * compress → PutObject, timed from the first export to forceFlush() resolving, for zstd, gzip
 * and none. Stored bytes are checked against a listing of the bucket. Without S3_ENDPOINT the
 * table is skipped, and the compression ratio comes from a stub S3 (what would be stored).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { S3MetricExporter } from '../src/index.js';
import { exportAllTimed, shutdownLossless } from './lib/export-once.js';
import { fmtMiB, fmtNum, fmtPct, fmtRate } from './lib/format.js';
import { realisticSource } from './lib/realistic-metrics.js';
import { emitResult, parseArgs, progress, type Table, type Target } from './lib/result.js';
import {
  benchBucket,
  benchClient,
  listedBytes,
  removeBenchBucket,
  S3_SKIP_REASON,
  s3Env,
} from './lib/s3-env.js';
import { collectGarbage, median, summarize } from './lib/stats.js';
import { StubS3 } from './lib/stub-s3.js';

const args = parseArgs(process.argv.slice(2));
const SERIES = 5_000;
const EXPORTS = args.quick ? 12 : 24;
const ROUNDS = args.quick ? 1 : 3;
const BUFFER_BYTES = 256 * 1024 * 1024;
const COMPRESSIONS = ['zstd', 'gzip', 'none'] as const;
type Compression = (typeof COMPRESSIONS)[number];

progress(`end to end: collecting ${EXPORTS} exports of ${SERIES} series`);
const source = realisticSource(SERIES, 3);
const collections: ResourceMetrics[] = [];
for (let i = 0; i < EXPORTS; i++) {
  source.record();
  collections.push(await source.collect());
}
await source.shutdown();

interface E2e {
  seconds: number;
  points: number;
  rawBytes: number;
  storedBytes: number;
  listedBytes: number | null;
  objects: number;
}

async function run(
  compression: Compression,
  target: { bucket: string; client: S3Client } | StubS3,
  prefix: string,
  exports: ResourceMetrics[],
): Promise<E2e> {
  const real = !(target instanceof StubS3);
  const exporter = new S3MetricExporter({
    bucket: real ? target.bucket : 'bench',
    prefix,
    compression,
    flushTimeoutMillis: 120_000,
    // Room for the whole run: exports arrive faster than S3 stores uncompressed bodies, and this
    // measures throughput, not the memory bound (at the default 64 MiB, none would drop).
    maxBufferedBytes: BUFFER_BYTES,
    ...(real && s3 !== undefined
      ? { endpoint: s3.endpoint, region: s3.region, credentials: s3.credentials }
      : { s3Client: (target as StubS3).client }),
  });
  await collectGarbage();
  const seconds = await exportAllTimed(exporter, exports);
  const stats = await shutdownLossless(exporter, compression);
  return {
    seconds,
    points: stats.pointsUploaded,
    rawBytes: stats.rawBytesUploaded,
    storedBytes: stats.bytesUploaded,
    listedBytes: real ? await listedBytes(target.client, target.bucket, prefix) : null,
    objects: stats.batchesUploaded,
  };
}

const s3 = s3Env();
const results = new Map<Compression, E2e[]>();
let where: string;
if (s3 === undefined) {
  where = `stub S3 (${S3_SKIP_REASON})`;
  for (const c of COMPRESSIONS)
    results.set(c, [await run(c, new StubS3(), `stub/${c}`, collections)]);
} else {
  const client = benchClient(s3);
  const bucket = await benchBucket(client, 'e2e');
  where = `real S3 ${s3.endpoint}, bucket ${bucket}`;
  const target = { bucket, client };
  for (const c of COMPRESSIONS) await run(c, target, `warm-up/${c}`, collections.slice(0, 3));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? COMPRESSIONS : [...COMPRESSIONS].reverse();
    for (const c of order) {
      progress(`end to end: round ${round + 1}/${ROUNDS}, ${c}`);
      const list = results.get(c) ?? [];
      list.push(await run(c, target, `r${round}/${c}`, collections));
      results.set(c, list);
    }
  }
  await removeBenchBucket(client, bucket);
  client.destroy();
}

const table: Table = {
  columns: [
    'compression',
    'data points/s',
    'spread',
    'MB/s stored',
    'MB/s raw',
    'raw / stored',
    'objects',
    'stored (listed)',
  ],
  rows: [...results].map(([c, list]) => {
    const rate = summarize(list.map((r) => r.points / r.seconds));
    const first = list[0] as E2e;
    return [
      c,
      fmtRate(rate.median),
      fmtPct(rate.spreadPct),
      fmtNum(median(list.map((r) => r.storedBytes / 1e6 / r.seconds))),
      fmtNum(median(list.map((r) => r.rawBytes / 1e6 / r.seconds))),
      `${(first.rawBytes / first.storedBytes).toFixed(1)}×`,
      String(first.objects),
      first.listedBytes === null
        ? '(stub)'
        : `${fmtMiB(first.listedBytes)}${first.listedBytes === first.storedBytes ? ' = stats' : ' ≠ stats!'}`,
    ];
  }),
};
const zstd = results.get('zstd')?.[0] as E2e;
const ratio = zstd.rawBytes / zstd.storedBytes;
const targets: Target[] = [
  {
    name: `stored bytes with zstd vs raw OTLP JSON (${s3 === undefined ? 'stub S3' : 'real S3'})`,
    measured: `1/${ratio.toFixed(1)} (${fmtMiB(zstd.storedBytes)} of ${fmtMiB(zstd.rawBytes)})`,
    threshold: '≤ 1/12',
    pass: ratio >= 12,
  },
];
emitResult({
  suite: 'end-to-end',
  title: 'End to end into S3 (export → seal → compress → PutObject)',
  tables: s3 === undefined ? [] : [table],
  targets,
  notes: [
    s3 === undefined
      ? `Throughput table skipped: ${S3_SKIP_REASON}. The ratio target was measured with a stub S3 (the bytes that would be stored).`
      : `${where}; ${EXPORTS} exports of ${fmtNum(SERIES)} series (${fmtMiB(zstd.rawBytes)} raw OTLP JSON) per run, exporter defaults (8 MiB batches, 4 uploads in flight, level 3 / 6) but maxBufferedBytes ${fmtMiB(BUFFER_BYTES)} (room for the whole run), ${ROUNDS} round(s) after a warm-up, order alternated; timed from the first export() to forceFlush() resolving.`,
  ],
  data: { where, series: SERIES, exports: EXPORTS, results: Object.fromEntries(results) },
});
