/**
 * Shutdown under a black-holed S3: meterProvider.shutdown() with no timeout, in a child process
 * per contender, capped. Ours (flushTimeoutMillis 2000) beside @opentelemetry/exporter-metrics-
 * otlp-http pointed at a black-holed collector, and beside an exporter that uploads while
 * holding its lock (bench/lib/locked-exporter.ts). Then the three signals: one S3Exporters'
 * metric, span and log record exporters behind the SDK's reader and batch processors, their
 * three providers shut down side by side with no timeout (as NodeSDK does), beside the three
 * OTLP/HTTP exporters doing the same.
 */

import { startBlackhole } from './lib/blackhole.js';
import { jsonLine, runTs } from './lib/child.js';
import { fmtMs } from './lib/format.js';
import { emitResult, parseArgs, progress, type Target } from './lib/result.js';
import { median } from './lib/stats.js';
import type { StepLine } from './lib/timed-exporter.js';

const args = parseArgs(process.argv.slice(2));
const FLUSH_TIMEOUT_MILLIS = 2_000;
const CAP_MILLIS = args.quick ? 20_000 : 30_000;
/** The three OTLP/HTTP exporters' shutdown takes their 10 s timeouts, maybe one after another. */
const CAP_THREE_MILLIS = 60_000;
/** Runs of our three exporters (one of the three OTLP/HTTP exporters, for reference). */
const THREE_ROUNDS = args.quick ? 1 : 3;
/** Each step may take the flush timeout plus this. */
const SLACK_MILLIS = 100;

const CONTENDERS = [
  { id: 'ours', label: 'ours (S3MetricExporter, flushTimeoutMillis 2000)' },
  { id: 'otlp-http', label: '@opentelemetry/exporter-metrics-otlp-http (defaults)' },
  { id: 'locked', label: 'baseline: uploads while holding its lock (SDK defaults)' },
  {
    id: 'ours-3',
    label: 'ours, three signals (one S3Exporters: metric, span, log record exporters)',
  },
  {
    id: 'otlp-http-3',
    label: 'the three OTLP/HTTP exporters (metrics, trace, logs; defaults)',
  },
] as const;
const SIGNALS = ['metrics', 'spans', 'logs'] as const;

interface Stuck {
  pendingAtShutdown: number;
  attemptsAtShutdown: number;
  uploaded: number;
  droppedAtShutdown: number;
}

interface Outcome {
  id: string;
  label: string;
  settled: boolean;
  shutdownMillis: number | null;
  /**
   * Duration of each forceFlush() / shutdown() call, in order, with its exporter's signal;
   * null if it never settled.
   */
  steps: { signal: string; step: string; millis: number | null }[];
  exports: number | null;
  /** Ours only, per signal: what it held when shutdown began, and what was lost at the deadline. */
  stuck?: Record<string, Stuck>;
  /** Each provider's shutdown(): when it settled from the start, and its rejection if any. */
  providers: { name: string; millis: number; error?: string }[];
  /** A bare setTimeout of the deadline set with the shutdown: when it fired (the loop's lateness). */
  referenceTimerMillis: number | null;
  childMillis: number;
}

/** The contenders in the order they run: our three exporters in rounds, the OTLP/HTTP ones once. */
type Contender = (typeof CONTENDERS)[number];
const ours3Run = CONTENDERS.find((c) => c.id === 'ours-3');
const order: Contender[] = [];
for (const c of CONTENDERS) {
  if (c.id === 'ours-3') continue;
  if (c.id === 'otlp-http-3' && ours3Run !== undefined) order.push(ours3Run);
  order.push(c);
}
for (let round = 1; round < THREE_ROUNDS && ours3Run; round++) order.push(ours3Run);

const blackhole = await startBlackhole();
const outcomes: Outcome[] = [];
for (const c of order) {
  progress(`shutdown: ${c.label} into ${blackhole.description}`);
  const run = await runTs('bench/children/shutdown-contender.ts', {
    env: {
      CONTENDER: c.id,
      ENDPOINT: blackhole.endpoint,
      FLUSH_TIMEOUT_MILLIS: String(FLUSH_TIMEOUT_MILLIS),
    },
    capMillis: c.id.endsWith('-3') ? CAP_THREE_MILLIS : CAP_MILLIS,
  });
  const steps: Outcome['steps'] = [];
  /** Open steps by signal and step: when each started. */
  const open = new Map<string, { signal: string; step: string; t: number }>();
  for (const line of run.stdout) {
    if (!line.startsWith('{"step"')) continue;
    const s = JSON.parse(line) as StepLine;
    const signal = s.signal ?? 'metrics';
    const key = `${signal} ${s.step}`;
    if (s.event === 'start') open.set(key, { signal, step: s.step, t: s.t });
    else {
      steps.push({ signal, step: s.step, millis: s.t - (open.get(key)?.t ?? s.t) });
      open.delete(key);
    }
  }
  for (const { signal, step } of open.values()) steps.push({ signal, step, millis: null });
  const done = jsonLine<{
    shutdownMillis: number;
    exports: number;
    stuck?: Record<string, Stuck>;
    providers: Outcome['providers'];
    referenceTimerMillis: number;
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
    ...(done?.stuck === undefined ? {} : { stuck: done.stuck }),
    providers: done?.providers ?? [],
    referenceTimerMillis: done?.referenceTimerMillis ?? null,
    childMillis: run.millis,
  });
}
await blackhole.close();

const stepText = (o: Outcome, name: string, signal = 'metrics') => {
  const list = o.steps.filter((s) => s.step === name && s.signal === signal);
  if (list.length === 0) return o.settled ? '(not called)' : 'not reached';
  return list.map((s) => (s.millis === null ? 'did not settle' : fmtMs(s.millis))).join(', ');
};
const settledText = (o: Outcome | undefined) =>
  o === undefined
    ? 'not run'
    : o.settled
      ? fmtMs(o.shutdownMillis ?? 0)
      : `did not settle (killed at ${(o.id.endsWith('-3') ? CAP_THREE_MILLIS : CAP_MILLIS) / 1000} s)`;
const ours = outcomes.find((o) => o.id === 'ours');
const oursSteps = ours?.steps ?? [];
const limit = FLUSH_TIMEOUT_MILLIS + SLACK_MILLIS;
const others = outcomes
  .filter((o) => o.id !== 'ours' && !o.id.endsWith('-3'))
  .map((o) => `${o.id} ${o.settled ? fmtMs(o.shutdownMillis ?? 0) : 'did not settle'}`)
  .join(', ');
const stuck = ours?.stuck?.metrics;
const ours3 = outcomes.filter((o) => o.id === 'ours-3');
const otlp3 = outcomes.find((o) => o.id === 'otlp-http-3');
const reallyStuck = (s: Stuck | undefined) =>
  s !== undefined &&
  s.pendingAtShutdown > 0 &&
  s.attemptsAtShutdown > 0 &&
  s.uploaded === 0 &&
  s.droppedAtShutdown > 0;
/**
 * Our three exporters' steps over the rounds: each signal's n-th call of a step, with its
 * duration in every round (null: it did not settle), in the order the SDK made them.
 */
const stepsOverRounds = new Map<
  string,
  { signal: string; label: string; millis: (number | null)[] }
>();
for (const o of ours3) {
  const seen = new Map<string, number>();
  for (const s of o.steps) {
    const n = (seen.get(`${s.signal} ${s.step}`) ?? 0) + 1;
    seen.set(`${s.signal} ${s.step}`, n);
    const label = n === 1 ? s.step : `${s.step} #${n}`;
    const key = `${s.signal} ${label}`;
    const entry = stepsOverRounds.get(key) ?? { signal: s.signal, label, millis: [] };
    entry.millis.push(s.millis);
    stepsOverRounds.set(key, entry);
  }
}
const medianOf = (values: (number | null)[]) =>
  median(values.map((v) => v ?? Number.POSITIVE_INFINITY));
const stepFigure = (e: { millis: (number | null)[] }) => {
  const m = medianOf(e.millis);
  const worst = Math.max(...e.millis.map((v) => v ?? Number.POSITIVE_INFINITY));
  const text = (v: number) => (Number.isFinite(v) ? fmtMs(v) : 'did not settle');
  return e.millis.length === 1 ? text(m) : `${text(m)} (worst ${text(worst)})`;
};
const ours3Total = medianOf(ours3.map((o) => (o.settled ? o.shutdownMillis : null)));
const referenceText = (list: Outcome[]) => {
  const values = list.flatMap((o) =>
    o.referenceTimerMillis === null ? [] : [o.referenceTimerMillis],
  );
  return values.length === 0
    ? 'n/a'
    : `${fmtMs(median(values))} (worst ${fmtMs(Math.max(...values))})`;
};
const targets: Target[] = [
  {
    // Shutting down fast proves nothing unless there was something stuck to wait for.
    name: 'shutdown under a black hole: ours was really stuck',
    measured:
      stuck === undefined
        ? 'no report'
        : `${stuck.pendingAtShutdown} batches pending and ${stuck.attemptsAtShutdown} PUTs sent into the black hole when shutdown began; ${stuck.uploaded} stored; ${stuck.droppedAtShutdown} data points given up at the deadline`,
    threshold: 'pending > 0, PUTs sent > 0, none stored, points given up > 0',
    pass: reallyStuck(stuck),
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
  {
    name: 'shutdown under a black hole, three signals: each of ours was really stuck, in every round',
    measured: ours3
      .map(
        (o, i) =>
          `round ${i + 1}: ${SIGNALS.map((signal) => {
            const s = o.stuck?.[signal];
            return s === undefined
              ? `${signal} no report`
              : `${signal} ${s.pendingAtShutdown} pending, ${s.attemptsAtShutdown} PUTs sent, ${s.uploaded} stored, ${s.droppedAtShutdown} given up`;
          }).join(', ')}`,
      )
      .join('; '),
    threshold: 'for each signal: pending > 0, PUTs sent > 0, none stored, given up > 0',
    pass:
      ours3.length > 0 &&
      ours3.every((o) => SIGNALS.every((signal) => reallyStuck(o.stuck?.[signal]))),
  },
  {
    name: "shutdown under a black hole, three signals side by side: each of our exporters' forceFlush()/shutdown() steps (median of rounds)",
    measured: `${[...stepsOverRounds.values()].map((e) => `${e.signal} ${e.label} ${stepFigure(e)}`).join('; ')}; the three providers' shutdown() ${Number.isFinite(ours3Total) ? fmtMs(ours3Total) : 'did not settle'} (the three OTLP/HTTP exporters: ${settledText(otlp3)}); a bare ${FLUSH_TIMEOUT_MILLIS} ms timer set with the shutdown fired at ${referenceText(ours3)}`,
    threshold: `each ≤ ${limit} ms, every signal`,
    pass:
      ours3.length > 0 &&
      ours3.every((o) => o.settled) &&
      SIGNALS.every((signal) => [...stepsOverRounds.values()].some((e) => e.signal === signal)) &&
      [...stepsOverRounds.values()].every((e) => medianOf(e.millis) <= limit),
  },
];
emitResult({
  suite: 'shutdown',
  title: "Shutdown under a black-holed S3 / collector (the providers' shutdown(), no timeout)",
  tables: [
    {
      columns: [
        'contender',
        'meterProvider.shutdown()',
        'forceFlush()',
        'exporter.shutdown()',
        'exports before',
      ],
      rows: outcomes
        .filter((o) => !o.id.endsWith('-3'))
        .map((o) => [
          o.label,
          settledText(o),
          stepText(o, 'forceFlush'),
          stepText(o, 'shutdown'),
          o.exports === null ? '?' : String(o.exports),
        ]),
    },
    {
      columns: [
        'contender (three signals)',
        "providers' shutdown(), side by side",
        'each provider settled (rejected: why)',
        `a bare ${FLUSH_TIMEOUT_MILLIS} ms timer fired at`,
        ...SIGNALS.map((signal) => `${signal}: forceFlush(), shutdown()`),
        'exports before',
      ],
      rows: outcomes
        .filter((o) => o.id.endsWith('-3'))
        .map((o) => [
          o.id === 'ours-3' && ours3.length > 1
            ? `${o.label}, round ${ours3.indexOf(o) + 1}`
            : o.label,
          settledText(o),
          o.providers
            .map(
              (p) =>
                `${p.name} ${fmtMs(p.millis)}${p.error === undefined ? '' : ` (rejected: ${p.error})`}`,
            )
            .join(', '),
          o.referenceTimerMillis === null ? 'n/a' : fmtMs(o.referenceTimerMillis),
          ...SIGNALS.map(
            (signal) => `${stepText(o, 'forceFlush', signal)}; ${stepText(o, 'shutdown', signal)}`,
          ),
          o.exports === null ? '?' : String(o.exports),
        ]),
    },
  ],
  targets,
  notes: [
    `${blackhole.description}; a child process per contender, PeriodicExportingMetricReader every 500 ms for 1.6 s of traffic before shutdown (so exports are already stuck), capped at ${CAP_MILLIS / 1000} s.`,
    `Three signals: the same traffic and reader, and a span and a log record for one request in five, through a BatchSpanProcessor and a BatchLogRecordProcessor exporting every 500 ms (so their exports are stuck too); ours with flushTimeoutMillis ${FLUSH_TIMEOUT_MILLIS} and maxBatchAgeMillis 100 for the group; the three providers' shutdown() called at once with no timeout, as NodeSDK.shutdown() does; capped at ${CAP_THREE_MILLIS / 1000} s; ours in ${THREE_ROUNDS} round(s), the target on the median of each step over them. A bare timer of the deadline, set when the shutdown begins, shows how late the process's timers fire (the machine's load, the event loop's other work). The SDK calls each exporter's forceFlush() and shutdown() in its own order (the MeterProvider: forceFlush, then shutdown; the BatchSpanProcessor: export what it holds, then shutdown; the BatchLogRecordProcessor: forceFlush per batch it holds, then shutdown); each call is held to the deadline.`,
  ],
  data: { flushTimeoutMillis: FLUSH_TIMEOUT_MILLIS, capMillis: CAP_MILLIS, outcomes },
});
