import { schedstat as threadSchedstat } from '../../bench/lib/loop-delay.js';

/** One late turn of the probe's timer. */
export interface Stall {
  /** performance.now() at the turn before the stall. */
  start: number;
  /** How much later than its interval the timer ran. */
  lateMillis: number;
  /** Of that interval, the time this thread ran on a CPU. */
  onCpuMillis: number;
  /** Of that interval, the time this thread was ready to run but waited for a CPU. */
  runnableMillis: number;
}

export interface StallReport<T> {
  value: T;
  /** The longest delay of the loop, as a clock sees it (the machine's load included). */
  maxLateMillis: number;
  /**
   * The most CPU time this thread spent between two turns of the timer: the longest the loop was
   * held by work on it. Where the thread's CPU time cannot be read (off Linux), the longest delay.
   */
  maxHeldMillis: number;
  /** The turns later than 20 ms, in order. */
  stalls: Stall[];
}

/**
 * Runs `work` with a timer every `intervalMillis` and tells how late its turns came, and how
 * much CPU this thread used between two turns. A turn comes late when work on the loop holds
 * it, or when the thread is kept off a CPU while the machine is busy: waiting on a run queue, or
 * asleep past its timer (on a loaded two-core machine, 156 ms of a turn 174 ms late was spent
 * neither on a CPU nor on a run queue). Only work on the loop uses this thread's CPU, so
 * `maxHeldMillis` counts that alone. A synchronous wait on the loop (a blocking system call) is
 * not counted: a hung `FaultyFileSystem` call is a promise, and a synchronous wait on it would
 * never end.
 */
export async function loopStallsWhile<T>(
  work: () => Promise<T>,
  intervalMillis = 5,
): Promise<StallReport<T>> {
  const stalls: Stall[] = [];
  let maxLateMillis = 0;
  let maxHeldMillis = 0;
  let last = performance.now();
  let lastSched = threadSchedstat();
  const tick = () => {
    const now = performance.now();
    const sched = threadSchedstat();
    const lateMillis = Math.max(0, now - last - intervalMillis);
    const before = lastSched;
    const known = sched !== undefined && before !== undefined;
    const onCpuMillis = known ? (sched[0] - before[0]) / 1e6 : lateMillis;
    const runnableMillis = known ? (sched[1] - before[1]) / 1e6 : 0;
    maxLateMillis = Math.max(maxLateMillis, lateMillis);
    maxHeldMillis = Math.max(maxHeldMillis, onCpuMillis);
    if (lateMillis > 20) stalls.push({ start: last, lateMillis, onCpuMillis, runnableMillis });
    last = now;
    lastSched = sched;
  };
  const timer = setInterval(tick, intervalMillis);
  try {
    const value = await work();
    tick();
    return { value, maxLateMillis, maxHeldMillis, stalls };
  } finally {
    clearInterval(timer);
  }
}

/** A stall report in one line: the maxima, then each stall as late/on CPU/waiting for a CPU. */
export const describeStalls = (report: StallReport<unknown>): string =>
  `late max ${report.maxLateMillis.toFixed(1)} ms, held max ${report.maxHeldMillis.toFixed(1)} ms; ` +
  `stalls (late/on CPU/runnable ms): ${
    report.stalls
      .map(
        (s) =>
          `${s.lateMillis.toFixed(0)}/${s.onCpuMillis.toFixed(0)}/${s.runnableMillis.toFixed(0)}`,
      )
      .join(' ') || 'none'
  }`;
