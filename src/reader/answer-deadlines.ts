/**
 * How long a read request (a GET, a listing's page) may go without an answer before the same
 * request is sent again beside it, each time: at 5 s, then 15 s later. A request that is lost (a
 * server that dropped it, a connection that died without a reset) is otherwise waited for a whole
 * minute, while a lookup of hundreds of objects takes seconds: AWS's advice for latency-sensitive
 * reads is to send a slow request again, which likely takes another path and answers at once.
 * Reads are idempotent.
 */
export const ANSWER_DEADLINES_MILLIS: readonly number[] = [5_000, 15_000];

/** Why an attempt was stopped: another one answered first (never seen by the caller). */
const SUPERSEDED = new Error('another attempt of the request answered first');

/**
 * Runs `attempt`, and, while no attempt has answered, the same again beside it after each of
 * `deadlines` in turn (hedged requests). The first attempt that calls `answered()` (the server's
 * answer began: a GET's headers) or settles wins, and the others are aborted: a lost request
 * costs the first deadline, and a body that has begun is never cut short. An attempt that fails
 * (an HTTP error, or the client's own connection timeouts against a server that is down) ends the
 * read with its error, as without the deadlines: the attempts beside it do not prolong it. Each
 * attempt has its own signal, aborted with the caller's `signal` (and its reason) too.
 */
export function withAnswerDeadlines<T>(
  attempt: (signal: AbortSignal, answered: () => void) => Promise<T>,
  signal: AbortSignal,
  deadlines: readonly number[] = ANSWER_DEADLINES_MILLIS,
): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const running = new Set<AbortController>();
    const timers: ReturnType<typeof setTimeout>[] = [];
    let winner: AbortController | undefined;
    let settled = false;
    const stopOthers = (kept?: AbortController) => {
      for (const t of timers) clearTimeout(t);
      for (const c of running) if (c !== kept) c.abort(SUPERSEDED);
    };
    const onAbort = () => {
      for (const c of running) c.abort(signal.reason);
    };
    const settle = (kept: AbortController, done: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      stopOthers(kept);
      done();
    };
    const start = () => {
      if (settled || winner !== undefined || signal.aborted) return;
      const controller = new AbortController();
      running.add(controller);
      const answered = () => {
        if (winner !== undefined || settled) return;
        winner = controller;
        stopOthers(controller);
      };
      attempt(controller.signal, answered).then(
        (value) => {
          running.delete(controller);
          if (winner === undefined || winner === controller)
            settle(controller, () => resolve(value));
        },
        (error: unknown) => {
          running.delete(controller);
          // Stopped because another answered: that one settles the read.
          if (controller.signal.reason === SUPERSEDED) return;
          if (winner === undefined || winner === controller)
            settle(controller, () => reject(error));
        },
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
    start();
    let at = 0;
    for (const deadline of deadlines) {
      at += deadline;
      timers.push(setTimeout(start, at));
    }
  });
}
