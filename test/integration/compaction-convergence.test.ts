import { rm } from 'node:fs/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeEach, expect, test } from 'vitest';
import { compactMetrics, compactSpans } from '../../src/compact/index.js';
import type { CompactionReport } from '../../src/compact/report.js';
import {
  batchAt,
  compactOptions,
  duckdbPointTexts,
  exportBatches,
  listing,
  mirrorOf,
  pointsOf,
  sorted,
} from '../support/compaction-data.js';
import { duckdbSpanRows, exportSpanBatches } from '../support/flat-batches.js';
import { connection, describeS3, withS3 } from '../support/s3.js';
import { SETTLED_HOUR } from '../support/time.js';

/**
 * Repeated runs settle (docs/parquet.md, "Late data and repeated runs"): after one run an hour
 * has at most one output below half the target, and runs with nothing new write and delete
 * nothing. The first file of a merge used to be cut on a fixed guess of a row's bytes (25 a
 * point, about five times what a compacted point takes), so an hour of 21 KB at a 64 KiB target
 * became two small outputs, merged again by every run.
 */

const HOUR = SETTLED_HOUR;

describeS3('compaction converges: a run with nothing new writes nothing', () => {
  let client: S3Client;
  let bucket: string;
  let prefix: string;
  let prefixSeq = 0;
  const dirs: string[] = [];

  withS3('compaction-convergence', (s) => ({ client, bucket } = s));
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    prefix = `c${++prefixSeq}-${Date.now().toString(36)}`;
  });

  /** The Parquet objects (not the hour's lease or skip record). */
  const stored = async () =>
    (await listing(client, bucket, `${prefix}/`)).filter((o) => o.key.endsWith('.parquet'));
  const mirror = async () => {
    const dir = await mirrorOf(client, bucket, `${prefix}/`);
    dirs.push(dir);
    return dir;
  };

  /** Runs `compact` three times: the outputs of the first, then two runs that change nothing. */
  async function settles(compact: () => Promise<CompactionReport>, target: number) {
    await compact();
    const after = await stored();
    const outputs = after.filter((o) => o.key.endsWith('.compacted.parquet'));
    expect(outputs.length).toBeGreaterThan(0);
    expect(after).toEqual(outputs); // every input replaced and deleted
    const small = outputs.filter((o) => o.size < target / 2);
    expect(small.length, `outputs ${outputs.map((o) => o.size)}`).toBeLessThanOrEqual(1);
    for (let run = 2; run <= 3; run++) {
      const report = await compact();
      expect(report.partitions.map((p) => [p.written.length, p.deleted])).toEqual([]);
      expect(await stored()).toEqual(after);
    }
    return outputs;
  }

  test.each([
    ['one output', [400, 600, 400], 1],
    ['a full output and one smaller', [3000, 3000, 3000, 3000], 2],
  ])('metrics, exporter files into %s', async (_, series, files) => {
    const target = 64 * 1024;
    const batches = series.map((series, i) =>
      batchAt(`svc${i}`, HOUR + (i + 1) * 60_000, series, i + 1),
    );
    await exportBatches({ bucket, prefix, format: 'parquet' }, connection(), batches);
    const options = compactOptions(
      connection(),
      { bucket, prefix, fromMillis: HOUR },
      { targetFileBytes: target },
    );
    const outputs = await settles(() => compactMetrics(options), target);
    expect(outputs).toHaveLength(files);
    const points = await duckdbPointTexts(await mirror(), `${prefix}/year=*/**/*.parquet`);
    expect(sorted(points)).toEqual(pointsOf(batches));
  });

  test('spans, eight exporter files into two outputs', async () => {
    const batches = Array.from({ length: 8 }, (_, i) => ({
      service: i % 2 === 0 ? 'web' : 'api',
      minute: 3 + i * 7,
      items: 300,
      seed: i + 1,
    }));
    const recorded = await exportSpanBatches({ bucket, prefix }, connection(), HOUR, batches);
    const target = 64 * 1024;
    const options = compactOptions(
      connection(),
      { bucket, prefix, fromMillis: HOUR },
      { targetFileBytes: target },
    );
    const outputs = await settles(() => compactSpans(options), target);
    expect(outputs).toHaveLength(2);
    const dir = await mirror();
    const rows = await duckdbSpanRows(`${dir}/${prefix}/traces/**/*.parquet`);
    expect(sorted(rows)).toEqual(sorted(recorded));
  });
});
