/**
 * Waits for `work` at most `millis`. Resolves true if it settled in time, false otherwise.
 * The timer is cleared as soon as either side wins, so nothing outlives the wait.
 */
export function settleWithin(work: Promise<unknown>, millis: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), millis);
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
