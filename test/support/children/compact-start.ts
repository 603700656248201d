/**
 * What `otel-s3 compact --dir` loads: the CLI, its compact command, and the compactor itself
 * (what the compaction worker imports) run for every signal on an empty directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import '../../../src/cli/main.js';
import '../../../src/cli/commands/compact.js';
import { compactionOf } from '../../../src/compact/compact-metrics.js';

const dir = mkdtempSync(join(tmpdir(), 'otel-s3-compact-start-'));
try {
  const partitions: number[] = [];
  for (const signal of ['metrics', 'traces', 'logs'] as const) {
    const report = await compactionOf(signal)({ dir, prefix: 'p', settleMillis: 0 });
    partitions.push(report.partitions.length);
  }
  console.log(JSON.stringify({ partitions }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
