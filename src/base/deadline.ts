/**
 * Calls `expired` once `millis` have passed, one turn of the event loop after its timer: after a
 * stall of the loop (a long collection, a burst of work) the timer runs before the poll phase
 * delivers I/O that ended in time, which the deadline would otherwise take for late. Clearing
 * the timer returned stops it until it has run.
 */
export function deadlineTimer(expired: () => void, millis: number): NodeJS.Timeout {
  return setTimeout(() => setImmediate(expired), millis);
}

/**
 * Waits for `work` at most `millis` (deadlineTimer). Resolves true if it settled in time, false
 * otherwise. The timer is cleared as soon as either side wins, so nothing outlives the wait.
 */
export function settleWithin(work: Promise<unknown>, millis: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = deadlineTimer(() => resolve(false), millis);
    work.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}

/**
 * `work`, or a failure once `signal` aborts and `work` has not ended by the next turn of the
 * event loop (work that stops at the abort fails with its own error, which says more: a
 * credentials provider that did not answer). Work need not watch its signal all the way: an AWS
 * SDK S3Client does not while it resolves credentials, so a provider that never answers would
 * hold a request, and what waits for it, for good. A late answer is ignored.
 */
export function endsAtAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () =>
      setImmediate(() =>
        reject(new Error('the request did not stop at its abort', { cause: signal.reason })),
      );
    // Handled here even after the abort: a late rejection is never an unhandled one.
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
}
