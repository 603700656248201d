import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, onTestFinished, test, vi } from 'vitest';
import { installShutdownHooks, type ShutdownTarget } from '../../../src/exporter/shutdown-hooks.js';
import { waitFor } from '../../support/wait.js';

function target(behaviour: 'ok' | 'hang' | 'fail', calls: string[]): ShutdownTarget {
  return {
    shutdown: async (options) => {
      calls.push(`shutdown(${options?.timeoutMillis !== undefined ? 'timeout' : 'none'})`);
      if (behaviour === 'hang') await new Promise(() => {});
      if (behaviour === 'fail') throw new Error('boom');
    },
  };
}

describe('installShutdownHooks', () => {
  test('a signal runs beforeShutdown, then the provider shutdown with the time left; exit code 0', async () => {
    const calls: string[] = [];
    const hooks = installShutdownHooks(target('ok', calls), {
      signals: ['SIGUSR2'],
      exit: false,
      beforeShutdown: async () => {
        calls.push('beforeShutdown');
      },
    });
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      // The signal alone runs the sequence (nothing else is called here).
      await waitFor(() => calls.length === 2, 2_000, 'the sequence started by the signal');
      expect(calls).toEqual(['beforeShutdown', 'shutdown(timeout)']);
      // Asking again joins the same run: exit code 0, nothing runs twice.
      expect(await hooks.shutdown()).toBe(0);
      expect(calls).toHaveLength(2);
    } finally {
      hooks.uninstall();
    }
  });

  test('a signal after a shutdown asked for in code has finished exits with its code, not 1', async () => {
    const exits: (number | string | null | undefined)[] = [];
    vi.spyOn(process, 'exit').mockImplementation((code) => {
      exits.push(code);
      return undefined as never;
    });
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const hooks = installShutdownHooks(target('ok', []), { signals: ['SIGUSR2'] });
    try {
      expect(await hooks.shutdown()).toBe(0);
      process.emit('SIGUSR2', 'SIGUSR2');
      await new Promise((resolve) => setImmediate(resolve));
      expect(exits).toEqual([0]);
    } finally {
      hooks.uninstall();
    }
  });

  test('a first signal during a shutdown asked for in code waits for it and exits with its code', async () => {
    const exits: (number | string | null | undefined)[] = [];
    vi.spyOn(process, 'exit').mockImplementation((code) => {
      exits.push(code);
      return undefined as never;
    });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const releases: (() => void)[] = [];
    const hooks = installShutdownHooks(
      { shutdown: () => new Promise<void>((resolve) => releases.push(resolve)) },
      { signals: ['SIGUSR2'] },
    );
    onTestFinished(() => {
      hooks.uninstall();
      for (const release of releases) release();
      process.off('warning', onWarning);
      vi.restoreAllMocks();
    });
    const inCode = hooks.shutdown('fatal error');
    // The orchestrator's SIGTERM, the first signal, while the service shuts itself down.
    process.emit('SIGUSR2', 'SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(exits).toEqual([]);
    expect(warnings).toEqual([]);
    releases[0]?.();
    expect(await inCode).toBe(0);
    await waitFor(() => exits.length > 0, 1_000, 'the exit');
    expect(exits).toEqual([0]);
    expect(releases).toHaveLength(1);
  });

  test('a second signal during the shutdown exits 1, and says so once without a logger before it exits', async () => {
    const events: string[] = [];
    vi.spyOn(process, 'exit').mockImplementation((code) => {
      events.push(`exit ${code}`);
      return undefined as never;
    });
    const onWarning = (w: Error & { code?: string }) => events.push(`${w.code}: ${w.message}`);
    process.on('warning', onWarning);
    let release = () => {};
    const hooks = installShutdownHooks(
      { shutdown: () => new Promise<void>((resolve) => (release = resolve)) },
      { signals: ['SIGUSR2'] },
    );
    onTestFinished(async () => {
      hooks.uninstall();
      // The first signal's run ends too (exit code 0), while process.exit is still a stub.
      release();
      await waitFor(() => events.includes('exit 0'), 1_000, 'the first run to end');
      process.off('warning', onWarning);
      vi.restoreAllMocks();
    });
    process.emit('SIGUSR2', 'SIGUSR2');
    process.emit('SIGUSR2', 'SIGUSR2');
    // A third before the exit (signals that come together, in one turn of the event loop).
    process.emit('SIGUSR2', 'SIGUSR2');
    await waitFor(() => events.some((e) => e.startsWith('exit')), 1_000, 'the exit');
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The shutdown was cut short: what it had not stored yet is lost, and stderr must say so,
    // once, before the process is gone (a warning is printed a tick after it is emitted).
    expect(events).toHaveLength(2);
    expect(events[0]).toMatch(
      /^OTEL_S3_SHUTDOWN_TIMEOUT: .*SIGUSR2 again during the shutdown: exiting now with code 1, without waiting for the telemetry still being flushed/,
    );
    expect(events[1]).toBe('exit 1');
  });

  test('the provider gets the deadline minus the time beforeShutdown took', async () => {
    const total = 2_000;
    const before = 600;
    let given: number | undefined;
    let took = 0;
    const hooks = installShutdownHooks(
      {
        shutdown: async (options) => {
          given = options?.timeoutMillis;
        },
      },
      {
        signals: [],
        exit: false,
        timeoutMillis: total,
        beforeShutdown: async () => {
          const started = performance.now();
          await new Promise((resolve) => setTimeout(resolve, before));
          took = performance.now() - started;
        },
      },
    );
    expect(await hooks.shutdown()).toBe(0);
    expect(took).toBeGreaterThanOrEqual(before - 1);
    // About the total minus what beforeShutdown took: never more (1 ms of clock rounding), and
    // less only by the little time around it (slack for a loaded machine).
    expect(given).toBeLessThanOrEqual(total - before + 1);
    expect(given).toBeGreaterThanOrEqual(total - took - 200);
  });

  test('a shutdown that hangs ends at the deadline with exit code 1', async () => {
    const hooks = installShutdownHooks(target('hang', []), {
      signals: [],
      exit: false,
      timeoutMillis: 200,
    });
    const started = performance.now();
    expect(await hooks.shutdown()).toBe(1);
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(200 + 500);
  });

  test('a missed deadline says what becomes of the telemetry not yet stored: lost at the exit, or still being flushed when nothing exits', async () => {
    const exits: (number | string | null | undefined)[] = [];
    vi.spyOn(process, 'exit').mockImplementation((code) => {
      exits.push(code);
      return undefined as never;
    });
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(`${w.code}: ${w.message}`);
    process.on('warning', onWarning);
    const exiting = installShutdownHooks(target('hang', []), {
      signals: ['SIGUSR2'],
      timeoutMillis: 230,
    });
    const staying = installShutdownHooks(target('hang', []), {
      signals: [],
      exit: false,
      timeoutMillis: 170,
    });
    // exit: true, but asked for in code with no signal: the hooks do not exit the process then.
    const inCode = installShutdownHooks(target('hang', []), { signals: [], timeoutMillis: 190 });
    onTestFinished(() => {
      exiting.uninstall();
      process.off('warning', onWarning);
      vi.restoreAllMocks();
    });
    process.emit('SIGUSR2', 'SIGUSR2');
    expect(await Promise.all([staying.shutdown(), inCode.shutdown()])).toEqual([1, 1]);
    await waitFor(() => exits.length > 0, 2_000, 'the exit');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(exits).toEqual([1]);
    // (Another test's warning may come in late: only these hooks' deadlines count.)
    expect(warnings.filter((w) => / within (170|190|230) ms/.test(w))).toEqual([
      "OTEL_S3_SHUTDOWN_TIMEOUT: otel-s3-exporter: shutdown did not finish within 170 ms; it goes on in the background, within the exporters' own deadlines",
      "OTEL_S3_SHUTDOWN_TIMEOUT: otel-s3-exporter: shutdown did not finish within 190 ms; it goes on in the background, within the exporters' own deadlines",
      "OTEL_S3_SHUTDOWN_TIMEOUT: otel-s3-exporter: shutdown did not finish within 230 ms: exiting with code 1, and what was not stored yet is lost, but for what a spool holds (keep the exporters' flushTimeoutMillis at most (timeoutMillis - 5 s) / 2)",
    ]);
  });

  test('a MeterProvider that gives up at the time it was given is a missed deadline, not a failure', async () => {
    // The SDK's MeterProvider rejects with its TimeoutError ("Operation timed out.") when the
    // timeoutMillis it was handed runs out: that is the hooks' own deadline, missed.
    const stuck: PushMetricExporter = {
      export: () => {},
      forceFlush: () => new Promise<void>(() => {}),
      shutdown: () => new Promise<void>(() => {}),
    };
    const provider = new MeterProvider({
      readers: [
        new PeriodicExportingMetricReader({ exporter: stuck, exportIntervalMillis: 60_000 }),
      ],
    });
    provider.getMeter('m').createCounter('c').add(1);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    onTestFinished(() => {
      process.off('warning', onWarning);
    });
    const hooks = installShutdownHooks(provider, { signals: [], exit: false, timeoutMillis: 260 });
    expect(await hooks.shutdown()).toBe(1);
    await waitFor(
      () => warnings.some((w) => /260 ms|Operation timed out/.test(w)),
      1_000,
      'the warning',
    );
    expect(warnings.filter((w) => /260 ms|Operation timed out/.test(w))).toEqual([
      "otel-s3-exporter: shutdown did not finish within 260 ms; it goes on in the background, within the exporters' own deadlines",
    ]);
  });

  test('several providers are shut down side by side within the one deadline', async () => {
    const calls: string[] = [];
    const started = performance.now();
    const hooks = installShutdownHooks(
      [target('ok', calls), target('hang', calls), target('ok', calls)],
      { signals: [], timeoutMillis: 200, exit: false },
    );
    expect(await hooks.shutdown()).toBe(1); // one of them hung
    expect(performance.now() - started).toBeLessThan(200 + 150);
    // All three were asked at once, each with the deadline.
    expect(calls).toEqual(['shutdown(timeout)', 'shutdown(timeout)', 'shutdown(timeout)']);
    const ok = installShutdownHooks([target('ok', []), target('ok', [])], {
      signals: [],
      exit: false,
    });
    expect(await ok.shutdown()).toBe(0);
  });

  for (const hook of ['never ends', 'fails'] as const) {
    test(`a beforeShutdown that ${hook}: the providers are shut down all the same (within half the deadline), it is said without a logger, exit code 1`, async () => {
      const calls: string[] = [];
      const warnings: Error[] = [];
      const onWarning = (w: Error) => warnings.push(w);
      process.on('warning', onWarning);
      const hooks = installShutdownHooks(target('ok', calls), {
        signals: [],
        exit: false,
        timeoutMillis: 400,
        beforeShutdown: () =>
          hook === 'fails' ? Promise.reject(new Error('close failed')) : new Promise(() => {}),
      });
      try {
        const started = performance.now();
        expect(await hooks.shutdown()).toBe(1);
        // Before: the providers were never asked, and the deadline was the only thing said (diag).
        expect(calls).toEqual(['shutdown(timeout)']);
        expect(performance.now() - started).toBeLessThan(hook === 'fails' ? 150 : 200 + 150);
        const said = () => warnings.find((w) => String(w).includes('beforeShutdown'));
        await waitFor(() => said() !== undefined, 1_000, 'the warning');
        expect(String(said())).toMatch(
          hook === 'fails'
            ? /beforeShutdown failed: close failed; shutting the providers down/
            : /beforeShutdown did not finish within 200 ms/,
        );
        expect((said() as { code?: string }).code).toBe('OTEL_S3_SHUTDOWN_TIMEOUT');
      } finally {
        process.off('warning', onWarning);
      }
    });
  }

  test('a shutdown that fails gives exit code 1', async () => {
    const hooks = installShutdownHooks(target('fail', []), { signals: [], exit: false });
    expect(await hooks.shutdown()).toBe(1);
  });

  test('the sequence runs once however often it is asked for', async () => {
    const calls: string[] = [];
    const hooks = installShutdownHooks(target('ok', calls), { signals: [], exit: false });
    const [a, b] = await Promise.all([hooks.shutdown(), hooks.shutdown()]);
    expect([a, b]).toEqual([0, 0]);
    expect(calls).toHaveLength(1);
  });

  test('uninstall removes the signal handlers', () => {
    const before = process.listenerCount('SIGUSR2');
    const hooks = installShutdownHooks(target('ok', []), { signals: ['SIGUSR2'], exit: false });
    expect(process.listenerCount('SIGUSR2')).toBe(before + 1);
    hooks.uninstall();
    expect(process.listenerCount('SIGUSR2')).toBe(before);
  });

  test('a bad timeoutMillis is rejected with the option, the value and what is allowed', () => {
    expect(() => installShutdownHooks(target('ok', []), { timeoutMillis: -5 })).toThrow(
      /invalid option timeoutMillis: -5 \(expected an integer of milliseconds from 1 to 2147483647\)/,
    );
  });
});
