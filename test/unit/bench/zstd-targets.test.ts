import { describe, expect, test } from 'vitest';
import type { Contender, EngineRun } from '../../../bench/children/zstd-engine.js';
import { verdict } from '../../../bench/lib/result.js';
import { type WorkerRun, zstdEngineTargets } from '../../../bench/lib/zstd-targets.js';
import type { ZstdEngine } from '../../../src/compression/zstd-engine.js';

/**
 * The zstd-engines suite's targets (bench/lib/zstd-targets.ts): each shipped engine's memory and
 * stall targets are in the result on every runtime, SKIP with the reason where the engine is
 * missing, so that a run without an engine does not look complete.
 */

const MiB = 1024 * 1024;
const memory = { rss: 100 * MiB, heapUsed: 10 * MiB, external: 5 * MiB, arrayBuffers: 2 * MiB };

function engineRun(contender: Contender): EngineRun {
  return {
    contender,
    batches: 200,
    batchBytes: 8 * MiB,
    medianMillis: 40,
    maxMillis: 60,
    totalMillis: 8_000,
    cpuMillisPerBatch: 40,
    outputBytes: MiB,
    maxStallMillis: 45,
    at100: memory,
    atEnd: memory,
    series: [],
    peakRss: 120 * MiB,
    roundTrip: true,
  };
}
const workerRun = (engine: ZstdEngine): WorkerRun => ({
  engine,
  millis: [50, 50],
  stalls: [1, 2],
  cpuMillis: 50,
});

const NAPI: Contender[] = ['napi-reused', 'napi-new-per-batch'];
const ZLIB: Contender[] = ['zlib-sync', 'zlib-stream'];

function targets(napi: boolean, builtIn: boolean) {
  const contenders = [...(napi ? NAPI : []), ...(builtIn ? ZLIB : [])];
  return zstdEngineTargets({
    available: contenders.length,
    present: { 'zstd-napi': napi, 'node:zlib': builtIn },
    batches: 200,
    runs: contenders.map(engineRun),
    workerRuns: [
      ...(napi ? [workerRun('zstd-napi')] : []),
      ...(builtIn ? [workerRun('node:zlib')] : []),
    ],
    zlibRatio: napi && builtIn ? 1.2 : undefined,
  });
}
/** Each target's verdict, by the engine its name is about. */
const verdicts = (ts: ReturnType<typeof targets>, about: RegExp) =>
  ts.filter((t) => about.test(t.name)).map((t) => verdict(t.pass));

describe('the zstd-engines targets', () => {
  test('with both engines: memory and stall of each, every one evaluated', () => {
    const ts = targets(true, true);
    expect(verdicts(ts, /native memory/)).toEqual(['PASS', 'PASS']);
    expect(verdicts(ts, /main thread stall/)).toEqual(['PASS', 'PASS']);
  });

  test('without zstd-napi: its memory and stall targets are SKIP, naming why', () => {
    const ts = targets(false, true);
    expect(verdicts(ts, /zstd-napi engine: native memory/)).toEqual(['SKIP']);
    expect(verdicts(ts, /node:zlib engine: native memory/)).toEqual(['PASS']);
    expect(verdicts(ts, /main thread stall.*\(zstd-napi\)/)).toEqual(['SKIP']);
    expect(verdicts(ts, /main thread stall.*\(node:zlib\)/)).toEqual(['PASS']);
    const skipped = ts.filter(
      (t) => t.pass === null && /zstd-napi engine|\(zstd-napi\)/.test(t.name),
    );
    for (const t of skipped) expect(t.measured).toMatch(/zstd-napi does not load/);
  });

  test('without node:zlib zstd: its memory and stall targets are SKIP, naming why', () => {
    const ts = targets(true, false);
    expect(verdicts(ts, /node:zlib engine: native memory/)).toEqual(['SKIP']);
    expect(verdicts(ts, /main thread stall.*\(node:zlib\)/)).toEqual(['SKIP']);
    const skipped = ts.filter(
      (t) => t.pass === null && /node:zlib engine|\(node:zlib\)/.test(t.name),
    );
    for (const t of skipped) expect(t.measured).toMatch(/node:zlib has no zstd/);
  });

  test('with no engine: every target is there, none passes', () => {
    const ts = targets(false, false);
    expect(verdicts(ts, /native memory|main thread stall/)).toEqual([
      'SKIP',
      'SKIP',
      'SKIP',
      'SKIP',
    ]);
    expect(ts.every((t) => t.pass !== true)).toBe(true);
  });

  test('an engine present whose measurement is missing: FAIL, not SKIP', () => {
    const ts = zstdEngineTargets({
      available: 4,
      present: { 'zstd-napi': true, 'node:zlib': true },
      batches: 200,
      runs: [...NAPI, ...ZLIB].map(engineRun),
      workerRuns: [workerRun('zstd-napi')],
      zlibRatio: 1.2,
    });
    expect(verdicts(ts, /main thread stall.*\(node:zlib\)/)).toEqual(['FAIL']);
  });
});
