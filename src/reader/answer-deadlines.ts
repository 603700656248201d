/**
 * How long a read request (a GET, a listing's page) may go without an answer (its headers) before
 * the same request is sent again beside it, each time: at 5 s, then 15 s later. A request that is
 * lost (a server that dropped it, a connection that died without a reset) is otherwise waited for a
 * whole minute, while a lookup of hundreds of objects takes seconds: AWS's advice for
 * latency-sensitive reads is to send a slow request again, which likely takes another path and
 * answers at once. Reads are idempotent.
 */
export const ANSWER_DEADLINES_MILLIS: readonly number[] = [5_000, 15_000];

/**
 * A request none of whose attempts has an answer this long after the first was sent ends the
 * read: the client's own idle timeout (60 s) would end the first attempt then, and the SDK would
 * send it twice more, so that a server that takes connections and never answers held a listing
 * for three minutes. Three requests sent, a minute of silence: the server is not answering.
 */
export const NO_ANSWER_MILLIS = 60_000;

/** No attempt of a request answered within NO_ANSWER_MILLIS (named as the SDK's timeouts are). */
export class NoAnswerError extends Error {
  override readonly name = 'TimeoutError';
  constructor(attempts: number, millis: number) {
    super(
      `no answer in ${millis / 1000} s to ${attempts} ${attempts === 1 ? 'request' : 'requests'} sent (the server takes the connection and says nothing)`,
    );
  }
}

/** Why an attempt was stopped: another one answered first (never seen by the caller). */
const SUPERSEDED = new Error('another attempt of the request answered first');

/**
 * Runs `attempt`, and, while no attempt has answered, the same again beside it after each of
 * `deadlines` in turn (hedged requests). The first attempt that calls `answered()` (the server's
 * answer began: a GET's headers) or settles wins, and the others are aborted: a lost request
 * costs the first deadline, and a body that has begun is never cut short. An attempt that fails
 * (an HTTP error, or the client's own connection timeouts against a server that is down) ends the
 * read with its error, as without the deadlines: the attempts beside it do not prolong it; so does
 * `noAnswerMillis` without an answer (NoAnswerError). Each attempt has its own signal, aborted
 * with the caller's `signal` (and its reason) too.
 */
export function withAnswerDeadlines<T>(
  attempt: (signal: AbortSignal, answered: () => void) => Promise<T>,
  signal: AbortSignal,
  deadlines: readonly number[] = ANSWER_DEADLINES_MILLIS,
  noAnswerMillis = NO_ANSWER_MILLIS,
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
    /** Sendings so far, for the no-answer error. */
    let sent = 0;
    const start = () => {
      if (settled || winner !== undefined || signal.aborted) return;
      sent++;
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
    timers.push(
      setTimeout(() => {
        if (settled || winner !== undefined) return;
        const error = new NoAnswerError(sent, noAnswerMillis);
        settled = true;
        signal.removeEventListener('abort', onAbort);
        stopOthers();
        reject(error);
      }, noAnswerMillis),
    );
  });
}
