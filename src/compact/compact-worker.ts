/**
 * The compaction worker: runs compactMetrics() (or other signals' compactions, in turn) in a thread of its own whose heap is bounded
 * (isolated.ts starts it), and reports progress, the report or the error to the parent.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { SignalName } from '../layout/formats.js';
import { compactionOf } from './compact-metrics.js';
import { readFilesBlocking } from './dir-store.js';
import type { CompactMetricsOptions } from './options.js';
import { type CompactionEvent, type CompactionReport, joinedReports } from './report.js';

const port = parentPort;
if (port === null) throw new Error('compact-worker.js runs as a worker thread');
readFilesBlocking();
const controller = new AbortController();
port.on('message', (message: { type?: unknown }) => {
  if (message.type === 'abort') controller.abort();
});
/**
 * Progress events go to the parent in batches, at most one message every PROGRESS_MILLIS (an
 * hour of 600 inputs made 600 messages, each a structured clone on both threads), in order.
 */
const PROGRESS_MILLIS = 100;
let events: CompactionEvent[] = [];
let timer: NodeJS.Timeout | undefined;
const flush = (port: MessagePort) => {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  if (events.length > 0) port.postMessage({ type: 'progress', events });
  events = [];
};
// No top-level await: the CommonJS build of this file has none.
async function run(port: MessagePort): Promise<void> {
  try {
    const data = workerData as {
      options: CompactMetricsOptions;
      which?: SignalName | SignalName[];
    };
    const signals = typeof data.which === 'string' ? [data.which] : (data.which ?? ['metrics']);
    // The signals in turn, as the CLI names them: the first error stops the rest.
    const reports: CompactionReport[] = [];
    for (const which of signals) {
      reports.push(
        await compactionOf(which)({
          ...data.options,
          signal: controller.signal,
          onProgress: (event) => {
            events.push(event);
            timer ??= setTimeout(() => flush(port), PROGRESS_MILLIS);
          },
        }),
      );
    }
    const report = joinedReports(reports);
    flush(port);
    port.postMessage({ type: 'done', report });
  } catch (error) {
    flush(port);
    const e = error as { name?: unknown; message?: unknown; reason?: unknown; hint?: unknown };
    port.postMessage({
      type: 'error',
      error: {
        name: String(e.name ?? 'Error'),
        message: String(e.message ?? error),
        reason: e.reason,
        hint: e.hint,
      },
    });
  }
  port.close();
}
void run(port);
