import { createRequire, syncBuiltinESMExports } from 'node:module';
import type { WorkerOptions } from 'node:worker_threads';

// Workers the package starts, changed for a test: the package imports `Worker` from
// node:worker_threads, whose ESM exports follow the CommonJS module's after
// syncBuiltinESMExports().

const workerThreads = createRequire(import.meta.url)(
  'node:worker_threads',
) as typeof import('node:worker_threads');
const RealWorker = workerThreads.Worker;

/** Until restoreWorkers(), every new Worker is started with what `args` makes of its own. */
export function swapWorkers(
  args: (url: string | URL, options: WorkerOptions) => [string | URL, WorkerOptions],
): void {
  workerThreads.Worker = class extends RealWorker {
    constructor(url: string | URL, options: WorkerOptions = {}) {
      super(...args(url, options));
    }
  };
  syncBuiltinESMExports();
}

/** New Workers are real ones again. */
export function restoreWorkers(): void {
  workerThreads.Worker = RealWorker;
  syncBuiltinESMExports();
}
