/**
 * Child process of the compaction bench: compacts a local directory (DIR, PREFIX, TARGET_BYTES)
 * with compactMetrics, in a process of its own, so that its peak RSS is the compactor's alone.
 * Prints one JSON line: wall and CPU time, peak RSS, points read, outputs written.
 */
import { compactMetrics } from '../../src/compact/index.js';

const env = process.env;
const cpu = process.cpuUsage();
const started = performance.now();
const report = await compactMetrics({
  dir: env.DIR as string,
  prefix: env.PREFIX as string,
  format: 'parquet',
  settleMillis: 0,
  ...(env.TARGET_BYTES === undefined ? {} : { targetFileBytes: Number(env.TARGET_BYTES) }),
});
const millis = performance.now() - started;
const used = process.cpuUsage(cpu);
const partitions = report.partitions;
console.log(
  JSON.stringify({
    millis,
    cpuMillis: (used.user + used.system) / 1000,
    // resourceUsage().maxRSS is in KiB: the process's peak resident set, startup included.
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    points: partitions.reduce((n, p) => n + p.read.points, 0),
    objectsRead: partitions.reduce((n, p) => n + p.read.objects, 0),
    outputs: partitions.reduce((n, p) => n + p.written.length, 0),
    failed: partitions
      .filter((p) => p.status !== 'compacted')
      .map((p) => `${p.partition}: ${p.status} ${p.error ?? ''}`),
  }),
);
