/**
 * The zstd-engines suite's targets (bench/zstd-engines.ts), from its measurements: the round trip
 * of every contender, each shipped engine's native memory, the CPU ratio of node:zlib to
 * zstd-napi, and the main thread's stall while the body maker's worker compresses.
 */

import type { ZstdEngine } from '../../src/compression/zstd-engine.js';
import type { EngineRun } from '../children/zstd-engine.js';
import { fmtMiB, fmtMs, MiB } from './format.js';
import { MEMORY_FIELDS } from './memory.js';
import { everyChecked, type Target } from './result.js';
import { quantile } from './stats.js';

/** Growth below this is allocator noise, whatever the percentage says. */
const NOISE_BYTES = MiB;

/** One engine through the exporter's body maker. */
export interface WorkerRun {
  engine: ZstdEngine;
  millis: number[];
  stalls: number[];
  cpuMillis: number;
}

export type MemoryField = (typeof MEMORY_FIELDS)[number];
/** The native figures (every one but the JavaScript heap). */
export const NATIVE_FIELDS = MEMORY_FIELDS.filter((f) => f !== 'heapUsed');
export const grew = (r: EngineRun, f: MemoryField) => r.atEnd[f] - r.at100[f];
export const flat = (r: EngineRun, f: MemoryField) =>
  grew(r, f) <= Math.max(0.1 * r.at100[f], NOISE_BYTES);
export const signed = (bytes: number) => `${bytes >= 0 ? '+' : ''}${fmtMiB(bytes)}`;

/** The shipped form of each engine: its memory run's contender. */
const SHIPPED = [
  ['napi-reused', 'zstd-napi'],
  ['zlib-stream', 'node:zlib'],
] as const satisfies readonly (readonly [EngineRun['contender'], ZstdEngine])[];

const ABSENT: Record<ZstdEngine, string> = {
  'zstd-napi': 'zstd-napi does not load here',
  'node:zlib': `node:zlib has no zstd here (Node ${process.version}; zstd from 22.15)`,
};

export interface ZstdMeasurements {
  /** The contenders this runtime has (each ran or failed the suite). */
  available: number;
  /** Which engines this runtime has: zstd-napi loads, node:zlib has zstd. */
  present: Record<ZstdEngine, boolean>;
  /** Batches each memory run was given. */
  batches: number;
  runs: readonly EngineRun[];
  workerRuns: readonly WorkerRun[];
  /** Median over rounds of node:zlib's CPU per batch over zstd-napi's; undefined without both. */
  zlibRatio: number | undefined;
}

export function zstdEngineTargets(m: ZstdMeasurements): Target[] {
  const { available, runs, workerRuns, zlibRatio } = m;
  const runOf = (c: EngineRun['contender']) => runs.find((r) => r.contender === c);
  /**
   * A shipped engine's target without its measurement: SKIP where the runtime lacks the engine,
   * FAIL where it has it (the measurement went missing).
   */
  const notMeasured = (engine: ZstdEngine): Pick<Target, 'measured' | 'pass'> =>
    m.present[engine]
      ? { measured: `not measured, though ${engine} is present here`, pass: false }
      : { measured: `not measured: ${ABSENT[engine]}`, pass: null };
  /** What one batch costs the thread that compresses it synchronously: what the worker spares the loop. */
  const syncBaseline = runOf('napi-reused') ?? runOf('zlib-sync');
  return [
    {
      name: 'every zstd contender round-trips (decodes to its input)',
      measured:
        available === 0
          ? 'no engine here (node:zlib zstd absent, zstd-napi does not load): nothing checked'
          : `${runs.map((r) => `${r.contender} ${r.roundTrip ? 'ok' : 'WRONG'}`).join(', ')} (${runs.length} of ${available} contenders ran)`,
      threshold: 'all ok',
      pass: everyChecked(
        runs.map((r) => r.roundTrip),
        available,
      ),
      required: true,
    },
    ...SHIPPED.map(([contender, engine]): Target => {
      const name = `zstd ${engine} engine: native memory after ${m.batches} batches vs after 100`;
      const threshold = 'none grows > 10% (or > 1 MiB)';
      const r = runOf(contender);
      if (r === undefined) return { name, threshold, ...notMeasured(engine) };
      return {
        name,
        measured: NATIVE_FIELDS.map((f) => `${f} ${signed(grew(r, f))}`).join(', '),
        threshold,
        pass: NATIVE_FIELDS.every((f) => flat(r, f)),
      };
    }),
    {
      // The engine decision: the built-in one is preferred (no native build) unless it costs
      // more than twice the addon's CPU.
      name: 'node:zlib zstd (shipped) costs at most 2× the CPU of zstd-napi per batch',
      measured: zlibRatio === undefined ? 'one engine missing here' : `${zlibRatio.toFixed(2)}×`,
      threshold: '≤ 2×',
      pass: zlibRatio === undefined ? null : zlibRatio <= 2,
    },
    ...SHIPPED.map(([, engine]): Target => {
      const name = `main thread stall while the worker compresses (${engine}), p90 of batches, vs compressing on the thread`;
      const threshold = '< one synchronous compression (median)';
      const w = workerRuns.find((x) => x.engine === engine);
      if (w === undefined) return { name, threshold, ...notMeasured(engine) };
      return {
        name,
        measured: `${fmtMs(quantile(w.stalls, 0.9))} (synchronous: ${syncBaseline === undefined ? 'n/a' : fmtMs(syncBaseline.medianMillis)}, ${syncBaseline?.contender ?? 'none'})`,
        threshold,
        pass:
          syncBaseline === undefined ? null : quantile(w.stalls, 0.9) < syncBaseline.medianMillis,
      };
    }),
  ];
}
