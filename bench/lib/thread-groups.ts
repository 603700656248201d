/**
 * CPU time of this process split by kind of thread (Linux /proc/self/task/<tid>/schedstat and
 * comm): the main thread, worker threads (`WorkerThread`: the exporter's body worker), libuv's
 * pool (`libuv-worker`: node:zlib's asynchronous calls, Web Crypto), and the rest (V8's platform
 * threads: the collector's helpers, the compiler). A snapshot per phase; the difference of two is
 * what each kind ran in between.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ThreadCpu {
  main: number;
  worker: number;
  pool: number;
  other: number;
}

export const THREAD_KINDS = ['main', 'worker', 'pool', 'other'] as const;

const TASKS = '/proc/self/task';

const zero = (): ThreadCpu => ({ main: 0, worker: 0, pool: 0, other: 0 });

/** ms on a CPU per thread id now, with the thread's kind; undefined without /proc. */
export type ThreadSnapshot = Map<string, { kind: keyof ThreadCpu; millis: number }> | undefined;

export function threadSnapshot(): ThreadSnapshot {
  const snapshot: NonNullable<ThreadSnapshot> = new Map();
  let tids: string[];
  try {
    tids = readdirSync(TASKS);
  } catch {
    return undefined;
  }
  for (const tid of tids) {
    try {
      const comm = readFileSync(`${TASKS}/${tid}/comm`, 'latin1').trim();
      const [run] = readFileSync(`${TASKS}/${tid}/schedstat`, 'latin1').split(' ');
      const kind =
        tid === String(process.pid)
          ? 'main'
          : comm === 'WorkerThread'
            ? 'worker'
            : comm.startsWith('libuv-worker')
              ? 'pool'
              : 'other';
      snapshot.set(tid, { kind, millis: Number(run) / 1e6 });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return snapshot;
}

/** CPU ms each kind of thread ran between two snapshots (threads started in between count from 0). */
export function threadCpuBetween(
  before: ThreadSnapshot,
  after: ThreadSnapshot,
): ThreadCpu | undefined {
  if (before === undefined || after === undefined) return undefined;
  const cpu = zero();
  for (const [tid, t] of after) cpu[t.kind] += t.millis - (before.get(tid)?.millis ?? 0);
  return cpu;
}

export function addThreadCpu(a: ThreadCpu, b: ThreadCpu): ThreadCpu {
  return {
    main: a.main + b.main,
    worker: a.worker + b.worker,
    pool: a.pool + b.pool,
    other: a.other + b.other,
  };
}

export const totalCpu = (c: ThreadCpu): number => c.main + c.worker + c.pool + c.other;
