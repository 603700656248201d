import { deadlineTimer } from '../base/deadline.js';
import { alert, log } from '../base/log.js';

/**
 * What the hooks shut down: a MeterProvider, TracerProvider or LoggerProvider, or a NodeSDK
 * (which shuts its own down). Providers that take no deadline get the hooks' own.
 */
export interface ShutdownTarget {
  shutdown(options?: { timeoutMillis?: number }): Promise<void>;
}

export interface ShutdownHookOptions {
  /** Signals that start a graceful shutdown. Default `['SIGTERM', 'SIGINT']`. */
  signals?: NodeJS.Signals[];
  /**
   * Deadline for the whole shutdown (beforeShutdown, then the providers, at once). Keep it below
   * your orchestrator's grace period (Kubernetes: 30 s). Default 25000: room for the meter
   * provider's forceFlush() and shutdown() at the exporter's default flushTimeoutMillis (10 s
   * each) inside Kubernetes' default 30 s.
   */
  timeoutMillis?: number;
  /**
   * Runs first, e.g. to stop accepting requests (`server.close()`), so their metrics are flushed
   * too. It has half of `timeoutMillis`: one that has not finished by then (a `server.close()`
   * waiting on keep-alive connections) or that fails is reported, and the providers are shut down
   * all the same.
   */
  beforeShutdown?: () => Promise<void> | void;
  /** Exit the process when done (default true): code 0 if everything settled in time, 1 otherwise. */
  exit?: boolean;
}

export interface ShutdownHooks {
  /** Runs the graceful shutdown now (as a signal would); resolves to the exit code. */
  shutdown(reason?: string): Promise<number>;
  /** Removes the signal handlers. */
  uninstall(): void;
}

const DEFAULT_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
/** Two default flushTimeoutMillis (forceFlush, then shutdown) plus 5 s, under a 30 s grace period. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MILLIS = 25_000;

/**
 * Flushes telemetry on SIGTERM / SIGINT within one deadline: the meter, tracer and logger
 * providers given (or a NodeSDK) are shut down side by side, then the process may exit with a
 * code that says whether all of them finished in time. A signal during a shutdown asked for in
 * code waits for it; a second signal during the shutdown exits at once with code 1, and says so
 * (OTEL_S3_SHUTDOWN_TIMEOUT).
 */
export function installShutdownHooks(
  target: ShutdownTarget | readonly ShutdownTarget[],
  options: ShutdownHookOptions = {},
): ShutdownHooks {
  const targets: readonly ShutdownTarget[] = Array.isArray(target)
    ? target
    : [target as ShutdownTarget];
  const signals = options.signals ?? DEFAULT_SIGNALS;
  const timeoutMillis = options.timeoutMillis ?? DEFAULT_SHUTDOWN_TIMEOUT_MILLIS;
  if (!Number.isInteger(timeoutMillis) || timeoutMillis < 1 || timeoutMillis > 2 ** 31 - 1) {
    throw new TypeError(
      `otel-s3-exporter: invalid option timeoutMillis: ${timeoutMillis} (expected an integer of milliseconds from 1 to 2147483647)`,
    );
  }
  const exit = options.exit ?? true;
  let running: Promise<number> | undefined;
  /** The exit code of the shutdown, once it has finished. */
  let finished: number | undefined;
  /** A signal has started the shutdown or joined it: the next one cuts it short. */
  let signalled = false;
  /** A second signal has cut the shutdown short: the process is about to exit. */
  let cutShort = false;

  const run = async (reason: string): Promise<number> => {
    log.info(`${reason}: shutting down (deadline ${timeoutMillis} ms)`);
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = deadlineTimer(() => resolve('timeout'), timeoutMillis);
    });
    const work = (async () => {
      const hook =
        options.beforeShutdown === undefined
          ? 'done'
          : await before(options.beforeShutdown, Math.floor(timeoutMillis / 2));
      const left = Math.max(1, timeoutMillis - (Date.now() - started));
      const given = performance.now();
      // Side by side: the deadline is the whole shutdown's, not each provider's.
      await Promise.all(
        targets.map((t) =>
          t.shutdown({ timeoutMillis: left }).catch((error: unknown) => {
            // The SDK's providers reject ("Operation timed out.") once the time they were given
            // has run out: that is this deadline missed, reported as such when it passes.
            if (performance.now() - given >= left - 1) return new Promise<never>(() => {});
            throw error;
          }),
        ),
      );
      return hook;
    })();
    let code: number;
    try {
      const outcome = await Promise.race([work, deadline]);
      code = outcome === 'done' ? 0 : 1;
      if (outcome === 'timeout')
        alert(
          'error',
          'OTEL_S3_SHUTDOWN_TIMEOUT',
          `shutdown did not finish within ${timeoutMillis} ms${
            exit && signalled
              ? // The exporters' own reports said their batches keep retrying: not past the exit.
                ": exiting with code 1, and what was not stored yet is lost, but for what a spool holds (keep the exporters' flushTimeoutMillis at most (timeoutMillis - 5 s) / 2)"
              : "; it goes on in the background, within the exporters' own deadlines"
          }`,
        );
    } catch (error) {
      alert(
        'error',
        'OTEL_S3_SHUTDOWN_TIMEOUT',
        `shutdown failed: ${(error as Error)?.message ?? String(error)}`,
      );
      code = 1;
    } finally {
      clearTimeout(timer);
    }
    log.info(`shutdown finished in ${Date.now() - started} ms with exit code ${code}`);
    finished = code;
    return code;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (finished !== undefined) {
      // Shut down already (asked for in code): nothing is cut short, its exit code stands.
      log.info(`${signal} after shutdown finished: exiting with code ${finished}`);
      if (exit) process.exit(finished);
      return;
    }
    if (running !== undefined && !signalled) {
      // The first signal during a shutdown asked for in code: it is what the signal asks for.
      signalled = true;
      log.info(`${signal} during shutdown: exiting once it has finished`);
      void running.then((code) => {
        if (exit) setImmediate(() => process.exit(code));
      });
      return;
    }
    if (cutShort) return; // a third signal before the exit: said and decided already
    if (running !== undefined) {
      cutShort = true;
      // What the providers had not stored yet is lost with the process: say so, visible without
      // a logger, and exit one turn of the event loop later, once the warning is on stderr.
      alert(
        'error',
        'OTEL_S3_SHUTDOWN_TIMEOUT',
        `${signal} again during the shutdown: exiting now with code 1, without waiting for the telemetry still being flushed (what was not stored yet is lost, but for what a spool holds)`,
      );
      if (exit) setImmediate(() => process.exit(1));
      return;
    }
    signalled = true;
    running = run(signal);
    void running.then((code) => {
      // One turn of the event loop first: process warnings (alerts) are printed on the next tick,
      // and a shutdown that ends in microtasks would otherwise exit before they reach stderr.
      if (exit) setImmediate(() => process.exit(code));
    });
  };

  for (const signal of signals) process.on(signal, onSignal);
  return {
    shutdown: (reason = 'shutdown requested') => {
      running ??= run(reason);
      return running;
    },
    uninstall: () => {
      for (const signal of signals) process.off(signal, onSignal);
    },
  };
}

/**
 * Runs `hook` for at most `millis`: 'done', or 'late' (it failed, or it had not finished; it
 * goes on unwatched), reported either way. The providers are shut down after it regardless: a
 * hook that never ends (a server closing under keep-alive traffic) must not keep the telemetry
 * from being flushed, counted and reported.
 */
async function before(hook: () => Promise<void> | void, millis: number): Promise<'done' | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const running = Promise.resolve().then(hook);
  const outcome = await Promise.race([
    running.then(
      () => 'done' as const,
      (error: unknown) => error,
    ),
    new Promise<'timeout'>((resolve) => {
      timer = deadlineTimer(() => resolve('timeout'), millis);
    }),
  ]);
  clearTimeout(timer);
  if (outcome === 'done') return 'done';
  if (outcome === 'timeout') {
    alert(
      'error',
      'OTEL_S3_SHUTDOWN_TIMEOUT',
      `beforeShutdown did not finish within ${millis} ms (half the shutdown deadline): shutting the providers down without waiting for it`,
    );
  } else {
    alert(
      'error',
      'OTEL_S3_SHUTDOWN_TIMEOUT',
      `beforeShutdown failed: ${(outcome as Error)?.message ?? String(outcome)}; shutting the providers down`,
    );
  }
  return 'late';
}
