/**
 * Event-loop delay while something runs: perf_hooks.monitorEventLoopDelay (1 ms resolution) for
 * max and p99, plus a 1 ms interval that records every long gap with its position in time, so
 * a stall can be attributed to the phase it fell into.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface Gap {
  /** performance.now() when the loop stopped answering (the last tick before the gap). */
  start: number;
  millis: number;
  /**
   * Of the gap, the time this thread ran on a CPU, and the time it was ready but waiting for
   * one (other processes, our worker): Linux /proc/thread-self/schedstat; undefined elsewhere.
   */
  onCpuMillis?: number;
  runnableMillis?: number;
}

/** True where the per-thread scheduler statistics can be read (Linux). */
export const schedstatWorks = schedstat() !== undefined;

/**
 * [ns on a CPU, ns waiting on a run queue] of the calling thread, if Linux tells. The kernel
 * brings a running thread's CPU time up to date only at the scheduler's tick (4 ms here) and
 * when the thread is switched out, so read alone the figure of a turn that ran without a switch
 * is 0, 4 or 8 ms. getrusage(RUSAGE_SELF) (process.cpuUsage()) updates the calling thread's
 * figure first: read after it, a 1.5 ms busy loop reads 1.50 ms every time instead of anywhere
 * from 0 to 5 ms.
 */
export function schedstat(): [number, number] | undefined {
  try {
    process.cpuUsage();
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ');
    return [Number(run), Number(wait)];
  } catch {
    return undefined;
  }
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
  let lastSched = schedstat();
  const ticker = setInterval(() => {
    const now = performance.now();
    const sched = lastSched === undefined ? undefined : schedstat();
    // The interval itself is 1 ms: what exceeds it is delay.
    if (now - last - 1 > gapMillis) {
      const gap: Gap = { start: last, millis: now - last - 1 };
      if (sched !== undefined && lastSched !== undefined) {
        gap.onCpuMillis = (sched[0] - lastSched[0]) / 1e6;
        gap.runnableMillis = (sched[1] - lastSched[1]) / 1e6;
      }
      gaps.push(gap);
    }
    last = now;
    lastSched = sched;
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
