/** Caps a server's Retry-After so a bogus value cannot park a batch for hours. */
export const MAX_RETRY_AFTER_MILLIS = 10 * 60_000;

export interface BackoffPolicy {
  initialDelayMillis: number;
  maxDelayMillis: number;
}

/**
 * Exponential backoff with full jitter: the wait before retry `attempt` (1 = first retry) is
 * uniform in [0, min(max, initial * 2^(attempt-1))]. Full jitter spreads the retries of many
 * exporters that failed together. A server's Retry-After is a floor.
 */
export function retryDelay(
  attempt: number,
  policy: BackoffPolicy,
  retryAfterMillis?: number,
  random: () => number = Math.random,
): number {
  const bound = Math.min(
    policy.maxDelayMillis,
    policy.initialDelayMillis * 2 ** Math.max(0, attempt - 1),
  );
  const jittered = Math.floor(random() * bound);
  if (retryAfterMillis === undefined) return jittered;
  return Math.max(jittered, Math.min(retryAfterMillis, MAX_RETRY_AFTER_MILLIS));
}

/** Configuration faults (403, missing bucket) are retried slowly: about once per max delay. */
export function slowRetryDelay(policy: BackoffPolicy, random: () => number = Math.random): number {
  return Math.floor(policy.maxDelayMillis * (0.5 + random() / 2));
}

/** IMF-fixdate, the HTTP date form servers send (RFC 9110 5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`. */
const HTTP_DATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * Parses Retry-After: delay-seconds or an HTTP date. Anything else is ignored (undefined):
 * Date.parse alone would read garbage such as "retry in 2099" as a date.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = parseHttpDate(trimmed);
  return date === undefined ? undefined : Math.max(0, date - now);
}

/** An IMF-fixdate (a Retry-After, a response's Date) as epoch milliseconds, else undefined. */
export function parseHttpDate(value: string | undefined): number | undefined {
  const trimmed = value?.trim();
  if (trimmed === undefined || !HTTP_DATE.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : date;
}
