// Before each unit file (vitest.config.ts: setupFiles). The unit files share their worker
// (isolate: false), so the packages they import load once per worker; the package's own modules
// and the test helpers are evaluated afresh here for every file, so that no state of one file's
// modules (counters, once-only warnings, caches) reaches the next. The environment variables are
// put back as the worker started with them: a file that set one and restored it badly (a
// `process.env.X = saved` with saved undefined stores the text "undefined") must not change the
// next file's temporary directory or time zone.
import { vi } from 'vitest';

vi.resetModules();

const KEY = Symbol.for('otel-s3-exporter.test.environment');
const holder = globalThis as { [KEY]?: Record<string, string | undefined> };
holder[KEY] ??= { ...process.env };
const started = holder[KEY];
// Vitest's own variables (VITEST_WORKER_ID, ...) are set for each file: left as they are.
const ours = (name: string) => !name.startsWith('VITEST');
for (const name of Object.keys(process.env)) {
  if (ours(name) && !(name in started)) delete process.env[name];
}
for (const [name, value] of Object.entries(started)) {
  if (ours(name) && process.env[name] !== value) process.env[name] = value;
}
