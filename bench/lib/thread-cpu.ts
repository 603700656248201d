/**
 * CPU time of single threads of this process (Linux /proc/self/task/<tid>/schedstat): the
 * exporter's compression worker is found as the one new `WorkerThread` a constructor started.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TASKS = '/proc/self/task';

/** Ids of this process's threads now; empty where /proc cannot be read. */
export function threadIds(): Set<string> {
  try {
    return new Set(readdirSync(TASKS));
  } catch {
    return new Set();
  }
}

/**
 * The one worker thread started since `before`, or undefined (none, several, no /proc). A new
 * thread takes the name `WorkerThread` once it runs, so this waits for it, up to `timeoutMillis`.
 */
export async function newWorkerThread(
  before: ReadonlySet<string>,
  timeoutMillis = 2_000,
): Promise<string | undefined> {
  const deadline = performance.now() + timeoutMillis;
  for (;;) {
    const started = [...threadIds()].filter((tid) => {
      if (before.has(tid)) return false;
      try {
        return readFileSync(`${TASKS}/${tid}/comm`, 'latin1').trim() === 'WorkerThread';
      } catch {
        return false;
      }
    });
    if (started.length === 1) return started[0];
    if (started.length > 1 || performance.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Milliseconds the thread has run on a CPU so far, or undefined (gone, or no /proc). */
export function threadCpuMillis(tid: string | undefined): number | undefined {
  if (tid === undefined) return undefined;
  try {
    const [run] = readFileSync(`${TASKS}/${tid}/schedstat`, 'latin1').split(' ');
    return Number(run) / 1e6;
  } catch {
    return undefined;
  }
}

/** Milliseconds the calling thread has run on a CPU so far (Linux), or undefined. */
export function ownCpuMillis(): number | undefined {
  try {
    const [run] = readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ');
    return Number(run) / 1e6;
  } catch {
    return undefined;
  }
}

const threadCpuUsage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;

/** Whether this runtime tells the calling thread's CPU time (process.threadCpuUsage, Node ≥ 23.9). */
export const CALLING_THREAD_CPU = threadCpuUsage !== undefined;

/**
 * The calling thread's CPU time in microseconds, exact; undefined where the runtime cannot tell.
 * Linux brings a running thread's CPU time up to date only at the scheduler's tick (4 ms) and
 * when it is switched out, so read alone a 1.5 ms loop read 0 to 4.7 ms; getrusage(RUSAGE_SELF)
 * (process.cpuUsage()) updates the caller's figure first, and after it the loop reads 1.51-1.55
 * ms every time (see loop-delay.ts).
 */
export function callingThreadCpuMicros(): number | undefined {
  if (threadCpuUsage === undefined) return undefined;
  process.cpuUsage();
  const u = threadCpuUsage.call(process);
  return u.user + u.system;
}
