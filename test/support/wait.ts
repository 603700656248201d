/**
 * Polls `condition` every `everyMillis` until it is true; throws after `timeoutMillis`, saying
 * `what` it waited for (a function: described when it fails).
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMillis: number,
  what: string | (() => string),
  everyMillis = 5,
): Promise<void> {
  const deadline = performance.now() + timeoutMillis;
  while (!(await condition())) {
    if (performance.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMillis} ms waiting for ${typeof what === 'string' ? what : what()}`,
      );
    await new Promise((resolve) => setTimeout(resolve, everyMillis));
  }
}

/** Resolves after `millis` of real time. */
export const sleep = (millis: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, millis));
