import { diag } from '@opentelemetry/api';

const PREFIX = 'otel-s3-exporter:';

/** All log lines go through OpenTelemetry's diag logger. */
export const log = {
  debug: (message: string) => diag.debug(`${PREFIX} ${message}`),
  info: (message: string) => diag.info(`${PREFIX} ${message}`),
  warn: (message: string) => diag.warn(`${PREFIX} ${message}`),
  error: (message: string) => diag.error(`${PREFIX} ${message}`),
};

/**
 * Reports a condition once per episode: the first occurrence logs, repeats are silent until
 * the condition is cleared (then the next occurrence logs again, with a recovery line between).
 */
export class Episodes {
  readonly #open = new Map<string, number>();

  /** Logs `message` if `key` is not already open; counts repeats either way. */
  report(key: string, level: 'warn' | 'error', message: string): void {
    const seen = this.#open.get(key);
    this.#open.set(key, (seen ?? 0) + 1);
    if (seen === undefined) log[level](message);
  }

  /** Closes the episode of `key`, logging `message` if it was open. */
  clear(key: string, message?: (repeats: number) => string): void {
    const seen = this.#open.get(key);
    if (seen === undefined) return;
    this.#open.delete(key);
    if (message !== undefined) log.info(message(seen));
  }

  /** Closes every open episode whose key starts with `prefix`. */
  clearMatching(prefix: string, message?: (key: string) => string): void {
    for (const key of [...this.#open.keys()]) {
      if (!key.startsWith(prefix)) continue;
      this.#open.delete(key);
      if (message !== undefined) log.info(message(key));
    }
  }

  isOpen(key: string): boolean {
    return this.#open.has(key);
  }
}

/** `1 batch`, `2 batches`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
