/**
 * Event-loop delay while something runs: perf_hooks.monitorEventLoopDelay (1 ms resolution) for
 * max and p99, plus a 1 ms interval that records every long gap with its position in time, so
 * a stall can be attributed to the phase it fell into.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface Gap {
  /** performance.now() when the loop stopped answering (the last tick before the gap). */
  start: number;
  millis: number;
}

export interface DelayReport {
  maxMillis: number;
  p99Millis: number;
  meanMillis: number;
  windowMillis: number;
  /** Gaps between 1 ms ticks longer than `gapMillis`, in order. */
  gaps: Gap[];
}

export interface DelayProbe {
  stop(): DelayReport;
}

export function startDelayProbe(gapMillis = 3): DelayProbe {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const gaps: Gap[] = [];
  const started = performance.now();
  let last = started;
  const ticker = setInterval(() => {
    const now = performance.now();
    // The interval itself is 1 ms: what exceeds it is delay.
    if (now - last - 1 > gapMillis) gaps.push({ start: last, millis: now - last - 1 });
    last = now;
  }, 1);
  return {
    stop() {
      clearInterval(ticker);
      histogram.disable();
      const ns = 1e6;
      return {
        maxMillis: histogram.max / ns,
        p99Millis: histogram.percentile(99) / ns,
        meanMillis: histogram.mean / ns,
        windowMillis: performance.now() - started,
        gaps,
      };
    },
  };
}

/** Sleeps without blocking: lets the loop (and the probes) run. */
export const sleep = (millis: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, millis));
