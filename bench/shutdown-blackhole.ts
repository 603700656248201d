/**
 * Shutdown under a black-holed S3: meterProvider.shutdown() with no timeout, in a child process
 * per contender, capped. Ours (flushTimeoutMillis 2000) beside @opentelemetry/exporter-metrics-
 * otlp-http pointed at a black-holed collector, and beside an exporter that uploads while
 * holding its lock (bench/lib/locked-exporter.ts).
 */

import { startBlackhole } from './lib/blackhole.js';
import { jsonLine, runTs } from './lib/child.js';
import { fmtMs } from './lib/format.js';
import { emitResult, parseArgs, progress, type Target } from './lib/result.js';
import type { StepLine } from './lib/timed-exporter.js';

const args = parseArgs(process.argv.slice(2));
const FLUSH_TIMEOUT_MILLIS = 2_000;
const CAP_MILLIS = args.quick ? 20_000 : 30_000;
/** Each step may take the flush timeout plus this. */
const SLACK_MILLIS = 100;

const CONTENDERS = [
  { id: 'ours', label: 'ours (S3MetricExporter, flushTimeoutMillis 2000)' },
  { id: 'otlp-http', label: '@opentelemetry/exporter-metrics-otlp-http (defaults)' },
  { id: 'locked', label: 'baseline: uploads while holding its lock (SDK defaults)' },
] as const;

interface Outcome {
  id: string;
  label: string;
  settled: boolean;
  shutdownMillis: number | null;
  /** Duration of each forceFlush() / shutdown() call, in order; null if it never settled. */
  steps: { step: string; millis: number | null }[];
  exports: number | null;
  /** Ours only: what it held when shutdown began, and what was lost at the deadline. */
  stuck?: {
    pendingAtShutdown: number;
    attemptsAtShutdown: number;
    uploaded: number;
    droppedAtShutdown: number;
  };
  childMillis: number;
}

const blackhole = await startBlackhole();
const outcomes: Outcome[] = [];
for (const c of CONTENDERS) {
  progress(`shutdown: ${c.label} into ${blackhole.description}`);
  const run = await runTs('bench/children/shutdown-contender.ts', {
    env: {
      CONTENDER: c.id,
      ENDPOINT: blackhole.endpoint,
      FLUSH_TIMEOUT_MILLIS: String(FLUSH_TIMEOUT_MILLIS),
    },
    capMillis: CAP_MILLIS,
  });
  const steps: Outcome['steps'] = [];
  const open = new Map<string, number>();
  for (const line of run.stdout) {
    if (!line.startsWith('{"step"')) continue;
    const s = JSON.parse(line) as StepLine;
    if (s.event === 'start') open.set(s.step, s.t);
    else {
      steps.push({ step: s.step, millis: s.t - (open.get(s.step) ?? s.t) });
      open.delete(s.step);
    }
  }
  for (const step of open.keys()) steps.push({ step, millis: null });
  const done = jsonLine<{
    shutdownMillis: number;
    exports: number;
    pendingAtShutdown?: number;
    attemptsAtShutdown?: number;
    uploaded?: number;
    droppedAtShutdown?: number;
  }>(run, 'shutdownMillis');
  if (done === undefined && !run.capped) {
    throw new Error(`${c.id} child failed (exit ${run.code}): ${run.stderr.slice(-2000)}`);
  }
  outcomes.push({
    id: c.id,
    label: c.label,
    settled: done !== undefined,
    shutdownMillis: done?.shutdownMillis ?? null,
    steps,
    exports: done?.exports ?? null,
    ...(done?.pendingAtShutdown === undefined
      ? {}
      : {
          stuck: {
            pendingAtShutdown: done.pendingAtShutdown,
            attemptsAtShutdown: done.attemptsAtShutdown ?? 0,
            uploaded: done.uploaded ?? 0,
            droppedAtShutdown: done.droppedAtShutdown ?? 0,
          },
        }),
    childMillis: run.millis,
  });
}
await blackhole.close();

const stepText = (o: Outcome, name: string) => {
  const list = o.steps.filter((s) => s.step === name);
  if (list.length === 0) return o.settled ? '(not called)' : 'not reached';
  return list.map((s) => (s.millis === null ? 'did not settle' : fmtMs(s.millis))).join(', ');
};
const ours = outcomes.find((o) => o.id === 'ours');
const oursSteps = ours?.steps ?? [];
const limit = FLUSH_TIMEOUT_MILLIS + SLACK_MILLIS;
const others = outcomes
  .filter((o) => o.id !== 'ours')
  .map((o) => `${o.id} ${o.settled ? fmtMs(o.shutdownMillis ?? 0) : 'did not settle'}`)
  .join(', ');
const stuck = ours?.stuck;
const targets: Target[] = [
  {
    // Shutting down fast proves nothing unless there was something stuck to wait for.
    name: 'shutdown under a black hole: ours was really stuck',
    measured:
      stuck === undefined
        ? 'no report'
        : `${stuck.pendingAtShutdown} batches pending and ${stuck.attemptsAtShutdown} PUTs sent into the black hole when shutdown began; ${stuck.uploaded} stored; ${stuck.droppedAtShutdown} data points given up at the deadline`,
    threshold: 'pending > 0, PUTs sent > 0, none stored, points given up > 0',
    pass:
      stuck !== undefined &&
      stuck.pendingAtShutdown > 0 &&
      stuck.attemptsAtShutdown > 0 &&
      stuck.uploaded === 0 &&
      stuck.droppedAtShutdown > 0,
  },
  {
    name: 'shutdown under a black hole: ours, each forceFlush()/shutdown() step',
    measured: `${oursSteps.map((s) => `${s.step} ${s.millis === null ? 'did not settle' : fmtMs(s.millis)}`).join(', ')}; total ${ours?.shutdownMillis == null ? 'did not settle' : fmtMs(ours.shutdownMillis)} (baselines: ${others})`,
    threshold: `each ≤ ${limit} ms`,
    pass:
      ours?.settled === true &&
      oursSteps.length > 0 &&
      oursSteps.every((s) => s.millis !== null && s.millis <= limit),
  },
];
emitResult({
  suite: 'shutdown',
  title: 'Shutdown under a black-holed S3 / collector (meterProvider.shutdown(), no timeout)',
  tables: [
    {
      columns: [
        'contender',
        'meterProvider.shutdown()',
        'forceFlush()',
        'exporter.shutdown()',
        'exports before',
      ],
      rows: outcomes.map((o) => [
        o.label,
        o.settled
          ? fmtMs(o.shutdownMillis ?? 0)
          : `did not settle (killed at ${CAP_MILLIS / 1000} s)`,
        stepText(o, 'forceFlush'),
        stepText(o, 'shutdown'),
        o.exports === null ? '?' : String(o.exports),
      ]),
    },
  ],
  targets,
  notes: [
    `${blackhole.description}; a child process per contender, PeriodicExportingMetricReader every 500 ms for 1.6 s of traffic before shutdown (so exports are already stuck), capped at ${CAP_MILLIS / 1000} s.`,
  ],
  data: { flushTimeoutMillis: FLUSH_TIMEOUT_MILLIS, capMillis: CAP_MILLIS, outcomes },
});
