import { log } from '../base/log.js';

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
  /** Runs first, e.g. to stop accepting requests (`server.close()`), so their metrics are flushed too. */
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
 * code that says whether all of them finished in time. A second signal during the shutdown
 * exits at once with code 1.
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

  const run = async (reason: string): Promise<number> => {
    log.info(`${reason}: shutting down (deadline ${timeoutMillis} ms)`);
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMillis);
    });
    const work = (async () => {
      await options.beforeShutdown?.();
      const left = Math.max(1, timeoutMillis - (Date.now() - started));
      // Side by side: the deadline is the whole shutdown's, not each provider's.
      await Promise.all(targets.map((t) => t.shutdown({ timeoutMillis: left })));
      return 'done' as const;
    })();
    let code: number;
    try {
      const outcome = await Promise.race([work, deadline]);
      code = outcome === 'done' ? 0 : 1;
      if (outcome === 'timeout') log.error(`shutdown did not finish within ${timeoutMillis} ms`);
    } catch (error) {
      log.error(`shutdown failed: ${(error as Error)?.message ?? String(error)}`);
      code = 1;
    } finally {
      clearTimeout(timer);
    }
    log.info(`shutdown finished in ${Date.now() - started} ms with exit code ${code}`);
    return code;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (running !== undefined) {
      log.warn(`${signal} again during shutdown: exiting now`);
      if (exit) process.exit(1);
      return;
    }
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
