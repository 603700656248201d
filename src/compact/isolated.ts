import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SignalName } from '../layout/formats.js';
import type { AccessProblem } from '../reader/errors.js';
import { ReadAccessError } from '../reader/errors.js';
import { type CompactMetricsOptions, resolveCompaction } from './options.js';
import type { CompactionEvent, CompactionReport } from './report.js';

/**
 * compactMetrics() (or another signal's, `which`; or several signals' in turn, in one worker,
 * their reports joined) in a worker thread with a bounded heap, for the CLI. Left to itself, V8 sizes
 * the heap by the allocation rate, not by what is live, and a compaction allocates fast
 * (docs/parquet.md, "Memory", has the numbers). In a worker, the young generation is capped at
 * YOUNG_GENERATION_MB and the old one at the larger of OLD_GENERATION_MIN_MB and the target
 * file size, so collections come early and memory follows the target, not the partition.
 *
 * Only where the worker's file is there as JavaScript (dist/ and dist/cjs/): from TypeScript
 * sources (tests), undefined, and the caller runs compactMetrics() in its own thread.
 */
export const YOUNG_GENERATION_MB = 16;
export const OLD_GENERATION_MIN_MB = 128;

export function compactIsolated(
  options: CompactMetricsOptions,
  onProgress: (event: CompactionEvent) => void,
  signal: AbortSignal,
  file: URL | undefined = builtWorkerFile(),
  which: SignalName | readonly SignalName[] = 'metrics',
): Promise<CompactionReport> | undefined {
  if (file === undefined) return undefined;
  // A client or credential provider of the caller's cannot cross to a thread.
  if (options.dir === undefined && (options.s3Client ?? options.credentials) !== undefined) {
    return undefined;
  }
  const signals: SignalName[] = typeof which === 'string' ? [which] : [...which];
  // Checked here: a bad option is reported as the caller reports it, not from the worker.
  const targetBytes = Math.max(
    0,
    ...signals.map((s) => resolveCompaction(options, s).targetFileBytes),
  );
  const plain: CompactMetricsOptions = { ...options };
  delete plain.onProgress;
  delete plain.signal;
  const oldMb = Math.max(OLD_GENERATION_MIN_MB, Math.ceil(targetBytes / 2 ** 20));
  const worker = new Worker(file, {
    // One worker for every signal: each worker loads the package's modules again (about
    // 0.3 s of CPU and wall time on the bench's machine).
    workerData: { options: plain, which: signals },
    resourceLimits: {
      maxYoungGenerationSizeMb: YOUNG_GENERATION_MB,
      maxOldGenerationSizeMb: oldMb,
    },
  });
  const abort = () => worker.postMessage({ type: 'abort' });
  signal.addEventListener('abort', abort, { once: true });
  return new Promise<CompactionReport>((resolve, reject) => {
    let settled = false;
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'progress') for (const event of message.events) onProgress(event);
      else if (message.type === 'done') {
        settled = true;
        resolve(message.report);
      } else {
        settled = true;
        reject(signal.aborted ? signal.reason : rebuilt(message.error));
      }
    });
    worker.on('error', (error: Error & { code?: string }) => {
      settled = true;
      reject(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new Error(
              `the compaction ran out of its heap (${oldMb} MB, from --target-file-bytes): nothing more was written; raise --target-file-bytes, or report it`,
              { cause: error },
            )
          : error,
      );
    });
    worker.on('exit', (code) => {
      signal.removeEventListener('abort', abort);
      if (!settled) reject(new Error(`the compaction worker stopped (exit code ${code})`));
    });
  });
}

/** The worker's file where the package is built (either build); undefined from sources. */
function builtWorkerFile(): URL | undefined {
  const file = new URL('./compact-worker.js', import.meta.url);
  return import.meta.url.endsWith('.js') && existsSync(fileURLToPath(file)) ? file : undefined;
}

type WorkerMessage =
  | { type: 'progress'; events: CompactionEvent[] }
  | { type: 'done'; report: CompactionReport }
  | { type: 'error'; error: { name: string; message: string; reason?: unknown; hint?: unknown } };

/** The worker's error as the CLI tells errors apart (access errors end with exit code 3). */
function rebuilt(e: { name: string; message: string; reason?: unknown; hint?: unknown }): Error {
  if (e.name === 'ReadAccessError') {
    const error = new ReadAccessError('', e.reason as AccessProblem, '', String(e.hint ?? ''));
    error.message = e.message;
    return error;
  }
  const error = new Error(e.message);
  error.name = e.name;
  return error;
}
