/**
 * How long each attempt of a read request waits for the server's answer (a GET's headers, a
 * listing's page) before the same request is sent again; the last attempt waits for as long as
 * the client's idle timeout allows. A request that is lost (a server that dropped it, a
 * connection that died without a reset) is otherwise waited for a whole minute, while a lookup
 * of hundreds of objects is a few seconds: AWS's advice for latency-sensitive reads is to retry
 * a slow request, which likely takes another path and answers at once. Reads are idempotent.
 */
export const ANSWER_DEADLINES_MILLIS: readonly number[] = [5_000, 15_000];

/** The reason an attempt was given up for a new one (never seen by the caller). */
const SILENT = new Error('no answer within the attempt deadline');

/**
 * Runs `attempt` until it settles, sending it again when it has not called `answered()` (once
 * the server's answer began) within the next deadline of `deadlines`. Each attempt gets its own
 * signal, aborted with `signal` too, for its whole run (a body read after the answer included).
 */
export async function withAnswerDeadlines<T>(
  attempt: (signal: AbortSignal, answered: () => void) => Promise<T>,
  signal: AbortSignal,
  deadlines: readonly number[] = ANSWER_DEADLINES_MILLIS,
): Promise<T> {
  for (const deadline of deadlines) {
    signal.throwIfAborted();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(SILENT), deadline);
    try {
      return await linked(signal, controller, (s) => attempt(s, () => clearTimeout(timer)));
    } catch (error) {
      if (controller.signal.reason !== SILENT || signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
    }
  }
  return linked(signal, new AbortController(), (s) => attempt(s, () => {}));
}

/** Runs `run` with `controller`'s signal, aborted when `signal` is, until `run` settles. */
async function linked<T>(
  signal: AbortSignal,
  controller: AbortController,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const onAbort = () => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await run(controller.signal);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
