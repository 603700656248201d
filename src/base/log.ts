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
 * Conditions an operator must hear about even when nobody set up logging: configuration faults
 * and data loss. Each is a process warning code (`process.on('warning')` sees `warning.code`).
 */
export type AlertCode =
  | 'OTEL_S3_INVALID_ENV'
  | 'OTEL_S3_NO_SUCH_BUCKET'
  | 'OTEL_S3_ACCESS_DENIED'
  | 'OTEL_S3_ACCOUNT_DISABLED'
  | 'OTEL_S3_BAD_CREDENTIALS'
  | 'OTEL_S3_NO_CREDENTIALS'
  | 'OTEL_S3_WRONG_REGION'
  | 'OTEL_S3_INVALID_BUCKET'
  | 'OTEL_S3_KMS_KEY'
  | 'OTEL_S3_QUOTA_EXCEEDED'
  | 'OTEL_S3_NO_ENDPOINT'
  | 'OTEL_S3_NO_TLS'
  | 'OTEL_S3_NEEDS_TLS'
  | 'OTEL_S3_NOT_S3'
  | 'OTEL_S3_UPLOADS_REFUSED'
  | 'OTEL_S3_ENDPOINT_UNREACHABLE'
  | 'OTEL_S3_FLUSH_TIMEOUT'
  | 'OTEL_S3_SHUTDOWN_TIMEOUT'
  | 'OTEL_S3_DATA_DROPPED'
  | 'OTEL_S3_SPOOL_WRITE_FAILED'
  | 'OTEL_S3_SPOOL_FULL'
  | 'OTEL_S3_SPOOL_LOCK_LOST'
  | 'OTEL_S3_SPOOL_FOREIGN_FILE'
  | 'OTEL_S3_SPOOL_WAITING';

/** The warning type of every alert, for filtering (`warning.name`). */
const ALERT_TYPE = 'OtelS3ExporterWarning';

const API_GLOBAL = Symbol.for('opentelemetry.js.api.1');

/**
 * True when someone registered a diag logger: diag.setLogger() stores it in the API's global
 * registry (the key is the API's own, stable across its 1.x line). If that ever changes, this
 * answers false and alerts go to stderr too: the visible side.
 */
function diagLoggerRegistered(): boolean {
  const api = (globalThis as Record<symbol, { diag?: unknown } | undefined>)[API_GLOBAL];
  return api?.diag !== undefined;
}

/** OTEL_LOG_LEVEL, the SDK's own verbosity switch, decides which alerts reach stderr. */
function allowedByLogLevel(level: 'warn' | 'error'): boolean {
  const setting = (process.env.OTEL_LOG_LEVEL ?? '').trim().toUpperCase();
  if (setting === 'NONE') return false;
  if (setting === 'ERROR') return level === 'error';
  return true;
}

/**
 * Logs through diag and, when no diag logger is registered, also emits a process warning
 * (printed on stderr by Node unless the process runs with --no-warnings). OTEL_LOG_LEVEL=NONE
 * silences the warnings; ERROR keeps only errors.
 */
export function alert(level: 'warn' | 'error', code: AlertCode, message: string): void {
  log[level](message);
  if (diagLoggerRegistered() || !allowedByLogLevel(level)) return;
  process.emitWarning(`${PREFIX} ${message}`, { type: ALERT_TYPE, code });
}

/**
 * Resolves once the process warnings emitted so far are out: Node prints them one tick after
 * process.emitWarning(). A flush or shutdown awaits it last, so that a caller's `await
 * exporter.shutdown(); process.exit()` still prints what it reported.
 */
export function alertsEmitted(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}

/**
 * Reports a condition once per episode: the first occurrence logs, repeats are silent until
 * the condition is cleared (then the next occurrence logs again, with a recovery line between).
 * With a code, the first occurrence is an alert (see alert()).
 */
export class Episodes {
  readonly #open = new Map<string, number>();
  /** Who still meets an open condition, where several share it (the exporters of one group). */
  readonly #holders = new Map<string, Set<object>>();

  /**
   * Logs `message` if `key` is not already open; counts repeats either way. A `holder` (one
   * exporter) meets the condition until its clearMatching: another's cannot end the episode.
   */
  report(
    key: string,
    level: 'warn' | 'error',
    message: string,
    code?: AlertCode,
    holder?: object,
  ): void {
    if (holder !== undefined) {
      const holders = this.#holders.get(key) ?? new Set<object>();
      holders.add(holder);
      this.#holders.set(key, holders);
    }
    const seen = this.#open.get(key);
    this.#open.set(key, (seen ?? 0) + 1);
    if (seen !== undefined) return;
    if (code === undefined) log[level](message);
    else alert(level, code, message);
  }

  /** Closes the episode of `key`, logging `message` if it was open. */
  clear(key: string, message?: (repeats: number) => string): void {
    const seen = this.#open.get(key);
    if (seen === undefined) return;
    this.#open.delete(key);
    this.#holders.delete(key);
    if (message !== undefined) log.info(message(seen));
  }

  /**
   * Closes every open episode whose key starts with `prefix`, but one another holder still meets
   * (`holder` no longer does).
   */
  clearMatching(prefix: string, message?: (key: string) => string, holder?: object): void {
    for (const key of [...this.#open.keys()]) {
      if (!key.startsWith(prefix)) continue;
      const holders = this.#holders.get(key);
      if (holder !== undefined) holders?.delete(holder);
      if (holders !== undefined && holders.size > 0) continue;
      this.#holders.delete(key);
      this.#open.delete(key);
      if (message !== undefined) log.info(message(key));
    }
  }

  /** `holder` is gone (its exporter shut down): it holds no episode open any more. */
  release(holder: object): void {
    for (const holders of this.#holders.values()) holders.delete(holder);
  }
}

/**
 * `1 batch`, `2 batches`, `1,024 bytes`. Integers are grouped by hand: the first
 * toLocaleString() of a process loads ICU's data (tens to hundreds of milliseconds on the main
 * thread), and these messages are made when a forceFlush()/shutdown() deadline passes.
 */
export function plural(n: number, one: string, many = `${one}s`): string {
  const digits = Number.isSafeInteger(n)
    ? String(n).replace(/\B(?=(\d{3})+$)/g, ',')
    : n.toLocaleString('en-US');
  return `${digits} ${n === 1 ? one : many}`;
}
