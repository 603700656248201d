/**
 * Child process of bench/parquet-writer.ts: makes one kind of body over and over and prints its
 * CPU per run (the whole process: this thread, libuv's pool, the collector's threads). A process
 * of its own, as small as the exporter's worker, so no other heap's collections are charged to
 * it. Argument: a file with the job, v8-serialized.
 */
import { readFileSync } from 'node:fs';
import { deserialize } from 'node:v8';
import {
  createPageCompressor,
  napiZstd,
  partsCompressor,
} from '../../src/compression/compressors.js';
import { encodeParquet } from '../../src/signals/metrics/parquet/encode.js';
import type { SealedColumns } from '../../src/signals/metrics/parquet/sealed.js';
import { hyparquetWriterFile, type Leaf } from '../lib/hyparquet-writer-file.js';
import { median } from '../lib/stats.js';

export type BodyJob =
  | { kind: 'json'; parts: Uint8Array[] }
  | { kind: 'parquet'; sealed: SealedColumns }
  | { kind: 'parquet-napi'; sealed: SealedColumns }
  | { kind: 'hyparquet-writer'; leaves: Leaf[]; rows: number };

export interface BodyResult {
  /** Median process CPU ms of one body. */
  millis: number;
  bytes: number;
}

const { job, samples, minSampleMillis, engine } = deserialize(
  readFileSync(process.argv[2] as string),
) as {
  job: BodyJob;
  samples: number;
  minSampleMillis: number;
  engine: 'node:zlib' | 'zstd-napi';
};

const processCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function maker(job: BodyJob): () => Promise<number> | number {
  switch (job.kind) {
    case 'json': {
      // As the exporter compresses an OTLP/JSON batch: one stream, one reused context.
      const zstd = partsCompressor({ compression: 'zstd', level: 3, engine });
      return async () => (await zstd.compress(job.parts)).length;
    }
    case 'parquet':
    case 'parquet-napi': {
      const { compressPage } = createPageCompressor({
        compression: 'zstd',
        level: 3,
        engine: job.kind === 'parquet' ? engine : 'zstd-napi',
      });
      return async () =>
        (await encodeParquet(job.sealed, { compression: 'zstd', compressPage })).length;
    }
    case 'hyparquet-writer': {
      const napi = napiZstd(3);
      return () =>
        hyparquetWriterFile(job.leaves, job.rows, (page) => napi.compress([page]) as Uint8Array)
          .length;
    }
  }
}

{
  const make = maker(job);
  // Warm-up until the compiler is done with the code: steady state, as JSON's path is measured.
  let bytes = 0;
  for (const start = processCpu(); processCpu() - start < 5 * minSampleMillis; )
    bytes = await make();
  const times: number[] = [];
  for (let s = 0; s < samples; s++) {
    const start = processCpu();
    let runs = 0;
    do {
      bytes = await make();
      runs++;
    } while (processCpu() - start < minSampleMillis);
    times.push((processCpu() - start) / runs);
  }
  console.log(JSON.stringify({ millis: median(times), bytes } satisfies BodyResult));
}
