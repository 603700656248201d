import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';

/**
 * The benches' PEAK_RSS line (bench/children/peak-rss.mjs, preloaded into the compactor they
 * measure) is the child's own peak, not its parent's. getrusage's maxRSS is not: Linux carries it
 * across fork and exec, so a compactor spawned by the lookups bench (about 500 MB resident) read
 * 515 MiB there, and read about 210 MiB on its own.
 */

const PARENT_MIB = 400;
/** A parent that holds PARENT_MIB MiB resident, then runs `node --import peak-rss.mjs -e 0`. */
const PARENT = `
const { spawnSync } = require('node:child_process');
const held = Buffer.alloc(${PARENT_MIB} * 1024 * 1024, 1);
const child = spawnSync(process.execPath, ['--import', './bench/children/peak-rss.mjs', '-e', '0'], { encoding: 'utf8' });
process.stdout.write(JSON.stringify({ held: held.length, stderr: child.stderr }));
`;

describe.runIf(process.platform === 'linux')('peak-rss.mjs', () => {
  test('a child spawned by a large parent reports its own peak', () => {
    const run = spawnSync(process.execPath, ['-e', PARENT], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    const { stderr } = JSON.parse(run.stdout) as { stderr: string };
    const line = stderr.split('\n').find((l) => l.startsWith('PEAK_RSS '));
    expect(line).toBeDefined();
    const { maxRssBytes } = JSON.parse((line as string).slice('PEAK_RSS '.length)) as {
      maxRssBytes: number;
    };
    // `node -e 0` is resident at about 40-60 MiB; the parent at more than PARENT_MIB.
    expect(maxRssBytes).toBeGreaterThan(10 * 2 ** 20);
    expect(maxRssBytes).toBeLessThan(150 * 2 ** 20);
  });
});
